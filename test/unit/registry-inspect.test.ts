/**
 * `rask registry inspect` (issue #30, item 1): every intermediate state a door can leave, built
 * by stopping the registry's store after each of the door's writes in turn (crashAfterWrites,
 * the crash points of test/unit/table-listing-after-crash.test.ts), is named by the inspection
 * of the object, with the repair the next reader makes. Read off the store itself, not off
 * inspect's output: every object naming the id (records, marks, markers, trash, and location
 * claims found by a full listing, including those whose record is gone) must be shown with a
 * finding, and each unsettled one (a table not `active`, a namespace `dropping`, a mark, a claim no
 * record holds, a leftover marker, a withdrawal note, a trash record of a live table) must have a
 * finding of its state with a repair. Memory, filesystem and S3-fake registries.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../functions/cli.js';
import { TableAlreadyExistsError } from '../../lib/errors.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { inspect } from '../../lib/maintenance/registry/inspect.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { crashAfterWrites, SimulatedCrash } from '../support/jittery-store.js';
import { historied, type HistoriedFixture } from '../support/historied.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

const over = (s: CatalogServices, store: CatalogServices['registry']['store']): CatalogServices => ({ ...s, registry: new Registry(store) });

let f: ServicesFixture | HistoriedFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

type Door = (s: CatalogServices) => Promise<unknown>;
const DOORS: Record<string, { door: Door; ids: string[][]; graceDays?: number; unmanaged?: boolean; mustSee?: string[] }> = {
  'rename within a namespace': { door: (s) => renameTable(s, { id: ['a', 't'], newName: 'dest' }), ids: [['a', 't'], ['a', 'dest']] },
  'rename across namespaces': { door: (s) => renameTable(s, { id: ['a', 't'], newName: 'dest', newNamespace: ['b'] }), ids: [['a', 't'], ['b', 'dest']] },
  'cascade drop namespace': { door: (s) => dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' }), ids: [['a'], ['a', 't'], ['a', 'z']] },
  // A drop with data and no grace: record removed, claim `purging`, bytes deleted, claim released, marker removed.
  'drop table (purge)': { door: (s) => dropTable(s, ['a', 't']), ids: [['a', 't']], mustSee: ['stale-claim', 'purging'] },
  // A drop to trash: trash record, claim `trashed`, record removed, marker removed.
  'drop table to trash': { door: (s) => dropTable(s, ['a', 't']), ids: [['a', 't']], graceDays: 3, mustSee: ['unfinished-drop'] },
  // A declare of a new name without managed versioning: its `maybe` marker, then claim and record together.
  'declare table': { door: (s) => declareTable(s, { id: ['b', 'n'], properties: {}, identity: {} }), ids: [['b', 'n']], unmanaged: true, mustSee: ['leftover-marker'] },
  // A declare at a taken name: its claim lands, the record is refused (5), the claim is taken back.
  'declare table at a taken name': {
    door: (s) =>
      declareTable(s, { id: ['a', 'z'], properties: {}, identity: {} }).catch((err: unknown) => {
        if (!(err instanceof TableAlreadyExistsError)) throw err;
      }),
    ids: [['a', 'z']],
    mustSee: ['stale-claim'],
  },
};

const json = async (s: CatalogServices, key: string) => {
  const got = await s.registry.store.get(key);
  return got ? (JSON.parse(got.body.toString()) as Record<string, unknown>) : undefined;
};

/**
 * Every registry object that names `id`, read straight from the store (not through inspect):
 * its records, marks and markers by key, its trash by prefix, and every location claim of the
 * project whose body lists the id (a claim is keyed by location, so only a full listing finds
 * one whose record is gone). Each with whether it is unsettled: what a crash left half-done.
 */
async function objectsNaming(s: CatalogServices, id: string[]): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  const project = s.project;
  const tableAt = async (at: readonly string[]) => (await json(s, keys.table(project, at))) as { uid?: string; path?: string; state?: string } | undefined;
  const here = await tableAt(id);
  const ns = await json(s, keys.namespace(project, id));
  if (ns) out.set(keys.namespace(project, id), ns.state === 'dropping');
  if (here) out.set(keys.table(project, id), (here.state ?? 'active') !== 'active');
  for (const key of [keys.tableRenameMark(project, id), keys.namespaceDropMark(project, id)]) if (await s.registry.store.head(key)) out.set(key, true);
  for (const kind of ['data', 'maybe'] as const) {
    const m = await json(s, keys.dataMarker(project, kind, id));
    if (m) out.set(keys.dataMarker(project, kind, id), m.uid !== here?.uid);
  }
  for (const o of (await s.registry.store.list({ prefix: keys.trashOf(project, id) })).objects) {
    const t = (await json(s, o.key)) as { withdrawn?: boolean; table: { uid: string } };
    out.set(o.key, t.withdrawn === true || t.table.uid === here?.uid);
  }
  for (const o of (await s.registry.store.list({ prefix: keys.locationClaimsPrefix(project) })).objects) {
    const c = (await json(s, o.key)) as { uid: string; path: string; state: string; ids: string[][] } | undefined;
    if (!c?.ids.some((x) => x.join('\u0000') === id.join('\u0000'))) continue;
    let live = false;
    for (const at of c.ids) {
      const t = await tableAt(at);
      if (t?.uid === c.uid && t.path === c.path) live = true;
    }
    const trashed = c.state === 'trashed' && !live;
    out.set(o.key, !(live && c.state === 'held') && !trashed);
  }
  return out;
}

describe.each(['memory', 'fs', 's3'] as const)('%s registry: inspect after a crash at each write of a door', (kind) => {
  it.each(Object.keys(DOORS))('%s: every object naming the id is found, every intermediate state named with its repair', async (name) => {
    const { door, ids, graceDays, unmanaged, mustSee = [] } = DOORS[name]!;
    let completed = false;
    const seen = new Set<string>();
    for (let n = 1; n < 40 && !completed; n++) {
      f = kind === 's3' ? await historied('s3') : await servicesOver(kind);
      const s = f.services;
      const store = await warehouseStore(s);
      if (graceDays !== undefined || unmanaged) {
        const w = (await s.registry.read<WarehouseRecord>(keys.warehouse(s.project, s.defaultWarehouse)))!;
        const next = { ...w.value, ...(graceDays !== undefined ? { trashGraceDays: graceDays } : {}), ...(unmanaged ? { managedVersioning: false } : {}) };
        await s.registry.replace(keys.warehouse(s.project, s.defaultWarehouse), next, w.etag);
      }
      for (const ns of [['a'], ['b']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
      for (const t of ['t', 'z']) await declareTable(s, { id: ['a', t], properties: {}, identity: {} });
      await writeFakeDataset(store, (await readTable(s, ['a', 't']))!.value.path);
      const crashing = crashAfterWrites(s.registry.store, n);
      try {
        await door(over(s, crashing.store));
        completed = !crashing.crashed();
      } catch (err) {
        if (!(err instanceof SimulatedCrash)) throw err;
      }
      // What was sent beside the crashing call lands before the store is read.
      await crashing.settled();
      for (const id of ids) {
        const naming = await objectsNaming(s, id);
        const report = await inspect(s.registry.store, s.project, id);
        const at = `${name}, crash at write ${n}: ${id.join('.')}`;
        for (const [key, unsettled] of naming) {
          expect(report.records.map((r) => r.key), `${at}: ${key} is not shown`).toContain(key);
          const finding = report.findings.find((x) => x.key === key);
          expect(finding, `${at}: no finding for ${key}; findings ${JSON.stringify(report.findings)}`).toBeDefined();
          if (!unsettled) continue;
          seen.add(finding!.state);
          expect(finding!.state, `${at}: ${key} is unsettled`).not.toMatch(/^(active|held)$/);
          expect(finding!.repair, `${at}: the repair of ${finding!.state} (${key})`).toMatch(/\w{3,}/);
        }
        // Every record inspect shows is a key the store holds under that etag.
        for (const r of report.records) expect((await s.registry.store.head(r.key))?.etag).toBe(r.etag);
      }
      await f.cleanup();
      f = undefined;
    }
    expect(completed, `${name} never completed`).toBe(true);
    // The doors do leave intermediate states, so the loop above checked something.
    expect(seen.size, `${name}: states met ${[...seen]}`).toBeGreaterThan(0);
    // Claims whose record is gone and the like: the states this door's crashes must leave.
    expect([...seen], `${name}: states met`).toEqual(expect.arrayContaining(mustSee));
  });
});

describe('S3 registry: what inspect of a table costs', () => {
  it('one LIST per 1,000 claims of the project and one GET per claim, plus the reads of its own keys; another project costs nothing', { timeout: 120_000 }, async () => {
    f = await historied('s3');
    const s = f.services;
    const other = await f.forProject('other');
    await createNamespace(other, { id: ['o'], mode: 'create', properties: {} });
    for (let i = 0; i < 5; i++) await declareTable(other, { id: ['o', `x${i}`], properties: {}, identity: {} });
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    const tables = 30;
    for (let i = 0; i < tables; i++) await declareTable(s, { id: ['a', `t${i}`], properties: {}, identity: {} });
    f.fake!.clearRequests();
    const report = await inspect(s.registry.store, s.project, ['a', 't7']);
    const requests = f.fake!.requests();
    const count = (op: string) => requests.filter((r) => r.op === op).length;
    expect(report.claimScan).toEqual({ lists: 1, claims: tables });
    expect(requests.some((r) => r.key.startsWith('registry/p/other/')), 'a request touched the other project').toBe(false);
    // The scan (1 LIST + a GET per claim), the LIST of the project's grants, the id's fixed keys
    // (about a dozen GETs and two trash LISTs) and the table record its claim names.
    expect(count('LIST')).toBeLessThanOrEqual(4);
    expect(count('GET')).toBeLessThanOrEqual(tables + 16);
    expect(report.findings.find((x) => x.state === 'held')?.key).toBe(keys.locationClaim(s.project, 'default', (report.records.find((r) => r.role === 'table')!.record as { path: string }).path));
    console.log(JSON.stringify({ s3Inspect: { claims: tables, requests: requests.length, LIST: count('LIST'), GET: count('GET'), HEAD: count('HEAD') } }));
  });
});

describe('rask registry (CLI)', () => {
  it('--help lists every subcommand with one line each', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await main(['registry', '--help'])).toBe(0);
    const text = log.mock.calls.map((c) => String(c[0])).join('\n');
    log.mockRestore();
    for (const cmd of ['inspect', 'export', 'import', 'restore']) expect(text).toMatch(new RegExp(`^  ${cmd} .*\\S$`, 'm'));
  });

  it('inspect --json --history on a data directory names the table, its claim and its past versions', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rask-inspect-'));
    const env = { ...process.env };
    process.env.RASK_DATA_DIR = dir;
    process.env.RASK_LOG_LEVEL = 'error';
    try {
      const { createLocalApp } = await import('../../lib/app/local.js');
      const app = await createLocalApp((await import('../../lib/config.js')).loadLocalConfig(process.env));
      await createNamespace(app.services, { id: ['ns'], mode: 'create', properties: {} });
      await declareTable(app.services, { id: ['ns', 't'], properties: { k: 'v1' }, identity: {} });
      await renameTable(app.services, { id: ['ns', 't'], newName: 'u' });
      app.history?.close();
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const code = await main(['registry', 'inspect', 'ns.u', '--json', '--history']);
      const out = JSON.parse(String(log.mock.calls.at(-1)![0]));
      log.mockRestore();
      expect(code).toBe(0);
      expect(out.findings.map((x: { state: string }) => x.state)).toEqual(expect.arrayContaining(['active', 'held']));
      expect(out.records.map((r: { role: string }) => r.role)).toEqual(expect.arrayContaining(['table', 'location-claim']));
      // The destination record was written arriving, then active: two versions, newest current.
      const mine = out.history.filter((h: { key: string }) => h.key === keys.table('default', ['ns', 'u']));
      expect(mine.length).toBeGreaterThanOrEqual(2);
      expect(mine[0].current).toBe(true);
    } finally {
      process.env = env;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('restore --at --dry-run --json reports the plan and changes nothing; restore then undoes a drop; a bad --at is a usage error', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rask-restore-cli-'));
    const env = { ...process.env };
    process.env.RASK_DATA_DIR = dir;
    process.env.RASK_LOG_LEVEL = 'error';
    const run = async (args: string[]) => {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const err = vi.spyOn(console, 'error').mockImplementation(() => {});
      const code = await main(args);
      const out = log.mock.calls.map((c) => String(c[0])).join('\n');
      log.mockRestore();
      err.mockRestore();
      return { code, out };
    };
    try {
      const { createLocalApp } = await import('../../lib/app/local.js');
      const app = await createLocalApp((await import('../../lib/config.js')).loadLocalConfig(process.env));
      await createNamespace(app.services, { id: ['ns'], mode: 'create', properties: {} });
      await declareTable(app.services, { id: ['ns', 't'], properties: {}, identity: {} });
      await new Promise((r) => setTimeout(r, 5));
      const at = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      await (await import('../../lib/catalog/tables/drop.js')).dropTable(app.services, ['ns', 't']);
      app.history?.close();
      const before = (await app.services.registry.store.list({})).objects.map((o) => `${o.key} ${o.etag}`);
      const dry = await run(['registry', 'restore', '--at', at, '--dry-run', '--json']);
      expect(dry.code).toBe(0);
      const plan = JSON.parse(dry.out).restore;
      expect(plan.dryRun).toBe(true);
      expect(plan.tablesRestored).toEqual(['ns.t']);
      expect((await app.services.registry.store.list({})).objects.map((o) => `${o.key} ${o.etag}`)).toEqual(before);
      const done = await run(['registry', 'restore', '--at', at, '--json']);
      expect(done.code).toBe(0);
      expect(JSON.parse(done.out).restore.applied).toBe(plan.changes.length);
      expect(await readTable(app.services, ['ns', 't'])).toBeDefined();
      expect((await run(['registry', 'restore', '--at', 'yesterday'])).code).toBe(2);
      expect((await run(['registry', 'restore', '--at', '2000-01-01T00:00:00Z', '--json'])).out).toMatch(/older than the registry's retained history/);
    } finally {
      process.env = env;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
