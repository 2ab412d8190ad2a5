// @covers CreateNamespace, DropNamespace, DeclareTable, RenameTable, DropTable, DescribeTable, DescribeNamespace
/**
 * `rask registry restore --at T` (issue #30, item 3) on the memory, fs and S3-fake registries:
 *
 * - restore to ≥ 20 random instants of a seeded concurrent workload (three workers creating,
 *   declaring, renaming and dropping tables and cascade-dropping namespaces), each followed by
 *   one read of each object, passes the crash test's invariants (test/crash/crash-consistency.test.ts:
 *   every table record active in an active namespace, no two live tables on one location or uid,
 *   each table's claim carrying its uid, no namespace left dropping), and the catalog is the one
 *   of T by the workers' own logs: every namespace and table an op made before T is there, none
 *   an op removed before T or made after it (the op in flight at T may go either way; a table
 *   whose data was purged is reported instead). Seen to fail with T read 50 ms late, and with
 *   deletions at T skipped (the deleted keys' older versions brought back);
 * - `--dry-run` changes nothing (every key and its bytes listed before and after);
 * - a mass drop of 50 tables (trash grace 0) is undone for every table whose data still exists,
 *   and the others are reported by name;
 * - the S3 restore makes O(keys in scope) requests, counted with the fake, whatever the rest of
 *   the bucket holds; an instant older than the retained history is refused with a clear error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { describeNamespace } from '../../lib/catalog/namespaces/describe.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { readTable, resolveTable } from '../../lib/catalog/protocols/lookup.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { markBeforeFirstWrite } from '../../lib/catalog/tables/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { listTables } from '../../lib/catalog/tables/list.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { CatalogError } from '../../lib/errors.js';
import { manifestsPresent, restoreRegistry } from '../../lib/maintenance/registry/restore.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { HistoryUnavailableError } from '../../lib/ports/registry-history.js';
import { keys, parseTreeKey } from '../../lib/registry/keys.js';
import { assertCrashInvariants } from '../support/crash-invariants.js';
import { historied, type HistoriedFixture, type HistoryKind } from '../support/historied.js';
import { prng } from '../support/prng.js';
import { writeFakeDataset } from '../support/table-invariants.js';

let f: HistoriedFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

const KINDS: HistoryKind[] = ['memory', 'fs', 's3'];
const SEED = Number(process.env.RASK_RESTORE_SEED ?? 20261202);
const INSTANTS = 20;
const retry = { attempts: 10, baseDelayMs: 1, maxDelayMs: 8 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A CatalogError is an answer (409, 404 …) the workload may get under concurrency; anything else fails. */
const tolerateAnswer = (p: Promise<unknown>) =>
  p.then(
    () => true,
    (e: unknown) => {
      if (e instanceof CatalogError) return false;
      throw e;
    },
  );

/** One operation of a worker, with when it began and ended and whether it took effect. */
interface Done {
  readonly kind: 'createNs' | 'dropNs' | 'declare' | 'rename' | 'drop';
  readonly ns: string;
  readonly t?: string;
  readonly to?: string;
  readonly start: number;
  end: number;
  ok: boolean;
}

/** One worker: its own namespaces, ops one after another, seeded; each op logged. */
async function worker(s: CatalogServices, w: number, ops: number, rnd: () => number, instants: number[], log: Done[] = []): Promise<void> {
  const namespaces: string[] = [];
  const tables = new Map<string, string[]>();
  let seq = 0;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const tolerate = async (entry: Omit<Done, 'start' | 'end' | 'ok'>, p: () => Promise<unknown>): Promise<boolean> => {
    const done: Done = { ...entry, start: Date.now(), end: Number.POSITIVE_INFINITY, ok: false };
    log.push(done);
    done.ok = await tolerateAnswer(p());
    return done.ok;
  };
  const close = () => void (log.at(-1)!.end = Date.now());
  for (let i = 0; i < ops; i++) {
    instants.push(Date.now());
    const roll = rnd();
    if (namespaces.length === 0 || (namespaces.length < 3 && roll < 0.1)) {
      const ns = `n${w}x${++seq}`;
      if (await tolerate({ kind: 'createNs', ns }, () => createNamespace(s, { id: [ns], mode: 'create', properties: {} }))) (namespaces.push(ns), tables.set(ns, []));
      close();
      continue;
    }
    const ns = pick(namespaces);
    const ts = tables.get(ns)!;
    if (roll < 0.08 && ts.length > 0) {
      if (await tolerate({ kind: 'dropNs', ns }, () => dropNamespace(s, { id: [ns], mode: 'fail', behavior: 'cascade' }))) (namespaces.splice(namespaces.indexOf(ns), 1), tables.delete(ns));
    } else if (roll < 0.45 || ts.length === 0) {
      const t = `t${w}x${++seq}`;
      if (await tolerate({ kind: 'declare', ns, t }, () => declareTable(s, { id: [ns, t], properties: {}, identity: {} }))) {
        ts.push(t);
        if (rnd() < 0.5) {
          const table = await resolveTable(s, [ns, t]);
          await markBeforeFirstWrite(s, table);
          await writeFakeDataset(s.storageFor(table.warehouse.storage), table.record.path);
        }
      }
    } else if (roll < 0.8) {
      const t = pick(ts);
      const to = `r${w}x${++seq}`;
      if (await tolerate({ kind: 'rename', ns, t, to }, () => renameTable(s, { id: [ns, t], newName: to }))) ts.splice(ts.indexOf(t), 1, to);
    } else {
      const t = pick(ts);
      if (await tolerate({ kind: 'drop', ns, t }, () => dropTable(s, [ns, t]))) ts.splice(ts.indexOf(t), 1);
    }
    close();
  }
}

/**
 * What must hold at T by the workers' logs alone: every op that ended before T took effect, none
 * that began after T did; the op in flight at T (at most one per worker) may have or not, so the
 * names it touches are not checked (as the crash test reads back its pending request).
 */
function modelAt(logs: readonly Done[][], t: number): { live: Set<string>; gone: Set<string> } {
  const live = new Set<string>();
  const gone = new Set<string>();
  for (const log of logs) {
    const namespaces = new Map<string, Set<string>>();
    const names = new Set<string>();
    const touched = new Set<string>();
    for (const op of log) {
      names.add(`ns:${op.ns}`);
      if (op.t) names.add(`t:${op.ns}.${op.t}`);
      if (op.to) names.add(`t:${op.ns}.${op.to}`);
      if (op.end < t) {
        if (!op.ok) continue;
        const tables = namespaces.get(op.ns);
        if (op.kind === 'createNs') namespaces.set(op.ns, new Set());
        else if (op.kind === 'dropNs') namespaces.delete(op.ns);
        else if (op.kind === 'declare') tables!.add(op.t!);
        else if (op.kind === 'rename') (tables!.delete(op.t!), tables!.add(op.to!));
        else tables!.delete(op.t!);
      } else if (op.start <= t) {
        touched.add(`ns:${op.ns}`);
        if (op.t) touched.add(`t:${op.ns}.${op.t}`);
        if (op.to) touched.add(`t:${op.ns}.${op.to}`);
        if (op.kind === 'dropNs') for (const x of namespaces.get(op.ns) ?? []) touched.add(`t:${op.ns}.${x}`);
      }
    }
    const present = new Set<string>();
    for (const [ns, tables] of namespaces) {
      present.add(`ns:${ns}`);
      for (const x of tables) present.add(`t:${ns}.${x}`);
    }
    for (const name of names) {
      if (touched.has(name)) continue;
      (present.has(name) ? live : gone).add(name);
    }
  }
  return { live, gone };
}

/** Every key of the registry with its bytes (the "listing" a dry run must leave as it was). */
async function everything(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ startAfter, limit: 1000 });
    for (const o of page.objects) out.set(o.key, (await store.get(o.key))!.body.toString('utf8'));
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return out;
    startAfter = last.key;
  }
}

/** One read of each object, as the first requests after a restart make: namespaces first, then tables, then listings. */
async function readEverything(s: CatalogServices): Promise<void> {
  const listed = await s.registry.store.list({ prefix: keys.subtree(s.project, []) });
  const ids = listed.objects.map((o) => parseTreeKey(s.project, o.key)).filter((x) => x !== undefined);
  for (const ns of ids.filter((x) => x.kind === 'namespace')) await tolerateAnswer(describeNamespace(s, ns.id));
  for (const t of ids.filter((x) => x.kind === 'table')) await readTable(s, t.id);
  for (const ns of ids.filter((x) => x.kind === 'namespace')) await tolerateAnswer(listTables(s, { namespace: ns.id, includeDeclared: true }));
}

/** The crash test's registry invariants (test/support/crash-invariants.ts); answers how many tables there are. */
const crashInvariants = async (s: CatalogServices, where: string) => (await assertCrashInvariants(s.registry, s.project, where)).length;

describe.each(KINDS)('%s registry: restore to random instants of a seeded concurrent workload', (kind) => {
  it(`${INSTANTS} instants, seed ${SEED}: the crash invariants hold after one read of each object, and the catalog is the one of T`, { timeout: 240_000 }, async () => {
    // S3 lists LastModified in whole seconds: the workload is slowed to span several of them.
    f = await historied(kind, { retry, ...(kind === 's3' ? { s3LatencyMs: 6 } : {}) });
    const s = f.services;
    const rnd = prng(SEED);
    const instants: number[] = [Date.now()];
    const logs: Done[][] = [[], [], []];
    await sleep(5);
    await Promise.all([0, 1, 2].map((w) => worker(s, w, kind === 's3' ? 45 : 30, prng(SEED * 31 + w), instants, logs[w])));
    f.fake?.setLatency(undefined);
    await sleep(kind === 's3' ? 1100 : 5);
    const end = new Date();
    // Nothing the restores write may share the end's second on S3.
    await sleep(kind === 's3' ? 1100 : 5);
    // Random instants inside the run, each shifted by up to 3 ms so they fall inside requests.
    const chosen = Array.from({ length: INSTANTS }, () => instants[Math.floor(rnd() * instants.length)]! + Math.floor(rnd() * 3));
    const shapes = new Set<string>();
    let checked = 0;
    for (const [n, t] of chosen.entries()) {
      const at = new Date(t);
      const result = await restoreRegistry(f.store, f.history, { project: 'default' }, at, { dataExists: manifestsPresent(s) });
      expect(result.conflicts, `instant ${n}`).toEqual([]);
      await readEverything(s);
      const where = `${kind}, instant ${n} (${at.toISOString()})`;
      const count = await crashInvariants(s, where);
      shapes.add(`${count}:${result.changes.length}`);
      // The catalog is the one of T: S3's whole seconds make T the end of its second.
      const effective = kind === 's3' ? Math.floor(t / 1000) * 1000 + 999 : t;
      const model = modelAt(logs, effective);
      const dataGone = new Set(result.dataGone.map((g) => `t:${g.table}`));
      for (const name of model.live) {
        const id = name.slice(name.indexOf(':') + 1).split('.');
        const there = name.startsWith('ns:') ? await tolerateAnswer(describeNamespace(s, id)) : (await readTable(s, id)) !== undefined;
        if (!dataGone.has(name)) expect(there, `${where}: ${name} existed at T`).toBe(true);
      }
      for (const name of model.gone) {
        const id = name.slice(name.indexOf(':') + 1).split('.');
        const there = name.startsWith('ns:') ? await tolerateAnswer(describeNamespace(s, id)) : (await readTable(s, id)) !== undefined;
        expect(there, `${where}: ${name} did not exist at T`).toBe(false);
      }
      checked += model.live.size + model.gone.size;
    }
    // The restores did something: different instants gave different catalogs, checked name by name.
    expect(shapes.size, [...shapes].join(' ')).toBeGreaterThan(1);
    expect(checked).toBeGreaterThan(INSTANTS * 5);
    // Back to the end of the workload: the state then, on which the invariants hold too.
    await restoreRegistry(f.store, f.history, { project: 'default' }, end, { dataExists: manifestsPresent(s) });
    await readEverything(s);
    await crashInvariants(s, `${kind}, back to the end`);
  });
});

describe.each(KINDS)('%s registry: restore --dry-run and refusals', (kind) => {
  it('--dry-run reports the changes and changes nothing (every key and its bytes, before and after)', async () => {
    f = await historied(kind, { retry });
    const s = f.services;
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await sleep(kind === 's3' ? 1100 : 5);
    const at = new Date();
    await sleep(kind === 's3' ? 1100 : 5);
    for (const t of ['x', 'y']) await declareTable(s, { id: ['a', t], properties: {}, identity: {} });
    await renameTable(s, { id: ['a', 'x'], newName: 'z' });
    const before = await everything(f.store);
    const plan = await restoreRegistry(f.store, f.history, { project: 'default' }, at, { dryRun: true, dataExists: manifestsPresent(s) });
    expect(plan.dryRun).toBe(true);
    expect(plan.tablesRemoved).toEqual(['a.y', 'a.z']);
    expect(plan.changes.filter((c) => c.change === 'delete').length).toBeGreaterThanOrEqual(4); // 2 records, 2 claims
    expect(await everything(f.store)).toEqual(before);
    // And the real run does what the plan said.
    const done = await restoreRegistry(f.store, f.history, { project: 'default' }, at, { dataExists: manifestsPresent(s) });
    expect(done.applied).toBe(plan.changes.length);
    expect((await listTables(s, { namespace: ['a'], includeDeclared: true })).tables).toEqual([]);
  });

  it('refuses an instant older than the retained history, or in the future, and changes nothing', async () => {
    f = await historied(kind, { retry, retentionMs: 86_400_000 });
    const s = f.services;
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    const from = await f.history.retainedFrom();
    const before = await everything(f.store);
    const old = new Date(from.getTime() - (kind === 's3' ? 60_000 : 1));
    const err = await restoreRegistry(f.store, f.history, { project: 'default' }, old, { dataExists: manifestsPresent(s) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HistoryUnavailableError);
    expect((err as Error).message).toMatch(/older than the registry's retained history, which begins at .*nothing was read or changed/);
    const future = await restoreRegistry(f.store, f.history, { project: 'default' }, new Date(Date.now() + 60_000), { dataExists: manifestsPresent(s) }).catch((e: unknown) => e);
    expect((future as Error).message).toMatch(/in the future/);
    expect(await everything(f.store)).toEqual(before);
  });
});

describe.each(KINDS)('%s registry: a script dropped 50 tables (trash grace 0)', (kind) => {
  it('restore --at <before> brings back every entry whose data still exists and reports the others by name', { timeout: 120_000 }, async () => {
    // The bytes of ten tables outlive the purge (a bucket whose deletes are refused, say).
    const kept = new Set<string>();
    const keeping = (inner: ObjectStore): ObjectStore => ({
      ...inner,
      url: inner.url,
      get: (k) => inner.get(k),
      head: (k) => inner.head(k),
      list: (o) => inner.list(o),
      put: (k, b) => inner.put(k, b),
      putIfAbsent: (k, b) => inner.putIfAbsent(k, b),
      putIfMatch: (k, b, e) => inner.putIfMatch(k, b, e),
      copyIfAbsent: (a, b, o) => inner.copyIfAbsent(a, b, o),
      deleteIfMatch: (k, e) => inner.deleteIfMatch(k, e),
      delete: async (k) => ([...kept].some((p) => k.startsWith(`${p}/`)) ? undefined : inner.delete(k)),
    });
    f = await historied(kind, { retry, wrapWarehouse: keeping });
    const s = f.services;
    await createNamespace(s, { id: ['mass'], mode: 'create', properties: {} });
    const names = Array.from({ length: 50 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const declaredOnly = new Set(names.slice(0, 20));
    const withData = names.slice(20);
    const keptNames = new Set(withData.slice(0, 10));
    for (const t of names) {
      await declareTable(s, { id: ['mass', t], properties: { n: t }, identity: {} });
      if (declaredOnly.has(t)) continue;
      const table = await resolveTable(s, ['mass', t]);
      await markBeforeFirstWrite(s, table);
      await writeFakeDataset(f.warehouse, table.record.path);
      if (keptNames.has(t)) kept.add(table.record.path);
    }
    await sleep(kind === 's3' ? 1100 : 5);
    const before = new Date();
    await sleep(kind === 's3' ? 1100 : 5);
    for (const t of names) await dropTable(s, ['mass', t]);
    expect((await listTables(s, { namespace: ['mass'], includeDeclared: true })).tables).toEqual([]);

    const result = await restoreRegistry(f.store, f.history, { project: 'default' }, before, { dataExists: manifestsPresent(s) });
    const gone = withData.filter((t) => !keptNames.has(t)).map((t) => `mass.${t}`);
    expect(result.dataGone.map((g) => g.table)).toEqual(gone);
    expect(result.tablesRestored).toEqual(names.filter((t) => !gone.includes(`mass.${t}`)).map((t) => `mass.${t}`));
    expect(result.conflicts).toEqual([]);
    await readEverything(s);
    const back = (await listTables(s, { namespace: ['mass'], includeDeclared: true })).tables.sort();
    expect(back).toEqual(result.tablesRestored.map((t) => t.slice('mass.'.length)));
    for (const t of back) expect((await readTable(s, ['mass', t]))?.value.properties).toEqual({ n: t });
    expect(await crashInvariants(s, 'after the mass-drop restore')).toBe(30);
  });
});

describe('S3 registry: the restore reads object versions with O(keys in scope) requests', () => {
  it('counted with the fake: whatever another project holds, LISTs per 1,000 versions in scope, one or two GETs and one write per changed key', { timeout: 120_000 }, async () => {
    f = await historied('s3', { retry });
    const s = f.services;
    // Another project with many keys and versions: none of them may cost a request.
    const other = await f.forProject('other');
    for (let i = 0; i < 150; i++) await createNamespace(other, { id: [`o${i}`], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    for (let i = 0; i < 10; i++) await declareTable(s, { id: ['a', `t${i}`], properties: {}, identity: {} });
    await sleep(1100);
    const at = new Date();
    await sleep(1100);
    for (let i = 0; i < 5; i++) await dropTable(s, ['a', `t${i}`]);
    for (let i = 10; i < 13; i++) await declareTable(s, { id: ['a', `t${i}`], properties: {}, identity: {} });
    f.fake!.clearRequests();
    const result = await restoreRegistry(f.store, f.history, { project: 'default' }, at, { dataExists: manifestsPresent(s) });
    const requests = f.fake!.requests();
    const count = (op: string) => requests.filter((r) => r.op === op).length;
    const changed = result.changes.length;
    expect(changed).toBeGreaterThanOrEqual(16); // 5 tables back (record + claim), 3 gone (record + claim + …)
    expect(requests.some((r) => r.key.startsWith('registry/p/other/')), 'a request touched the other project').toBe(false);
    // Two ranges (the project's record, its p/<P>/ tree), each under 1,000 versions: one LIST each.
    expect(count('LIST')).toBe(2);
    expect(count('GET')).toBeLessThanOrEqual(2 * changed);
    expect(count('PUT') + count('DELETE')).toBe(result.applied);
    expect(requests.length).toBeLessThanOrEqual(2 + 3 * result.keysInScope);
    console.log(JSON.stringify({ s3Restore: { keysInScope: result.keysInScope, changed, requests: requests.length, LIST: count('LIST'), GET: count('GET'), writes: result.applied } }));
  });
});
