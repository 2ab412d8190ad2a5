// @covers DeclareTable, RegisterTable, CreateTable, UndropTable, UndropNamespace, DropTable, DropNamespace, ListTables
import { afterEach, describe, expect, it } from 'vitest';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { relativeToRoot } from '../../lib/catalog/dataset/location.js';
import { requireWarehouse } from '../../lib/catalog/warehouses.js';
import { createTable, type DatasetWrite } from '../../lib/catalog/tables/create.js';
import { TableAlreadyExistsError } from '../../lib/errors.js';
import { keys } from '../../lib/registry/keys.js';
import { faultedMetaApp, type FaultedApp } from '../support/placed-faults.js';
import { warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

/**
 * A door that creates a table record (CreateTable, DeclareTable, RegisterTable, a table or
 * namespace undrop) writes the table's has-data marker before the record (docs/protocols.md,
 * "Has-data markers"). When the door is then refused because the name is taken, the table that
 * holds the name must keep its record, its markers and its place in `ListTables
 * include_declared=false` exactly as they were, and no marker of the refused table may be left.
 * Each case runs through the metadata Lambda's composition over the stateful S3 fake; a race is
 * placed with an `interleave` rule that creates the rival just before the door's marker write.
 */

let app: FaultedApp;
afterEach(() => app.close());

const project = 'default';

/** Every marker object of the project, body and etag: what the refused door must leave alone. */
async function markers(services: CatalogServices): Promise<Record<string, { body: string; etag: string }>> {
  const out: Record<string, { body: string; etag: string }> = {};
  for (const kind of ['data', 'maybe'] as const) {
    const page = await services.registry.store.list({ prefix: keys.dataMarkersSubtree(project, kind, []), limit: 1000 });
    for (const o of page.objects) {
      const found = await services.registry.store.get(o.key);
      if (found) out[o.key] = { body: found.body.toString(), etag: found.etag };
    }
  }
  return out;
}

/** The name's record as stored, every marker, and the has-data listing of `ns`. */
async function snapshot(ns: string, id: readonly string[]) {
  const record = await app.services.registry.store.get(keys.table(project, id));
  const listed = await app.call('GET', `/v1/namespace/${ns}/table/list`, undefined, '&include_declared=false');
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return {
    record: record && { body: record.body.toString(), etag: record.etag },
    markers: await markers(app.services),
    listed: listed.body.tables,
  };
}

/** Runs `rival` once, right before the door's first write of the has-data marker at `id`. */
function beforeMarkerWrite(id: readonly string[], rival: () => Promise<void>): void {
  let ran = false;
  const run = async () => {
    if (ran) return;
    ran = true;
    await rival();
  };
  const key = (k: string) => k === keys.dataMarker(project, 'data', id) || k === keys.dataMarker(project, 'maybe', id);
  // A plain put or a put-if-absent, whichever the door uses.
  app.registryStore.place({ op: 'put', key, kind: 'interleave', run });
  app.registryStore.place({ op: 'putIfAbsent', key, kind: 'interleave', run });
}

async function registerAt(id: string[], path: string) {
  await writeFakeDataset(await warehouseStore(app.services), path);
  return app.call('POST', `/v1/table/${id.join('%24')}/register`, { id, location: path });
}

describe('a refused create leaves the table that holds the name as it was', () => {
  describe.each([
    ['declared', async (id: string[]): Promise<void> => void (await app.ok('POST', `/v1/table/${id.join('%24')}/declare`, { id }))],
    ['registered', async (id: string[]): Promise<void> => void expect((await registerAt(id, 'ext/old.lance')).status).toBe(200)],
  ] as const)('DeclareTable over a %s table, warehouse without managed versioning', (_what, existing) => {
    it('answers 409 / 5 and changes no marker', async () => {
      app = await faultedMetaApp({ RASK_MANAGED_VERSIONING: 'false' });
      await app.ok('POST', '/v1/namespace/ns/create', { id: ['ns'] });
      await existing(['ns', 't']);
      const before = await snapshot('ns', ['ns', 't']);
      const res = await app.call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.code).toBe(5);
      expect(await snapshot('ns', ['ns', 't'])).toEqual(before);
    });
  });

  describe.each([
    ['declared (no marker)', async (id: string[]): Promise<void> => void (await app.ok('POST', `/v1/table/${id.join('%24')}/declare`, { id }))],
    ['registered (data marker)', async (id: string[]): Promise<void> => void expect((await registerAt(id, 'ext/rival.lance')).status).toBe(200)],
  ] as const)('a %s rival takes the name just before the marker write', (_what, rival) => {
    let before: Awaited<ReturnType<typeof snapshot>> | undefined;
    /** The door was refused with `status` (and `code`) and the rival's table is as it was. */
    const expectRefusedUnchanged = async (res: Awaited<ReturnType<typeof app.call>>, ns: string, id: string[], code?: number) => {
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      if (code !== undefined) expect(res.body.code).toBe(code);
      expect(before).toBeDefined();
      expect(await snapshot(ns, id)).toEqual(before);
    };
    const placeRival = (ns: string, id: string[]) =>
      beforeMarkerWrite(id, async () => {
        await rival(id);
        before = await snapshot(ns, id);
      });

    it('RegisterTable answers 409 / 5 and changes no marker', async () => {
      app = await faultedMetaApp();
      await app.ok('POST', '/v1/namespace/ns/create', { id: ['ns'] });
      placeRival('ns', ['ns', 't']);
      await expectRefusedUnchanged(await registerAt(['ns', 't'], 'ext/mine.lance'), 'ns', ['ns', 't'], 5);
    });

    it('UndropTable answers 409 / 5 and changes no marker', async () => {
      app = await faultedMetaApp({ RASK_TRASH_GRACE_DAYS: '7' });
      await app.ok('POST', '/v1/namespace/ns/create', { id: ['ns'] });
      expect((await registerAt(['ns', 't'], 'ext/dropped.lance')).status).toBe(200);
      await app.ok('POST', '/v1/table/ns%24t/drop', { id: ['ns', 't'] });
      placeRival('ns', ['ns', 't']);
      await expectRefusedUnchanged(await app.call('POST', '/v1/table/ns%24t/undrop', { id: ['ns', 't'] }), 'ns', ['ns', 't'], 5);
    });

    it("UndropNamespace is refused at the taken table and changes no marker", async () => {
      app = await faultedMetaApp({ RASK_TRASH_GRACE_DAYS: '7' });
      await app.ok('POST', '/v1/namespace/a/create', { id: ['a'] });
      expect((await registerAt(['a', 't'], 'ext/in-a.lance')).status).toBe(200);
      await app.ok('POST', '/v1/namespace/a/drop', { id: ['a'], behavior: 'Cascade' });
      // The namespace is back by the time its tables are restored: the rival is created in it.
      placeRival('a', ['a', 't']);
      await expectRefusedUnchanged(await app.call('POST', '/v1/namespace/a/undrop', { id: ['a'] }), 'a', ['a', 't']);
    });
  });

  it('CreateTable into a name a registered rival takes just before the marker write: 5, no marker changed', async () => {
    app = await faultedMetaApp();
    await app.ok('POST', '/v1/namespace/ns/create', { id: ['ns'] });
    const store = await warehouseStore(app.services);
    const root = (await requireWarehouse(app.services, app.services.defaultWarehouse)).storage;
    // The dataset write as LanceDB does it: `create` refuses a location that has a dataset.
    const write: DatasetWrite = async (location, mode) => {
      const path = relativeToRoot(root, location);
      const manifests = await store.list({ prefix: `${path}/_versions/` });
      if (mode === 'create' && manifests.objects.length > 0) throw new TableAlreadyExistsError('dataset exists');
      await writeFakeDataset(store, path);
      return { version: 1 };
    };
    let before: Awaited<ReturnType<typeof snapshot>> | undefined;
    beforeMarkerWrite(['ns', 't'], async () => {
      expect((await registerAt(['ns', 't'], 'ext/rival.lance')).status).toBe(200);
      before = await snapshot('ns', ['ns', 't']);
    });
    await expect(createTable(app.services, { id: ['ns', 't'], mode: 'create', properties: {}, identity: {} }, write)).rejects.toThrow(
      TableAlreadyExistsError,
    );
    expect(before).toBeDefined();
    expect(await snapshot('ns', ['ns', 't'])).toEqual(before);
  });
});
