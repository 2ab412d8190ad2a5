// @covers DropNamespace, UndropNamespace, ListTables
/**
 * Has-data markers across a recoverable cascade drop and a namespace undrop: the cascade clears
 * the subtree's markers with its tables, and the undrop (restoreTable, per table) puts back the
 * marker each record keeps, so `ListTables include_declared=false` in every restored namespace
 * lists exactly its tables with data (a committed manifest), never the declared-only ones.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { undropNamespace } from '../../lib/catalog/namespaces/undrop.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { listTables } from '../../lib/catalog/tables/list.js';
import { hasData, readTable } from '../../lib/catalog/protocols/lookup.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { storePath } from '../../lib/catalog/dataset/version-chain.js';
import { createTableVersion } from '../../lib/catalog/tables/version-create.js';
import { reconcileWith, type Finding } from '../../lib/maintenance/reconcile.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { assertTableInvariants, warehouseStore, writeFakeDataset } from '../support/table-invariants.js';
import { stageManifest } from '../support/versions.js';

describe.each(['memory', 'fs'] as const)('namespace undrop keeps the has-data listing exact (%s store)', (kind) => {
  let f: ServicesFixture;
  let s: CatalogServices;
  let store: ObjectStore;

  beforeEach(async () => {
    f = await servicesOver(kind);
    s = f.services;
    store = await warehouseStore(s);
    const key = keys.warehouse(s.project, s.defaultWarehouse);
    const w = (await s.registry.read<WarehouseRecord>(key))!;
    await s.registry.replace(key, { ...w.value, trashGraceDays: 5 }, w.etag);
  });
  afterEach(() => f.cleanup());

  const declare = (id: string[]) => declareTable(s, { id, properties: {}, identity: {} });

  /** A declared table's first version, through the catalog (its `data` marker with it). */
  async function committed(id: string[]): Promise<void> {
    await declare(id);
    const t = (await readTable(s, id))!.value;
    const root = (await s.registry.read<WarehouseRecord>(keys.warehouse(s.project, s.defaultWarehouse)))!.value.storage;
    const staged = await stageManifest(store, t.path, 1, 'manifest-one');
    await createTableVersion(s, { id, version: 1, manifestPath: storePath(root, staged.key), manifestSize: staged.size });
  }

  async function registered(id: string[]): Promise<void> {
    const path = `reg/${id.join('-')}`;
    await writeFakeDataset(store, path);
    await registerTable(s, { id, location: path, mode: 'create', properties: {} });
  }

  /** a {c1, d1} > a.b {r2, d2} > a.b.c {c3, r3, d3, d3b}; every namespace has both kinds. */
  async function world(): Promise<void> {
    for (const ns of [['a'], ['a', 'b'], ['a', 'b', 'c']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
    await committed(['a', 'c1']);
    await declare(['a', 'd1']);
    await registered(['a', 'b', 'r2']);
    await declare(['a', 'b', 'd2']);
    await committed(['a', 'b', 'c', 'c3']);
    await registered(['a', 'b', 'c', 'r3']);
    await declare(['a', 'b', 'c', 'd3']);
    await declare(['a', 'b', 'c', 'd3b']);
  }

  const withData = async (ns: string[]) => (await listTables(s, { namespace: ns, includeDeclared: false })).tables;

  /** The truth, from storage: the tables of `ns` with a committed manifest. */
  async function truth(ns: string[]): Promise<string[]> {
    const names = (await listTables(s, { namespace: ns, includeDeclared: true })).tables;
    const out: string[] = [];
    for (const name of names) if (await hasData(store, (await readTable(s, [...ns, name]))!.value.path)) out.push(name);
    return out;
  }

  async function expectExact(root: string): Promise<void> {
    const expected: Record<string, string[]> = { [root]: ['c1'], [`${root}.b`]: ['r2'], [`${root}.b.c`]: ['c3', 'r3'] };
    for (const [dotted, names] of Object.entries(expected)) {
      const ns = dotted.split('.');
      expect(await withData(ns)).toEqual(names);
      expect(await truth(ns)).toEqual(names);
    }
    await assertTableInvariants(s);
    // Nothing a reconcile would call a leftover or a hidden table.
    const later = { ...s, now: () => new Date(Date.now() + 3_600_000) };
    const r = await reconcileWith({ stuckAfterMs: 60_000 })(later, {});
    expect((r.items as unknown as Finding[]).filter((i) => i.kind.endsWith('-marker'))).toEqual([]);
  }

  const markerKeys = async () =>
    (await Promise.all((['data', 'maybe'] as const).map((k) => s.registry.store.list({ prefix: keys.dataMarkersSubtree(s.project, k, []) })))).flatMap((p) =>
      p.objects.map((o) => o.key),
    );

  it('drop cascade, then undrop: each restored namespace lists exactly its tables with data', async () => {
    await world();
    await expectExact('a');
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    // In trash, the subtree's tables list nowhere: their markers went with them.
    expect(await markerKeys()).toEqual([]);
    await undropNamespace(s, { id: ['a'] });
    await expectExact('a');
  });

  it('undrop under a new name: the markers follow the tables to their new ids', async () => {
    await world();
    await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
    // The name is re-used meanwhile, with a declared-only table of the same name as one with data.
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await declare(['a', 'c1']);
    await undropNamespace(s, { id: ['a'], newName: 'a2' });
    await expectExact('a2');
    expect(await withData(['a'])).toEqual([]);
    expect((await markerKeys()).every((k) => !k.includes('/a/+t/'))).toBe(true);
  });
});
