// @covers DescribeTable, TableExists, ListTables, ListAllTables, DescribeNamespace, NamespaceExists, ListNamespaces
/**
 * Read-only mode (CatalogServices.readOnly, RASK_READ_ONLY; docs/protocols.md "Repair on read"):
 * the per-operation deployment gives read operations roles that cannot write, so every read path
 * that repairs what it meets in the default mode must, in this mode, answer what the repair would
 * leave without writing anything.
 *
 * Each case builds the unsettled state with writable services, then drives the read through
 * services whose stores refuse (and count) every write, and checks the answer and that no write
 * was attempted. The same read is then run in the default mode, which repairs: its answer must
 * equal the read-only one (so the read-only answer is the protocol's outcome, not a guess).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../lib/catalog/crash-points.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { describeNamespace } from '../../lib/catalog/namespaces/describe.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { listNamespaces } from '../../lib/catalog/namespaces/list.js';
import { namespaceExists } from '../../lib/catalog/namespaces/exists.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { describeTable } from '../../lib/catalog/tables/describe.js';
import { listAllTables, listTables, tableExists } from '../../lib/catalog/tables/list.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { describeTableVersion, listTableVersions } from '../../lib/catalog/tables/versions.js';
import { liveRecord, readRaw } from '../../lib/catalog/protocols/move.js';
import { markMoving } from '../support/renames.js';
import { rememberWarehouse } from '../../lib/catalog/warehouses.js';
import { keys } from '../../lib/registry/keys.js';
import { LAYOUT_VERSION, openRegistry } from '../../lib/registry/layout.js';
import type { TableRecord, WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { outcome, warehouseStore, writeFakeDataset } from '../support/table-invariants.js';
import { refusingWrites, type WriteRefusingStore } from '../support/write-refusing-store.js';

const identity = {};
let f: ServicesFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

interface World {
  /** Writable, repairing (the default mode). */
  readonly s: CatalogServices;
  /** Read-only over stores that refuse writes. */
  readonly ro: CatalogServices;
  /** Writes the read-only services attempted (registry and warehouse). */
  attempts(): string[];
}

async function world(kind: 'memory' | 'fs', crashAt?: CrashPoint): Promise<World> {
  f = await servicesOver(kind);
  const base = f.services;
  const s: CatalogServices = crashAt
    ? {
        ...base,
        crashPoint: (p) => {
          if (p === crashAt) throw new Error(`crash at ${p}`);
        },
      }
    : base;
  const registryStore = refusingWrites(base.registry.store);
  const warehouses = new Map<unknown, WriteRefusingStore>();
  const ro: CatalogServices = {
    ...base,
    readOnly: true,
    registry: new Registry(registryStore),
    storageFor: (root) => {
      let store = warehouses.get(JSON.stringify(root));
      if (!store) warehouses.set(JSON.stringify(root), (store = refusingWrites(base.storageFor(root))));
      return store;
    },
  };
  return { s, ro, attempts: () => [...registryStore.attempts, ...[...warehouses.values()].flatMap((w) => w.attempts)] };
}

const KINDS = ['memory', 'fs'] as const;

/** Where a table is, as an answer: its uid, or absent. */
const at = async (services: CatalogServices, id: string[]) => (await readTable(services, id))?.value.uid ?? 'absent';

describe.each(KINDS)('a table caught mid-rename (%s store): answered as decided, never settled', (kind) => {
  /** Declares a.t, begins its move to a.u; answers the `moving` record. */
  async function moving(w: World) {
    await createNamespace(w.s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(w.s, { id: ['a', 't'], properties: { k: 'v' }, identity });
    const source = (await readRaw(w.s, ['a', 't']))!;
    return markMoving(w.s, ['a', 't'], source, ['a', 'u']);
  }
  async function arrive(w: World, m: Awaited<ReturnType<typeof moving>>): Promise<void> {
    const arrival: TableRecord = { ...liveRecord(m.value), id: ['a', 'u'], state: 'arriving', move: { nonce: m.value.move!.nonce, from: ['a', 't'] } };
    await w.s.registry.create(keys.table(w.s.project, ['a', 'u']), arrival);
  }
  async function decide(w: World, m: Awaited<ReturnType<typeof moving>>): Promise<void> {
    await w.s.registry.replace(keys.table(w.s.project, ['a', 't']), { ...m.value, state: 'moved' }, m.etag);
  }

  /** The read-only answers for both names, no write attempted, the raw state untouched; then the repairing answers agree. */
  async function expectDecided(w: World, uid: string, expected: { t: boolean; u: boolean }): Promise<void> {
    const raw = async () => [await readRaw(w.s, ['a', 't']), await readRaw(w.s, ['a', 'u'])].map((r) => r?.etag);
    const before = await raw();
    const want = { t: expected.t ? uid : 'absent', u: expected.u ? uid : 'absent' };
    expect({ t: await at(w.ro, ['a', 't']), u: await at(w.ro, ['a', 'u']) }).toEqual(want);
    // Through the doors: DescribeTable and TableExists answer from the same view.
    const live = expected.t ? ['a', 't'] : ['a', 'u'];
    const gone = expected.t ? ['a', 'u'] : ['a', 't'];
    expect(await describeTable(w.ro, { id: live, identity })).toMatchObject({ properties: { k: 'v' } });
    expect(await outcome(tableExists(w.ro, gone))).toBe(4);
    expect((await readTable(w.ro, live))!.value).not.toHaveProperty('state');
    expect(w.attempts()).toEqual([]);
    expect(await raw()).toEqual(before);
    // The default mode settles the same state: the same answer.
    expect({ t: await at(w.s, ['a', 't']), u: await at(w.s, ['a', 'u']) }).toEqual(want);
  }

  it('source `moving`, no arrival yet: the table is still at the source', async () => {
    const w = await world(kind);
    const m = await moving(w);
    // The default mode would finish this move (it can: the destination is free), so the
    // read-only answer for an undecided move is the source, and the repairing read afterwards
    // commits it; compare only the read-only side here.
    expect({ t: await at(w.ro, ['a', 't']), u: await at(w.ro, ['a', 'u']) }).toEqual({ t: m.value.uid, u: 'absent' });
    expect(await describeTable(w.ro, { id: ['a', 't'], identity })).toMatchObject({ properties: { k: 'v' } });
    expect(w.attempts()).toEqual([]);
    expect((await readRaw(w.s, ['a', 't']))!.value.state).toBe('moving');
  });

  it('source `moving` with its arrival: undecided, so the source; the arrival is not the table yet', async () => {
    const w = await world(kind);
    const m = await moving(w);
    await arrive(w, m);
    expect({ t: await at(w.ro, ['a', 't']), u: await at(w.ro, ['a', 'u']) }).toEqual({ t: m.value.uid, u: 'absent' });
    expect(await outcome(tableExists(w.ro, ['a', 'u']))).toBe(4);
    expect(w.attempts()).toEqual([]);
    expect((await readRaw(w.s, ['a', 'u']))!.value.state).toBe('arriving');
  });

  it('source `moved` (the decision is commit), arrival not yet live: the destination', async () => {
    const w = await world(kind);
    const m = await moving(w);
    await arrive(w, m);
    await decide(w, m);
    await expectDecided(w, m.value.uid, { t: false, u: true });
  });

  it('source `moved`, destination already live (crash before the source marker went): the destination', async () => {
    const w = await world(kind);
    const m = await moving(w);
    await w.s.registry.create(keys.table(w.s.project, ['a', 'u']), { ...liveRecord(m.value), id: ['a', 'u'] });
    await decide(w, m);
    await expectDecided(w, m.value.uid, { t: false, u: true });
  });

  it('an arrival written alongside a mark that has not landed (the source still at the etag it names): the source', async () => {
    const w = await world(kind);
    await createNamespace(w.s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(w.s, { id: ['a', 't'], properties: { k: 'v' }, identity });
    const source = (await readRaw(w.s, ['a', 't']))!;
    const move = { nonce: 'held-mark', from: ['a', 't'], sourceEtag: source.etag };
    await w.s.registry.create(keys.table(w.s.project, ['a', 'u']), { ...source.value, id: ['a', 'u'], state: 'arriving', move });
    await expectDecided(w, source.value.uid, { t: true, u: false });
    // The default mode's read of a.u fenced the source (a new etag, so the held mark can never
    // land) before it deleted the arrival.
    expect((await readRaw(w.s, ['a', 't']))!.etag).not.toBe(source.etag);
    expect(await readRaw(w.s, ['a', 'u'])).toBeUndefined();
  });

  it('an arrival whose source no longer carries its nonce (undone): the source', async () => {
    const w = await world(kind);
    const m = await moving(w);
    await arrive(w, m);
    // The undo's decision: the source back to live; its arrival left behind.
    await w.s.registry.replace(keys.table(w.s.project, ['a', 't']), liveRecord(m.value), m.etag);
    await expectDecided(w, m.value.uid, { t: true, u: false });
  });
});

describe.each(KINDS)('a namespace left `dropping` (%s store): answered as its drop decides, never settled', (kind) => {
  async function crashedDrop(w: World, behavior: 'restrict' | 'cascade', withTable: boolean): Promise<void> {
    await createNamespace(w.s, { id: ['a'], mode: 'create', properties: { owner: 'x' } });
    if (withTable) await declareTable(w.s, { id: ['a', 't'], properties: {}, identity });
    await expect(dropNamespace(w.s, { id: ['a'], mode: 'fail', behavior })).rejects.toThrow('crash at namespace-drop:marked');
    expect((await w.s.registry.read<{ state: string }>(keys.namespace(w.s.project, ['a'])))!.value.state).toBe('dropping');
  }
  const answers = async (services: CatalogServices) => ({
    describe: await outcome(describeNamespace(services, ['a'])),
    exists: await outcome(namespaceExists(services, ['a'])),
    tables: await outcome(listTables(services, { namespace: ['a'], includeDeclared: true })),
    children: await outcome(listNamespaces(services, { id: ['a'] })),
  });

  it.each([
    ['cascade', true, 1],
    ['cascade', false, 1],
    ['restrict', false, 1],
    ['restrict', true, 'ok'],
  ] as const)('a %s drop (table inside: %s) reads as %s', async (behavior, withTable, expected) => {
    const w = await world(kind, 'namespace-drop:marked');
    await crashedDrop(w, behavior, withTable);
    const ro = await answers(w.ro);
    expect(ro).toEqual({ describe: expected, exists: expected, tables: expected, children: expected });
    if (expected === 'ok') expect((await describeNamespace(w.ro, ['a'])).properties).toEqual({ owner: 'x' });
    expect(w.attempts()).toEqual([]);
    expect((await w.s.registry.read<{ state: string }>(keys.namespace(w.s.project, ['a'])))!.value.state).toBe('dropping');
    // The default mode settles it (a crash-free copy of the services): the same answers.
    const repairing: CatalogServices = { ...w.s, crashPoint: undefined };
    expect(await answers(repairing)).toEqual(ro);
  });
});

describe.each(KINDS)('a has-data probe (%s store): listed without writing the marker', (kind) => {
  it('ListTables and ListAllTables with include_declared=false list a table a client committed to directly', async () => {
    const w = await world(kind);
    const key = keys.warehouse(w.s.project, w.s.defaultWarehouse);
    const wh = (await w.s.registry.read<WarehouseRecord>(key))!;
    const unmanaged = { ...wh.value, managedVersioning: false };
    await w.s.registry.replace(key, unmanaged, wh.etag);
    rememberWarehouse(w.s.registry, w.s.project, unmanaged, undefined);
    rememberWarehouse(w.ro.registry, w.s.project, unmanaged, undefined);
    await createNamespace(w.s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(w.s, { id: ['a', 'x'], properties: {}, identity });
    await declareTable(w.s, { id: ['a', 'y'], properties: {}, identity });
    await writeFakeDataset(await warehouseStore(w.s), (await readTable(w.s, ['a', 'y']))!.value.path);
    const dataMarkers = async () => (await w.s.registry.store.list({ prefix: keys.dataMarkersSubtree(w.s.project, 'data', []) })).objects.length;

    expect(await listTables(w.ro, { namespace: ['a'], includeDeclared: false })).toEqual({ tables: ['y'] });
    expect(await listAllTables(w.ro, { delimiter: '.', includeDeclared: false })).toEqual({ tables: ['a.y'] });
    // Probed again on the next read-only listing: the same answer, still nothing written.
    expect(await listTables(w.ro, { namespace: ['a'], includeDeclared: false, limit: 1 })).toEqual({ tables: ['y'] });
    expect(w.attempts()).toEqual([]);
    expect(await dataMarkers()).toBe(0);
    // The default mode answers the same and writes the marker.
    expect(await listTables(w.s, { namespace: ['a'], includeDeclared: false })).toEqual({ tables: ['y'] });
    expect(await dataMarkers()).toBe(1);
  });
});

describe.each(KINDS)('versions of a managed table a client committed to directly (%s store): answered, not recorded', (kind) => {
  it('ListTableVersions and DescribeTableVersion answer the version without marking the table as having data', async () => {
    const w = await world(kind);
    await createNamespace(w.s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(w.s, { id: ['a', 't'], properties: {}, identity });
    const record = async () => (await readTable(w.s, ['a', 't']))!.value;
    expect((await record()).dataMarker).toBe('none');
    await writeFakeDataset(await warehouseStore(w.s), (await record()).path);

    const listed = await listTableVersions(w.ro, { id: ['a', 't'], descending: true });
    expect(listed.versions.map((v) => v.version)).toEqual([1]);
    expect((await describeTableVersion(w.ro, { id: ['a', 't'] })).version.version).toBe(1);
    expect((await describeTableVersion(w.ro, { id: ['a', 't'], version: 1 })).version.version).toBe(1);
    expect(w.attempts()).toEqual([]);
    expect((await record()).dataMarker).toBe('none');
    // The default mode answers the same and records the data.
    expect(await listTableVersions(w.s, { id: ['a', 't'], descending: true })).toEqual(listed);
    expect((await record()).dataMarker).toBe('data');
  });
});

describe('start-up in read-only mode', () => {
  const spec = {
    project: 'default',
    warehouse: 'default',
    storage: { kind: 'file' as const, path: '/nowhere' },
    managedVersioning: true,
    trashGraceDays: 0,
  };

  it('a fresh registry is opened without a write: the default warehouse as a writer would record it', async () => {
    const store = refusingWrites(new MemoryObjectStore());
    const { warehouse } = await openRegistry(new Registry(store), spec, { readOnly: true });
    expect(warehouse).toMatchObject({ kind: 'warehouse', name: 'default', storage: spec.storage, managedVersioning: true });
    expect(store.attempts).toEqual([]);
    // The default mode on the same store would write (and here is refused): the path differs.
    await expect(openRegistry(new Registry(store), spec)).rejects.toThrow(/AccessDenied/);
  });

  it('an initialised registry: its own warehouse record; a layout awaiting migration: 503 / 17, nothing written', async () => {
    const base = new MemoryObjectStore();
    await openRegistry(new Registry(base), { ...spec, trashGraceDays: 7 });
    const store = refusingWrites(base);
    expect((await openRegistry(new Registry(store), spec, { readOnly: true })).warehouse.trashGraceDays).toBe(7);
    await base.put(keys.layout(), JSON.stringify({ version: LAYOUT_VERSION - 1, createdAt: 'then' }));
    await expect(openRegistry(new Registry(store), spec, { readOnly: true })).rejects.toMatchObject({ code: 17 });
    await base.put(keys.layout(), JSON.stringify({ version: LAYOUT_VERSION + 1, createdAt: 'then' }));
    await expect(openRegistry(new Registry(store), spec, { readOnly: true })).rejects.toMatchObject({ code: 18 });
    expect(store.attempts).toEqual([]);
  });
});
