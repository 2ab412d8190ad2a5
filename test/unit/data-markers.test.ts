// @covers ListTables, DeclareTable, CreateTableVersion, RegisterTable, RenameTable, DropTable, DeregisterTable, UndropTable, DropNamespace
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace, settleNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { deregisterTable, dropTable } from '../../lib/catalog/tables/drop.js';
import { listTables } from '../../lib/catalog/tables/list.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { undropTable } from '../../lib/catalog/tables/undrop.js';
import { storePath } from '../../lib/catalog/dataset/version-chain.js';
import { rememberWarehouse } from '../../lib/catalog/warehouses.js';
import { createTableVersion } from '../../lib/catalog/tables/version-create.js';
import { listTableVersions } from '../../lib/catalog/tables/versions.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { NamespaceRecord, TableRecord, WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { gateFirst } from '../support/jittery-store.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { assertTableInvariants, outcome, warehouseStore, writeFakeDataset } from '../support/table-invariants.js';
import { stageManifest } from '../support/versions.js';

/**
 * Has-data markers (lib/catalog/protocols/markers.ts): ListTables include_declared=false lists a
 * namespace's markers instead of probing every table's storage. Each test checks the listing
 * against the truth (which tables have a committed manifest) after the operation that must keep
 * the markers right, so a marker that is not written, moved or removed fails it.
 */

const identity = {};
let f: ServicesFixture;
let s: CatalogServices;
let store: ObjectStore;

const withData = async (namespace: string[]) => (await listTables(s, { namespace, includeDeclared: false })).tables;
const record = async (id: string[]) => (await readTable(s, id))!.value;

async function commitFirst(id: string[]): Promise<void> {
  const t = await record(id);
  const root = (await s.registry.read<WarehouseRecord>(keys.warehouse(s.project, s.defaultWarehouse)))!.value.storage;
  const staged = await stageManifest(store, t.path, 1, 'manifest-one');
  await createTableVersion(s, { id, version: 1, manifestPath: storePath(root, staged.key), manifestSize: staged.size });
}

async function markers(kind: 'data' | 'maybe'): Promise<string[]> {
  const prefix = `p/${s.project}/${kind}/`;
  return (await s.registry.store.list({ prefix })).objects.map((o) => o.key.slice(prefix.length));
}

beforeEach(async () => {
  f = await servicesOver('memory');
  s = f.services;
  store = await warehouseStore(s);
  await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
  await createNamespace(s, { id: ['b'], mode: 'create', properties: {} });
});
afterEach(() => f.cleanup());

describe('managed versioning: the catalog sees every first commit', () => {
  it('a declared table is listed once its first version is committed, and only then', async () => {
    await declareTable(s, { id: ['a', 'declared'], properties: {}, identity });
    await declareTable(s, { id: ['a', 'committed'], properties: {}, identity });
    expect((await record(['a', 'declared'])).dataMarker).toBe('none');
    expect(await markers('data')).toEqual([]);
    expect(await withData(['a'])).toEqual([]);
    await commitFirst(['a', 'committed']);
    expect((await record(['a', 'committed'])).dataMarker).toBe('data');
    expect(await withData(['a'])).toEqual(['committed']);
    expect(await listTables(s, { namespace: ['a'], includeDeclared: true })).toEqual({ tables: ['committed', 'declared'] });
  });

  it('a client that commits straight to storage is seen at the next version lookup', async () => {
    await declareTable(s, { id: ['a', 'direct'], properties: {}, identity });
    await writeFakeDataset(store, (await record(['a', 'direct'])).path);
    // Outside the managed-versioning contract: the catalog was not told (docs/protocols.md).
    expect(await withData(['a'])).toEqual([]);
    expect((await listTableVersions(s, { id: ['a', 'direct'], descending: true, limit: 1 })).versions).toHaveLength(1);
    expect((await record(['a', 'direct'])).dataMarker).toBe('data');
    expect(await withData(['a'])).toEqual(['direct']);
  });

  it('a first commit whose table is dropped (and re-created) meanwhile is refused and leaves the listing right', async () => {
    for (const recreate of [false, true]) {
      const id = ['a', recreate ? 'again' : 'gone'];
      await declareTable(s, { id, properties: {}, identity });
      const t = await record(id);
      const root = (await s.registry.read<WarehouseRecord>(keys.warehouse(s.project, s.defaultWarehouse)))!.value.storage;
      const staged = await stageManifest(store, t.path, 1, 'manifest-one');
      // The commit stops right before it writes the marker (then the record's compare-and-swap).
      const gate = gateFirst(s.registry.store, (c) => c.key === keys.dataMarker(s.project, 'data', id) && c.body.includes(t.uid));
      const committing = outcome(
        createTableVersion({ ...s, registry: new Registry(gate.store) }, { id, version: 1, manifestPath: storePath(root, staged.key), manifestSize: staged.size }),
      );
      await gate.reached;
      await dropTable(s, id);
      if (recreate) {
        await writeFakeDataset(store, 'imports/again.lance');
        await registerTable(s, { id, location: 'imports/again.lance', mode: 'create', properties: {} });
      }
      gate.release();
      expect(await committing).toBe(4);
      expect(await withData(['a'])).toEqual(recreate ? ['again'] : []);
    }
    await assertTableInvariants(s);
  });

  it('a registered table is listed at once', async () => {
    await writeFakeDataset(store, 'imports/ds.lance');
    await registerTable(s, { id: ['a', 'r'], location: 'imports/ds.lance', mode: 'create', properties: {} });
    expect(await withData(['a'])).toEqual(['r']);
  });

  it('the marker moves with a rename and goes with a drop or a deregister', async () => {
    for (const name of ['t', 'u', 'v']) {
      await declareTable(s, { id: ['a', name], properties: {}, identity });
      await commitFirst(['a', name]);
    }
    await renameTable(s, { id: ['a', 't'], newName: 't2', newNamespace: ['b'] });
    await renameTable(s, { id: ['a', 'u'], newName: 'u2' });
    expect(await withData(['a'])).toEqual(['u2', 'v']);
    expect(await withData(['b'])).toEqual(['t2']);
    await dropTable(s, ['a', 'u2']);
    await deregisterTable(s, ['a', 'v']);
    expect(await withData(['a'])).toEqual([]);
    // A name used again by a declared-only table is not listed as having data.
    await declareTable(s, { id: ['a', 'v'], properties: {}, identity });
    expect(await withData(['a'])).toEqual([]);
    expect(await markers('data')).toEqual(['b/+t/t2']);
    await assertTableInvariants(s);
  });

  it('pages through the markers with a token only when more remain', async () => {
    for (const name of ['p1', 'p2', 'p3', 'q1', 'q2']) await declareTable(s, { id: ['a', name], properties: {}, identity });
    for (const name of ['p1', 'p3', 'q2']) await commitFirst(['a', name]);
    expect(await listTables(s, { namespace: ['a'], includeDeclared: false, limit: 2 })).toEqual({ tables: ['p1', 'p3'], page_token: 'p3' });
    expect(await listTables(s, { namespace: ['a'], includeDeclared: false, limit: 2, pageToken: 'p3' })).toEqual({ tables: ['q2'] });
    expect(await listTables(s, { namespace: ['a'], includeDeclared: false, limit: 3 })).toEqual({ tables: ['p1', 'p3', 'q2'] });
  });

  it('a dropped namespace leaves no marker behind for a namespace of the same name', async () => {
    await declareTable(s, { id: ['b', 't'], properties: {}, identity });
    await commitFirst(['b', 't']);
    await dropNamespace(s, { id: ['b'], mode: 'fail', behavior: 'cascade' });
    expect(await markers('data')).toEqual([]);
    await createNamespace(s, { id: ['b'], mode: 'create', properties: {} });
    expect(await withData(['b'])).toEqual([]);
  });
});

describe('a restrict drop racing a create (gated, deterministic)', () => {
  it('a drop undone by a helper after its emptiness check answers 409 / 3 and never removes the new table\'s marker', async () => {
    await writeFakeDataset(store, 'imports/late.lance');
    const id = ['b', 'late'];
    // Gate 1: the register has read its parent (active) and stops right before its marker.
    const beforeMarker = gateFirst(s.registry.store, (c) => c.key === keys.dataMarker(s.project, 'data', id));
    // Gate 2: it has written marker and record and stops before re-reading its parent.
    let recordWritten = false;
    const beforeRecheck = gateFirst(beforeMarker.store, (c) => {
      if (c.key === keys.table(s.project, id) && c.op !== 'get') recordWritten = true;
      return recordWritten && c.op === 'get' && c.key === keys.namespace(s.project, ['b']);
    });
    const registering = outcome(registerTable({ ...s, registry: new Registry(beforeRecheck.store) }, { id, location: 'imports/late.lance', mode: 'create', properties: {} }));
    await beforeMarker.reached;
    // The drop marks `dropping`, finds the namespace empty and, at its "emptied" step, the
    // register lands; a request passing by settles the mark and undoes the drop (not empty),
    // then the register's re-check finds its parent active.
    let gated = false;
    const racing: CatalogServices = {
      ...s,
      crashPoint: async (point) => {
        if (point !== 'namespace-drop:emptied' || gated) return;
        gated = true;
        beforeMarker.release();
        await beforeRecheck.reached;
        await settleNamespace(s, ['b']);
        beforeRecheck.release();
        expect(await registering).toBe('ok');
      },
    };
    expect(await outcome(dropNamespace(racing, { id: ['b'], mode: 'fail', behavior: 'restrict' }))).toBe(3);
    expect(gated).toBe(true);
    // The drop never deletes a live table's marker: the registered data stays listed.
    expect(await s.registry.store.get(keys.dataMarker(s.project, 'data', id))).toBeDefined();
    expect(await withData(['b'])).toEqual(['late']);
    await assertTableInvariants(f.direct);
  });
});

describe('without managed versioning: clients commit straight to storage', () => {
  beforeEach(async () => {
    const key = keys.warehouse(s.project, s.defaultWarehouse);
    const wh = (await s.registry.read<WarehouseRecord>(key))!;
    const unmanaged = { ...wh.value, managedVersioning: false };
    await s.registry.replace(key, unmanaged, wh.etag);
    rememberWarehouse(s.registry, s.project, unmanaged, undefined); // the cached copy too
  });

  it('a declared table is probed: hidden while it has no data, listed once a client wrote some', async () => {
    await declareTable(s, { id: ['a', 'x'], properties: {}, identity });
    await declareTable(s, { id: ['a', 'y'], properties: {}, identity });
    expect((await record(['a', 'x'])).dataMarker).toBe('maybe');
    expect(await withData(['a'])).toEqual([]);
    // A stock client writes its first version itself; the catalog is never told.
    await writeFakeDataset(store, (await record(['a', 'y'])).path);
    expect(await withData(['a'])).toEqual(['y']);
    // The probe that found data wrote the `data` marker: no probe next time.
    expect(await markers('data')).toEqual(['a/+t/y']);
    await renameTable(s, { id: ['a', 'y'], newName: 'y2' });
    expect(await withData(['a'])).toEqual(['y2']);
    await dropTable(s, ['a', 'y2']);
    expect(await withData(['a'])).toEqual([]);
    expect(await markers('data')).toEqual([]);
    expect(await markers('maybe')).toEqual(['a/+t/x']);
  });
});

describe('records and namespaces from before markers', () => {
  it('a namespace without the marker flag is probed, as before', async () => {
    const key = keys.namespace(s.project, ['a']);
    const ns = (await s.registry.read<NamespaceRecord>(key))!;
    const { tableMarkers: _flag, ...legacy } = ns.value;
    await s.registry.replace(key, legacy, ns.etag);
    await declareTable(s, { id: ['a', 'old'], properties: {}, identity });
    await declareTable(s, { id: ['a', 'empty'], properties: {}, identity });
    // Data that arrived without a marker (as everything did before markers).
    await writeFakeDataset(store, (await record(['a', 'old'])).path);
    expect(await withData(['a'])).toEqual(['old']);
  });

  it('a table without the marker field is probed wherever a rename or an undrop takes it', async () => {
    await declareTable(s, { id: ['a', 'old'], properties: {}, identity });
    const key = keys.table(s.project, ['a', 'old']);
    const found = (await s.registry.read<TableRecord>(key))!;
    const { dataMarker: _field, ...legacy } = found.value;
    await s.registry.replace(key, legacy, found.etag);
    await writeFakeDataset(store, found.value.path);
    await renameTable(s, { id: ['a', 'old'], newName: 'moved', newNamespace: ['b'] });
    expect(await markers('maybe')).toEqual(['b/+t/moved']);
    expect(await withData(['b'])).toEqual(['moved']);
    await assertTableInvariants(s);
  });

  it('an undropped table gets its marker back', async () => {
    const key = keys.warehouse(s.project, s.defaultWarehouse);
    const wh = (await s.registry.read<WarehouseRecord>(key))!;
    await s.registry.replace(key, { ...wh.value, trashGraceDays: 1 }, wh.etag);
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    await commitFirst(['a', 't']);
    await dropTable(s, ['a', 't']);
    expect(await withData(['a'])).toEqual([]);
    await undropTable(s, { id: ['a', 't'] });
    expect(await withData(['a'])).toEqual(['t']);
  });
});
