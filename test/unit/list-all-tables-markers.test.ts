// @covers ListAllTables
/**
 * ListAllTables `include_declared=false` in a project created since has-data markers exist pages
 * through the project's markers (they mirror the table keys, so they list in the same order):
 * the same answer and page tokens as probing every table, at a cost that does not grow with the
 * declared-only tables. A project from before markers is still probed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { listAllTables } from '../../lib/catalog/tables/list.js';
import { hasData, readTable } from '../../lib/catalog/protocols/lookup.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { storePath } from '../../lib/catalog/dataset/version-chain.js';
import { createTableVersion } from '../../lib/catalog/tables/version-create.js';
import { rememberWarehouse } from '../../lib/catalog/warehouses.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { ProjectRecord, TableRecord, WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { warehouseStore, writeFakeDataset } from '../support/table-invariants.js';
import { stageManifest } from '../support/versions.js';

describe.each(['memory', 'fs'] as const)('ListAllTables include_declared=false from the markers (%s store)', (kind) => {
  let f: ServicesFixture;
  let s: CatalogServices;
  let store: ObjectStore;

  beforeEach(async () => {
    f = await servicesOver(kind);
    s = f.services;
    store = await warehouseStore(s);
  });
  afterEach(() => f.cleanup());

  const declare = (id: string[]) => declareTable(s, { id, properties: {}, identity: {} });
  const warehouseKey = () => keys.warehouse(s.project, s.defaultWarehouse);

  async function committed(id: string[]): Promise<void> {
    await declare(id);
    const t = (await readTable(s, id))!.value;
    const root = (await s.registry.read<WarehouseRecord>(warehouseKey()))!.value.storage;
    const staged = await stageManifest(store, t.path, 1, 'manifest-one');
    await createTableVersion(s, { id, version: 1, manifestPath: storePath(root, staged.key), manifestSize: staged.size });
  }

  async function setManaged(managedVersioning: boolean): Promise<void> {
    const w = (await s.registry.read<WarehouseRecord>(warehouseKey()))!;
    await s.registry.replace(warehouseKey(), { ...w.value, managedVersioning }, w.etag);
    rememberWarehouse(s.registry, s.project, { ...w.value, managedVersioning }, undefined); // the cached copy too
  }

  /** Namespaces a > a.b, z; tables with data, declared-only ones, and `maybe` tables (no managed versioning). */
  async function world(): Promise<void> {
    for (const ns of [['a'], ['a', 'b'], ['z']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
    await committed(['a', 'c1']);
    await declare(['a', 'd1']);
    await committed(['a', 'b', 'c2']);
    await declare(['a', 'b', 'd2']);
    await writeFakeDataset(store, 'reg/r');
    await registerTable(s, { id: ['z', 'r'], location: 'reg/r', mode: 'create', properties: {} });
    for (let i = 0; i < 5; i++) await declare(['z', `d${i}`]);
    await setManaged(false);
    await declare(['a', 'm_data']);
    await declare(['z', 'm_empty']);
    await writeFakeDataset(store, (await readTable(s, ['a', 'm_data']))!.value.path);
    await setManaged(true);
  }

  /** The truth: every table of the project with a committed manifest, in listing order. */
  async function truth(): Promise<string[]> {
    const all = (await listAllTables(s, { delimiter: '.', includeDeclared: true })).tables;
    const out: string[] = [];
    for (const name of all) if (await hasData(store, (await readTable(s, name.split('.')))!.value.path)) out.push(name);
    return out;
  }

  async function pages(svc: CatalogServices, limit: number): Promise<string[][]> {
    const out: string[][] = [];
    let token: string | undefined;
    do {
      const page = await listAllTables(svc, { delimiter: '.', includeDeclared: false, limit, pageToken: token });
      out.push(page.tables);
      // A token only when another table with data follows, and it is the page's last id.
      if (page.page_token !== undefined) expect(page.page_token).toBe(page.tables[page.tables.length - 1]);
      token = page.page_token;
      expect(out.length).toBeLessThan(20);
    } while (token);
    return out;
  }

  it('lists exactly the tables with data, in key order, with and without pages', async () => {
    await world();
    // Key order: a namespace's own tables (`+t/`) sort before its child namespaces' subtrees.
    const expected = ['a.c1', 'a.m_data', 'a.b.c2', 'z.r'];
    expect(await truth()).toEqual(expected);
    expect((await listAllTables(s, { delimiter: '.', includeDeclared: false })).tables).toEqual(expected);
    for (const limit of [1, 2, 3, 4, 5]) {
      const got = await pages(s, limit);
      expect(got.flat()).toEqual(expected);
      expect(got.every((p) => p.length <= limit)).toBe(true);
      // Full pages carry a token only when more remain: no empty last page.
      expect(got[got.length - 1].length).toBeGreaterThan(0);
    }
    // The probe of the `maybe` table with data wrote its `data` marker.
    expect(await s.registry.store.get(keys.dataMarker(s.project, 'data', ['a', 'm_data']))).toBeDefined();
    expect(await s.registry.store.get(keys.dataMarker(s.project, 'data', ['z', 'm_empty']))).toBeUndefined();
  });

  it('reads no table and no storage for declared-only tables: the cost does not grow with them', async () => {
    await world();
    for (let i = 0; i < 40; i++) await declare(['z', `more${i}`]);
    const calls: string[] = [];
    const counting = new Proxy(s.registry.store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return value.apply(target, args);
        };
      },
    });
    const svc = { ...s, registry: new Registry(counting) };
    // The `maybe` tables' probes write markers on the first call: count a settled listing.
    await listAllTables(s, { delimiter: '.', includeDeclared: false });
    const page = await listAllTables(svc, { delimiter: '.', includeDeclared: false, limit: 2 });
    expect(page).toEqual({ tables: ['a.c1', 'a.m_data'], page_token: 'a.m_data' });
    // The project record, then one LIST per marker kind (the m_empty probe reads its record).
    expect(calls.filter((c) => c === 'get').length).toBeLessThanOrEqual(1);
    // A listing is `list` or, on a store that has it, `listKeys` (the same LIST without etags).
    expect(calls.filter((c) => c === 'list' || c === 'listKeys')).toHaveLength(2);
  });

  it('a project from before markers (no flag) is probed: a table without any marker is still listed', async () => {
    await world();
    // A table as a server before markers wrote it: no dataMarker field, no marker.
    await createNamespace(s, { id: ['old'], mode: 'create', properties: {} });
    await declare(['old', 'legacy']);
    const rec = (await readTable(s, ['old', 'legacy']))!;
    const { dataMarker: _, ...legacy } = rec.value;
    await s.registry.replace<TableRecord>(keys.table(s.project, ['old', 'legacy']), legacy as TableRecord, rec.etag);
    await writeFakeDataset(store, legacy.path);
    const p = (await s.registry.read<ProjectRecord>(keys.project(s.project)))!;
    const { tableMarkers: __, ...before } = p.value;
    await s.registry.replace(keys.project(s.project), before, p.etag);
    const expected = ['a.c1', 'a.m_data', 'a.b.c2', 'old.legacy', 'z.r'];
    expect(await truth()).toEqual(expected);
    expect((await pages(s, 2)).flat()).toEqual(expected);
  });

  it('a new project carries the flag', async () => {
    expect((await s.registry.read<ProjectRecord>(keys.project(s.project)))!.value.tableMarkers).toBe(true);
  });
});
