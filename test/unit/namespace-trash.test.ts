// @covers DropNamespace, UndropNamespace, ListNamespaceTasks
/**
 * Recoverable cascade drops of a namespace subtree (docs/lifecycle.md, "Namespace subtrees"):
 * with trash grace the cascade detaches the subtree (one kind-tagged trash record per object, one
 * deadline), and the namespace undrop rebuilds it shallowest-first with every table's uid and
 * location, resumable after a crash at any step (crashes injected deterministically through
 * `services.crashPoint`, as in namespace-drop-repair.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../lib/catalog/crash-points.js';
import { namespaceTasks } from '../../lib/catalog/namespaces/tasks.js';
import { undropNamespace } from '../../lib/catalog/namespaces/undrop.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { describeNamespace } from '../../lib/catalog/namespaces/describe.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { listNamespaces } from '../../lib/catalog/namespaces/list.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { purgeExpiredTrash, tableTasks } from '../../lib/catalog/protocols/trash.js';
import { undropTable } from '../../lib/catalog/tables/undrop.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { NamespaceRecord, NamespaceTrashRecord, TableRecord, TrashRecord, WarehouseRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { allTableRecords, assertTableInvariants, objectsUnder, warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

class Crash extends Error {}

describe.each(['memory', 'fs'] as const)('namespace subtree trash (%s store)', (kind) => {
  let f: ServicesFixture;
  let s: CatalogServices;
  let store: ObjectStore;
  /** The crash to inject next: the k-th arrival at `point` throws once. */
  let crash: { point: CrashPoint; k: number; seen: number } | undefined;

  beforeEach(async () => {
    f = await servicesOver(kind);
    crash = undefined;
    s = {
      ...f.services,
      crashPoint: (p) => {
        if (!crash || p !== crash.point || ++crash.seen < crash.k) return;
        crash = undefined;
        throw new Crash(`crash at ${p}`);
      },
    };
    store = await warehouseStore(s);
    const key = keys.warehouse(s.project, s.defaultWarehouse);
    const w = (await s.registry.read<WarehouseRecord>(key))!;
    await s.registry.replace(key, { ...w.value, trashGraceDays: 5 }, w.etag);
  });
  afterEach(() => f.cleanup());

  async function table(id: string[], data = true): Promise<TableRecord> {
    await declareTable(s, { id, properties: { at: id.join('.') }, identity: {} });
    const record = (await readTable(s, id))!.value;
    if (data) await writeFakeDataset(store, record.path);
    return record;
  }

  /** a {t1} > a.b {t2} > a.b.c {t3, d (declared only)}; a sibling z {keep}. */
  async function world() {
    await createNamespace(s, { id: ['a'], mode: 'create', properties: { level: '1' } });
    await createNamespace(s, { id: ['a', 'b'], mode: 'create', properties: { level: '2' } });
    await createNamespace(s, { id: ['a', 'b', 'c'], mode: 'create', properties: { level: '3' } });
    await createNamespace(s, { id: ['z'], mode: 'create', properties: {} });
    const tables = [await table(['a', 't1']), await table(['a', 'b', 't2']), await table(['a', 'b', 'c', 't3'])];
    const declared = await table(['a', 'b', 'c', 'd'], false);
    await table(['z', 'keep']);
    const nsUids = await Promise.all([['a'], ['a', 'b'], ['a', 'b', 'c']].map(async (id) => (await nsRecord(id))!.value.uid));
    return { tables, declared, nsUids };
  }

  const nsRecord = (id: string[]) => s.registry.read<NamespaceRecord>(keys.namespace(s.project, id));
  const trashRecords = async () => {
    const page = await s.registry.store.list({ prefix: keys.trashPrefix(s.project), limit: 1000 });
    return Promise.all(page.objects.map(async (o) => (await s.registry.read<TrashRecord | NamespaceTrashRecord>(o.key))!.value));
  };

  /** The subtree is back exactly: same namespace uids and properties, same table uids and paths, bytes intact. */
  async function expectRestored(w: Awaited<ReturnType<typeof world>>) {
    for (const [i, id] of [['a'], ['a', 'b'], ['a', 'b', 'c']].entries()) {
      const ns = (await nsRecord(id))!.value;
      expect(ns).toMatchObject({ uid: w.nsUids[i], state: 'active', properties: { level: String(i + 1) } });
      expect(ns.drop).toBeUndefined();
    }
    for (const t of w.tables) {
      expect((await readTable(s, [...t.id]))!.value).toMatchObject({ uid: t.uid, path: t.path, properties: t.properties });
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
    }
    await assertTableInvariants(s);
  }

  it('a cascade detaches the subtree: everything trashed under one deadline, nothing destroyed', async () => {
    const w = await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade', principal: 'ana' });
    expect((await listNamespaces(s, { id: [] })).namespaces).toEqual(['z']);
    expect((await allTableRecords(s)).map((t) => t.id.join('.'))).toEqual(['z.keep']);
    for (const t of w.tables) expect(await objectsUnder(store, t.path)).toHaveLength(2);
    const records = await trashRecords();
    // 3 namespaces + 4 tables (the declared one too), one drop, one deadline, kind-tagged.
    expect(records.map((r) => r.object).sort()).toEqual(['namespace', 'namespace', 'namespace', 'table', 'table', 'table', 'table']);
    expect(new Set(records.map((r) => r.expiresAt)).size).toBe(1);
    expect(new Set(records.map((r) => r.subtree?.dropId)).size).toBe(1);
    expect(records.every((r) => r.droppedBy === 'ana' && JSON.stringify(r.subtree?.root) === '["a"]')).toBe(true);
    const ns = records.find((r): r is NamespaceTrashRecord => r.object === 'namespace' && r.namespace.id.length === 2)!;
    expect(ns.namespace).toMatchObject({ uid: w.nsUids[1], properties: { level: '2' } });
    const { tasks } = await namespaceTasks(s, ['a']);
    expect(tasks).toEqual([expect.objectContaining({ object: 'namespace', root: ['a'], namespaces: 3, tables: 4, dropped_by: 'ana' })]);
    expect(Date.parse(tasks[0].expires_at) - Date.parse(tasks[0].dropped_at)).toBe(5 * 86_400_000);
    expect((await namespaceTasks(s, ['a', 'b'])).tasks).toEqual([expect.objectContaining({ root: ['a'] })]);
    await assertTableInvariants(s);
  });

  it('undrop rebuilds namespaces and tables as they were, skips the declared-only table with a warning', async () => {
    const w = await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    const res = await undropNamespace(s, { id: ['a'] });
    expect(res).toMatchObject({ id: ['a'], restored: true, namespaces: 3, tables: 3 });
    expect(res.warnings).toEqual([expect.stringContaining('["a","b","c","d"]')]);
    await expectRestored(w);
    expect(await readTable(s, ['a', 'b', 'c', 'd'])).toBeUndefined();
    // Only the skipped table is left in trash, restorable on its own.
    expect((await trashRecords()).map((r) => r.object)).toEqual(['table']);
    expect((await namespaceTasks(s, ['a'])).tasks).toEqual([]);
    expect(await undropTable(s, { id: ['a', 'b', 'c', 'd'] })).toMatchObject({ restored: true });
    expect(await trashRecords()).toEqual([]);
    await expect(undropNamespace(s, { id: ['a'] })).rejects.toMatchObject({ code: 1 });
    await assertTableInvariants(s);
  });

  it('a descendant cannot be undropped alone: the answer names the root', async () => {
    await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    await expect(undropNamespace(s, { id: ['a', 'b'] })).rejects.toMatchObject({ code: 13, message: expect.stringContaining('["a"]') });
    await expect(undropNamespace(s, { id: ['nothing'] })).rejects.toMatchObject({ code: 1 });
  });

  it('a re-used name: 409 / 2 naming it; restore under another name moves the whole subtree', async () => {
    const w = await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await expect(undropNamespace(s, { id: ['a'] })).rejects.toMatchObject({ code: 2, message: expect.stringContaining('["a"]') });
    const res = await undropNamespace(s, { id: ['a'], newName: 'a_old' });
    expect(res).toMatchObject({ id: ['a_old'], namespaces: 3, tables: 3 });
    expect((await nsRecord(['a_old', 'b', 'c']))!.value.uid).toBe(w.nsUids[2]);
    expect((await readTable(s, ['a_old', 'b', 'c', 't3']))!.value).toMatchObject({ uid: w.tables[2].uid, path: w.tables[2].path });
    await assertTableInvariants(s);
  });

  it('a restrict drop of an empty namespace is not recorded; a cascade without grace destroys as before', async () => {
    await createNamespace(s, { id: ['e'], mode: 'create', properties: {} });
    await dropNamespace(s, { id: ['e'], mode: 'fail', behavior: 'restrict' });
    expect(await trashRecords()).toEqual([]);
    await expect(undropNamespace(s, { id: ['e'] })).rejects.toMatchObject({ code: 1 });
    const w = await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade', purge: true });
    expect(await trashRecords()).toEqual([]);
    for (const t of w.tables) expect(await objectsUnder(store, t.path)).toEqual([]);
  });

  it('expired subtree trash is purged by the explicit step (tables destroyed, namespace records gone)', async () => {
    const w = await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    const later = { ...s, now: () => new Date(Date.now() + 6 * 86_400_000) };
    const res = await purgeExpiredTrash(later);
    expect(res.purged).toHaveLength(7);
    expect(await trashRecords()).toEqual([]);
    for (const t of w.tables) expect(await objectsUnder(store, t.path)).toEqual([]);
  });

  describe('crash in the middle, resumed by the next call', () => {
    const detachPoints: [CrashPoint, number][] = [
      ['namespace-drop:marked', 1],
      ['namespace-drop:table-removed', 1],
      ['namespace-drop:child-dropped', 1],
      ['namespace-drop:emptied', 2],
    ];
    for (const [point, k] of detachPoints) {
      it(`detach interrupted at ${point} #${k}: a second drop finishes it, undrop restores everything`, async () => {
        const w = await world();
        crash = { point, k, seen: 0 };
        await expect(dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' })).rejects.toBeInstanceOf(Crash);
        expect(crash).toBeUndefined();
        // No byte was destroyed by the half-done detach.
        for (const t of w.tables) expect(await objectsUnder(store, t.path)).toHaveLength(2);
        await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
        expect(await nsRecord(['a'])).toBeUndefined();
        const records = await trashRecords();
        expect(records).toHaveLength(7);
        expect(new Set(records.map((r) => r.subtree?.dropId)).size).toBe(1);
        await undropNamespace(s, { id: ['a'] });
        await expectRestored(w);
      });
    }

    it('undrop called on a detach left half-done finishes the detach first, then restores', async () => {
      const w = await world();
      crash = { point: 'namespace-drop:table-removed', k: 2, seen: 0 };
      await expect(dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' })).rejects.toBeInstanceOf(Crash);
      expect(await undropNamespace(s, { id: ['a'] })).toMatchObject({ restored: true, namespaces: 3, tables: 3 });
      await expectRestored(w);
    });

    const undropPoints: [CrashPoint, number][] = [
      ['namespace-undrop:namespace-restored', 1],
      ['namespace-undrop:namespace-restored', 3],
      ['namespace-undrop:table-restored', 2],
    ];
    for (const [point, k] of undropPoints) {
      it(`undrop interrupted at ${point} #${k}: the second call finishes it`, async () => {
        const w = await world();
        await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
        crash = { point, k, seen: 0 };
        await expect(undropNamespace(s, { id: ['a'] })).rejects.toBeInstanceOf(Crash);
        // Still visibly unfinished: the root's trash record is there, the task hidden (root live).
        expect((await s.registry.store.list({ prefix: keys.namespaceTrashOf(s.project, ['a']), limit: 5 })).objects).toHaveLength(1);
        expect(await undropNamespace(s, { id: ['a'] })).toMatchObject({ id: ['a'], restored: true });
        await expectRestored(w);
        expect((await trashRecords()).map((r) => r.object)).toEqual(['table']); // the declared-only one
      });
    }
  });

  it('tables dropped on their own before the cascade stay out of the namespace undrop', async () => {
    const w = await world();
    await dropTable(s, ['a', 't1']);
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    expect(await undropNamespace(s, { id: ['a'] })).toMatchObject({ tables: 2 });
    expect(await readTable(s, ['a', 't1'])).toBeUndefined();
    expect((await tableTasks(s, ['a', 't1'])).tasks).toEqual([expect.objectContaining({ uid: w.tables[0].uid })]);
    expect((await describeNamespace(s, ['a'])).properties).toEqual({ level: '1' });
  });

  describe('races (real concurrency over a store with random latency)', () => {
    let jf: ServicesFixture;
    let js: CatalogServices;
    beforeEach(async () => {
      jf = await servicesOver(kind, { jitterTurns: 4 });
      js = jf.services;
      const key = keys.warehouse(js.project, js.defaultWarehouse);
      const w = (await js.registry.read<WarehouseRecord>(key))!;
      await js.registry.replace(key, { ...w.value, trashGraceDays: 5 }, w.etag);
    });
    afterEach(() => jf.cleanup());

    async function subtree(): Promise<TableRecord[]> {
      const wstore = await warehouseStore(js);
      for (const id of [['r'], ['r', 's']]) await createNamespace(js, { id, mode: 'create', properties: {} });
      const out: TableRecord[] = [];
      for (const id of [['r', 't1'], ['r', 's', 't2']]) {
        await declareTable(js, { id, properties: {}, identity: {} });
        const t = (await readTable(js, id))!.value;
        await writeFakeDataset(wstore, t.path);
        out.push(t);
      }
      await dropNamespace(js, { id: ['r'], mode: 'fail', behavior: 'cascade' });
      return out;
    }
    const settle = (p: Promise<unknown>) => p.then(() => 'ok' as const, (e: { code?: number }) => e.code ?? e);

    it('two undrops at once: the subtree comes back whole once; each answers restored or nothing-in-trash', async () => {
      const tables = await subtree();
      const outcomes = await Promise.all([settle(undropNamespace(js, { id: ['r'] })), settle(undropNamespace(js, { id: ['r'] }))]);
      expect(outcomes.every((o) => o === 'ok' || o === 1), JSON.stringify(outcomes)).toBe(true);
      expect(outcomes).toContain('ok');
      for (const t of tables) expect((await readTable(js, [...t.id]))!.value.uid).toBe(t.uid);
      expect((await js.registry.store.list({ prefix: keys.trashPrefix(js.project), limit: 10 })).objects).toEqual([]);
      await assertTableInvariants(js);
    });

    it('an undrop racing a create of the same name: exactly one wins, the other answers 2', async () => {
      const tables = await subtree();
      const outcomes = await Promise.all([
        settle(undropNamespace(js, { id: ['r'] })),
        settle(createNamespace(js, { id: ['r'], mode: 'create', properties: { fresh: 'yes' } })),
      ]);
      expect(outcomes.filter((o) => o === 'ok'), JSON.stringify(outcomes)).toHaveLength(1);
      expect(outcomes.filter((o) => o === 2)).toHaveLength(1);
      const undropWon = outcomes[0] === 'ok';
      expect((await describeNamespace(js, ['r'])).properties).toEqual(undropWon ? {} : { fresh: 'yes' });
      // Whoever lost, nothing is half-restored: the tables are all back, or all still in trash.
      const back = await Promise.all(tables.map(async (t) => (await readTable(js, [...t.id]))?.value.uid === t.uid));
      expect(back.every((b) => b === undropWon), JSON.stringify(back)).toBe(true);
      await assertTableInvariants(js);
    });
  });
});
