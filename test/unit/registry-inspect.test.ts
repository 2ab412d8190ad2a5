/**
 * `rask registry inspect` (issue #30, item 1): every intermediate state a door can leave, built
 * by stopping the registry's store after each of the door's writes in turn (crashAfterWrites,
 * the crash points of test/unit/table-listing-after-crash.test.ts), is named by the inspection
 * of the object, with the repair the next reader makes. Read off the store itself, not off
 * inspect's output: each unsettled record (a table not `active`, a namespace `dropping`, a mark)
 * must have a finding of its state with a repair. Memory, filesystem and S3-fake registries.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../functions/cli.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { inspect } from '../../lib/maintenance/registry/inspect.js';
import { keys } from '../../lib/registry/keys.js';
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
const DOORS: Record<string, { door: Door; ids: string[][] }> = {
  'rename within a namespace': { door: (s) => renameTable(s, { id: ['a', 't'], newName: 'dest' }), ids: [['a', 't'], ['a', 'dest']] },
  'rename across namespaces': { door: (s) => renameTable(s, { id: ['a', 't'], newName: 'dest', newNamespace: ['b'] }), ids: [['a', 't'], ['b', 'dest']] },
  'cascade drop namespace': { door: (s) => dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' }), ids: [['a'], ['a', 't'], ['a', 'z']] },
};

/** The unsettled states on record for `id`, read straight from the store. */
async function unsettled(s: CatalogServices, id: string[]): Promise<string[]> {
  const out: string[] = [];
  const body = async (key: string) => {
    const got = await s.registry.store.get(key);
    return got ? (JSON.parse(got.body.toString()) as { state?: string }) : undefined;
  };
  const ns = await body(keys.namespace(s.project, id));
  if (ns?.state === 'dropping') out.push('dropping');
  const t = await body(keys.table(s.project, id));
  if (t?.state && t.state !== 'active') out.push(t.state);
  if (await s.registry.store.head(keys.tableRenameMark(s.project, id))) out.push('rename-mark');
  if (await s.registry.store.head(keys.namespaceDropMark(s.project, id))) out.push('drop-mark');
  return out;
}

describe.each(['memory', 'fs', 's3'] as const)('%s registry: inspect after a crash at each write of a door', (kind) => {
  it.each(Object.keys(DOORS))('%s: every intermediate state is named with its repair', async (name) => {
    const { door, ids } = DOORS[name]!;
    let completed = false;
    const seen = new Set<string>();
    for (let n = 1; n < 40 && !completed; n++) {
      f = kind === 's3' ? await historied('s3') : await servicesOver(kind);
      const s = f.services;
      const store = await warehouseStore(s);
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
      for (const id of ids) {
        const states = await unsettled(s, id);
        const report = await inspect(s.registry.store, s.project, id);
        for (const state of states) {
          seen.add(state);
          const finding = report.findings.find((x) => x.state === state);
          expect(finding, `${name}, crash at write ${n}: ${id.join('.')} is ${state}; findings ${JSON.stringify(report.findings)}`).toBeDefined();
          expect(finding!.repair, `${name}, write ${n}: the repair of ${state}`).toMatch(/\w{3,}/);
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
