// @covers RenameTable, DropTable, DeregisterTable, RegisterTable, DropNamespace
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { describeTable } from '../../lib/catalog/tables/describe.js';
import { deregisterTable, dropTable } from '../../lib/catalog/tables/drop.js';
import { listTables } from '../../lib/catalog/tables/list.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { readRaw } from '../../lib/catalog/protocols/move.js';
import { markMoving } from '../support/renames.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { purgeExpiredTrash, tableTasks } from '../../lib/catalog/protocols/trash.js';
import { undropTable } from '../../lib/catalog/tables/undrop.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { LocationClaimRecord, TableRecord, WarehouseRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import {
  allClaims,
  assertTableInvariants,
  objectsUnder,
  outcome,
  warehouseStore,
  writeFakeDataset,
} from '../support/table-invariants.js';

const identity = {};

describe.each(['memory', 'fs'] as const)('table lifecycle doors (%s store)', (kind) => {
  let f: ServicesFixture;
  let s: CatalogServices;
  let store: ObjectStore;
  beforeEach(async () => {
    f = await servicesOver(kind);
    s = f.services;
    store = await warehouseStore(s);
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['b'], mode: 'create', properties: {} });
  });
  afterEach(() => f.cleanup());

  /** A declared table with (fake) data written at its location. */
  async function table(id: string[], properties: Record<string, string> = {}): Promise<TableRecord> {
    await declareTable(s, { id, properties, identity });
    const record = (await readTable(s, id))!.value;
    await writeFakeDataset(store, record.path);
    return record;
  }

  const describeCode = (id: string[]) => outcome(describeTable(s, { id, identity }));

  describe('DropTable', () => {
    it('removes the record and every byte, answering id, location and properties', async () => {
      const t = await table(['a', 't'], { owner: 'ana' });
      const res = await dropTable(s, ['a', 't']);
      expect(res).toEqual({ id: ['a', 't'], location: expect.stringContaining(t.path), properties: { owner: 'ana' } });
      expect(await describeCode(['a', 't'])).toBe(4);
      expect(await objectsUnder(store, t.path)).toEqual([]);
      await assertTableInvariants(s);
    });

    it('answers 4 for a missing table and changes nothing', async () => {
      const t = await table(['a', 't']);
      expect(await outcome(dropTable(s, ['a', 'nope']))).toBe(4);
      expect(await outcome(dropTable(s, ['nope', 't']))).toBe(4);
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
    });

    it('a failed byte deletion still drops the table, keeps the purge on record and names it', async () => {
      const t = await table(['a', 't']);
      const failing: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
        delete: async (key: string) => {
          if (key.includes('/data/')) throw new Error('injected: disk says no');
          return store.delete(key);
        },
        list: store.list.bind(store),
      });
      const broken: CatalogServices = { ...s, storageFor: () => failing };
      const res = await dropTable(broken, ['a', 't']);
      // The unfinished purge is a queued job, followed like any transaction.
      expect(res.transaction_id).toMatch(/^[0-9a-f]{32}$/);
      const { describeJob } = await import('../../lib/queue/jobs.js');
      const { jobContext } = await import('../../lib/queue/context.js');
      expect(await describeJob(jobContext(s), res.transaction_id!)).toMatchObject({ status: 'Queued' });
      expect(await describeCode(['a', 't'])).toBe(4);
      expect(await objectsUnder(store, t.path)).toEqual([`${t.path}/data/0-abc.lance`]);
      const claims = await allClaims(s);
      expect(claims).toEqual([expect.objectContaining({ path: t.path, uid: t.uid, state: 'purging' })]);
      // The half-deleted location cannot be registered meanwhile.
      await writeFakeDataset(store, t.path);
      await expect(registerTable(s, { id: ['a', 'again'], location: t.path, mode: 'create', properties: {} })).rejects.toThrow(
        /still being deleted/,
      );
      // The worker finishes the purge once the store cooperates, and frees the location.
      const { runJobsOnce } = await import('../../lib/jobs/worker.js');
      const { purgeTableRunner, PURGE_TABLE } = await import('../../lib/jobs/runners/purge.js');
      await runJobsOnce(s, { owner: 'test', runners: { [PURGE_TABLE]: purgeTableRunner }, budgetMs: 10_000 });
      const { describeJob: describe2 } = await import('../../lib/queue/jobs.js');
      const { jobContext: ctx2 } = await import('../../lib/queue/context.js');
      expect(await describe2(ctx2(s), res.transaction_id!)).toMatchObject({ status: 'Succeeded' });
      expect(await objectsUnder(store, t.path)).toEqual([]);
      expect(await allClaims(s)).toEqual([]);
    });
  });

  describe('in a warehouse that keeps dropped tables (trash grace days > 0)', () => {
    beforeEach(async () => {
      const key = keys.warehouse(s.project, s.defaultWarehouse);
      const w = (await s.registry.read<WarehouseRecord>(key))!;
      await s.registry.replace(key, { ...w.value, trashGraceDays: 7 }, w.etag);
    });

    const claimOf = async (t: TableRecord) => (await s.registry.read<LocationClaimRecord>(keys.locationClaim(s.project, t.warehouse, t.path)))?.value;

    it('DropTable puts the table in trash: record gone, bytes and claim kept (trashed), deadline on the tasks door', async () => {
      const t = await table(['a', 't'], { k: 'v' });
      const res = await dropTable(s, ['a', 't'], { principal: 'ana' });
      expect(res).toMatchObject({ id: ['a', 't'], properties: { k: 'v' } });
      expect(res.transaction_id).toBeUndefined();
      expect(await describeCode(['a', 't'])).toBe(4);
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
      expect(await claimOf(t)).toMatchObject({ uid: t.uid, state: 'trashed' });
      const { tasks } = await tableTasks(s, ['a', 't']);
      expect(tasks).toEqual([expect.objectContaining({ kind: 'trash', uid: t.uid, dropped_by: 'ana' })]);
      expect(Date.parse(tasks[0].expires_at) - Date.parse(tasks[0].dropped_at)).toBe(7 * 86_400_000);
      await assertTableInvariants(s);
    });

    it('nobody can register the location of a trashed table', async () => {
      const t = await table(['a', 't']);
      await dropTable(s, ['a', 't']);
      await expect(registerTable(s, { id: ['a', 'thief'], location: t.path, mode: 'create', properties: {} })).rejects.toMatchObject({
        code: 13,
        message: expect.stringMatching(/kept in trash/),
      });
    });

    it('undrop re-registers the same table (uid, location, properties); the trash is empty after', async () => {
      const t = await table(['a', 't'], { k: 'v' });
      await dropTable(s, ['a', 't']);
      expect(await undropTable(s, { id: ['a', 't'] })).toMatchObject({ id: ['a', 't'], restored: true });
      expect((await readTable(s, ['a', 't']))!.value).toMatchObject({ uid: t.uid, path: t.path, properties: { k: 'v' } });
      expect(await claimOf(t)).toMatchObject({ state: 'held', ids: [['a', 't']] });
      expect((await tableTasks(s, ['a', 't'])).tasks).toEqual([]);
      await expect(undropTable(s, { id: ['a', 't'] })).rejects.toMatchObject({ code: 4 });
      await assertTableInvariants(s);
    });

    it('a re-used name: undrop answers 409 / 5 naming it, and can restore under another name', async () => {
      const t = await table(['a', 't']);
      await dropTable(s, ['a', 't']);
      await table(['a', 't']);
      await expect(undropTable(s, { id: ['a', 't'] })).rejects.toMatchObject({ code: 5, message: expect.stringContaining('["a","t"]') });
      expect(await undropTable(s, { id: ['a', 't'], newName: 'old_t' })).toMatchObject({ id: ['a', 'old_t'] });
      expect((await readTable(s, ['a', 'old_t']))!.value.uid).toBe(t.uid);
      await assertTableInvariants(s);
    });

    it('an undrop interrupted after re-registering is finished by the next call', async () => {
      const t = await table(['a', 't']);
      await dropTable(s, ['a', 't']);
      // The first step of undrop only: the record is back, the trash record still there.
      await s.registry.create(keys.table(s.project, ['a', 't']), t);
      expect((await tableTasks(s, ['a', 't'])).tasks).toEqual([]);
      expect(await undropTable(s, { id: ['a', 't'] })).toMatchObject({ restored: true });
      expect((await s.registry.store.list({ prefix: keys.trashPrefix(s.project), limit: 10 })).objects).toEqual([]);
      await assertTableInvariants(s);
    });

    it('purge=true destroys now, as without grace', async () => {
      const t = await table(['a', 't']);
      await dropTable(s, ['a', 't'], { purge: true });
      expect(await objectsUnder(store, t.path)).toEqual([]);
      expect(await allClaims(s)).toEqual([]);
      expect((await tableTasks(s, ['a', 't'])).tasks).toEqual([]);
    });

    it('a cascade trashes every table (bytes kept); once the namespace exists again they undrop', async () => {
      const t = await table(['a', 't']);
      await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
      expect(await readTable(s, ['a', 't'])).toBeUndefined();
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
      await assertTableInvariants(s);
      await expect(undropTable(s, { id: ['a', 't'] })).rejects.toMatchObject({ code: 1 });
      await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
      expect(await undropTable(s, { id: ['a', 't'] })).toMatchObject({ restored: true });
      await assertTableInvariants(s);
    });

    it('expired trash is destroyed by the explicit purge step, fresh trash is left alone', async () => {
      const old = await table(['a', 'old']);
      const fresh = await table(['a', 'fresh']);
      await dropTable(s, ['a', 'old']);
      const realNow = s.now;
      const later = { ...s, now: () => new Date(realNow().getTime() + 8 * 86_400_000) };
      await dropTable(later, ['a', 'fresh']);
      expect(await purgeExpiredTrash(later, { dryRun: true })).toEqual({ purged: [`a.old#${old.uid}`], pending: [`a.fresh#${fresh.uid}`] });
      expect(await objectsUnder(store, old.path)).toHaveLength(2);
      expect(await purgeExpiredTrash(later)).toEqual({ purged: [`a.old#${old.uid}`], pending: [`a.fresh#${fresh.uid}`] });
      expect(await objectsUnder(store, old.path)).toEqual([]);
      expect(await objectsUnder(store, fresh.path)).toHaveLength(2);
      await assertTableInvariants(s);
    });
  });

  describe('DeregisterTable', () => {
    it('removes the record and keeps the bytes; the location can be registered again', async () => {
      const t = await table(['a', 't'], { k: 'v' });
      const res = await deregisterTable(s, ['a', 't']);
      expect(res).toMatchObject({ id: ['a', 't'], properties: { k: 'v' } });
      expect(await describeCode(['a', 't'])).toBe(4);
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
      expect(await allClaims(s)).toEqual([]);
      const back = await registerTable(s, { id: ['b', 'back'], location: t.path, mode: 'create', properties: {} });
      expect(back.location).toBe(res.location);
      const described = await describeTable(s, { id: ['b', 'back'], identity });
      expect(described.location).toBe(res.location);
      await assertTableInvariants(s);
    });

    it('answers 4 for a missing table', async () => {
      expect(await outcome(deregisterTable(s, ['a', 'nope']))).toBe(4);
    });
  });

  describe('RegisterTable', () => {
    const loose = 'imports/ds.lance';
    beforeEach(async () => writeFakeDataset(store, loose));

    it('attaches data by relative or absolute location and answers the absolute one', async () => {
      const rel = await registerTable(s, { id: ['a', 'r1'], location: loose, mode: 'create', properties: { p: '1' } });
      expect(rel).toEqual({ location: expect.stringMatching(/imports\/ds\.lance$/), properties: { p: '1' } });
      await deregisterTable(s, ['a', 'r1']);
      const abs = await registerTable(s, { id: ['a', 'r2'], location: rel.location, mode: 'create', properties: {} });
      expect(abs.location).toBe(rel.location);
      expect((await readTable(s, ['a', 'r2']))!.value).toMatchObject({ path: loose, origin: 'registered' });
      await assertTableInvariants(s);
    });

    it('refuses locations outside the warehouse root with 13', async () => {
      for (const location of ['../elsewhere/ds.lance', '/etc', 's3://other-bucket/x.lance', 'imports/../../x', 'file:///tmp/x.lance']) {
        await expect(registerTable(s, { id: ['a', 'r'], location, mode: 'create', properties: {} })).rejects.toMatchObject({
          code: 13,
          message: expect.stringMatching(/not inside the warehouse's storage root/),
        });
      }
      expect((await listTables(s, { namespace: ['a'], includeDeclared: true })).tables).toEqual([]);
    });

    it('refuses a path that is not a Lance dataset with 13', async () => {
      await store.put('imports/notes/readme.txt', 'hi');
      await store.put('imports/staged/_versions/1.manifest-0e0e', 'staged only');
      for (const location of ['imports/notes', 'imports/missing', 'imports/staged']) {
        await expect(registerTable(s, { id: ['a', 'r'], location, mode: 'create', properties: {} })).rejects.toMatchObject({
          code: 13,
          message: expect.stringMatching(/is not a Lance dataset/),
        });
      }
    });

    it('needs its namespace (1) and a free name (5, unless overwrite)', async () => {
      expect(await outcome(registerTable(s, { id: ['zz', 'r'], location: loose, mode: 'create', properties: {} }))).toBe(1);
      const t = await table(['a', 'taken']);
      expect(await outcome(registerTable(s, { id: ['a', 'taken'], location: loose, mode: 'create', properties: {} }))).toBe(5);
      // overwrite replaces the registration and keeps the replaced table's bytes
      await registerTable(s, { id: ['a', 'taken'], location: loose, mode: 'overwrite', properties: {} });
      expect((await readTable(s, ['a', 'taken']))!.value.path).toBe(loose);
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
      await assertTableInvariants(s);
    });

    it('refuses a location another live table uses, and locations nested with one', async () => {
      const t = await table(['a', 't']);
      await expect(registerTable(s, { id: ['b', 'twin'], location: t.path, mode: 'create', properties: {} })).rejects.toMatchObject({
        code: 13,
        message: expect.stringContaining('is already the location of another table'),
      });
      await writeFakeDataset(store, `${t.path}/tree/dev`);
      await expect(
        registerTable(s, { id: ['b', 'inner'], location: `${t.path}/tree/dev`, mode: 'create', properties: {} }),
      ).rejects.toThrow(/lies inside the location of another table/);
      await writeFakeDataset(store, 'outer');
      await writeFakeDataset(store, 'outer/inner.lance');
      await registerTable(s, { id: ['a', 'inner'], location: 'outer/inner.lance', mode: 'create', properties: {} });
      await expect(registerTable(s, { id: ['a', 'outer'], location: 'outer', mode: 'create', properties: {} })).rejects.toThrow(
        /contains the location of another table/,
      );
      await assertTableInvariants(s);
    });

    it('takes over a stale claim (its table was removed by a request that died before releasing it)', async () => {
      const t = await table(['a', 't']);
      await s.registry.remove(keys.table(s.project, ['a', 't']), (await readTable(s, ['a', 't']))!.etag);
      expect(await allClaims(s)).toHaveLength(1);
      await registerTable(s, { id: ['b', 'adopted'], location: t.path, mode: 'create', properties: {} });
      const claims = await allClaims(s);
      expect(claims).toEqual([expect.objectContaining({ path: t.path, ids: [['b', 'adopted']] })]);
      await assertTableInvariants(s);
    });
  });

  describe('RenameTable', () => {
    it('moves the pointer within and across namespaces, never the bytes', async () => {
      const t = await table(['a', 't'], { k: 'v' });
      expect(await renameTable(s, { id: ['a', 't'], newName: 't2' })).toEqual({});
      expect(await describeCode(['a', 't'])).toBe(4);
      await renameTable(s, { id: ['a', 't2'], newName: 'moved', newNamespace: ['b'] });
      const now = (await readTable(s, ['b', 'moved']))!.value;
      expect(now).toMatchObject({ id: ['b', 'moved'], uid: t.uid, path: t.path, properties: { k: 'v' } });
      expect(now.state).toBeUndefined();
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
      // into the root namespace
      await renameTable(s, { id: ['b', 'moved'], newName: 'top', newNamespace: [] });
      expect((await readTable(s, ['top']))!.value.uid).toBe(t.uid);
      await assertTableInvariants(s);
    });

    it('answers 4, 5, 1 and 13 and changes nothing', async () => {
      const t = await table(['a', 't']);
      await table(['a', 'other']);
      expect(await outcome(renameTable(s, { id: ['a', 'nope'], newName: 'x' }))).toBe(4);
      expect(await outcome(renameTable(s, { id: ['a', 't'], newName: 'other' }))).toBe(5);
      expect(await outcome(renameTable(s, { id: ['a', 't'], newName: 't' }))).toBe(5);
      expect(await outcome(renameTable(s, { id: ['a', 't'], newName: 'x', newNamespace: ['missing'] }))).toBe(1);
      expect(await outcome(renameTable(s, { id: ['a', 't'], newName: '' }))).toBe(13);
      expect(await outcome(renameTable(s, { id: ['a', 't'], newName: 'bad\u0001name' }))).toBe(13);
      expect((await readTable(s, ['a', 't']))!.value).toMatchObject({ uid: t.uid, path: t.path });
      expect((await listTables(s, { namespace: ['a'], includeDeclared: true })).tables).toEqual(['other', 't']);
      await assertTableInvariants(s);
    });

    describe('a rename interrupted between its steps is finished or undone by the next reader', () => {
      it('source marked moving, nothing else: a describe of the source commits it', async () => {
        const t = await table(['a', 't']);
        await markMoving(s, ['a', 't'], (await readRaw(s, ['a', 't']))!, ['b', 'dest']);
        // The destination does not know yet: the rename has not happened as far as it can tell.
        expect(await describeCode(['b', 'dest'])).toBe(4);
        expect(await describeCode(['a', 't'])).toBe(4);
        expect((await readTable(s, ['b', 'dest']))!.value).toMatchObject({ uid: t.uid, path: t.path });
        await assertTableInvariants(s);
      });

      it('source moving and destination arriving: a describe of the destination commits it', async () => {
        const t = await table(['a', 't']);
        const moving = await markMoving(s, ['a', 't'], (await readRaw(s, ['a', 't']))!, ['b', 'dest']);
        await s.registry.create<TableRecord>(keys.table(s.project, ['b', 'dest']), {
          ...t,
          id: ['b', 'dest'],
          state: 'arriving',
          move: { nonce: moving.value.move!.nonce, from: ['a', 't'] },
        });
        expect((await describeTable(s, { id: ['b', 'dest'], identity })).location).toContain(t.path);
        expect(await describeCode(['a', 't'])).toBe(4);
        expect((await readRaw(s, ['a', 't']))).toBeUndefined();
      });

      it('a stale arrival (its move was undone) is removed by the next reader', async () => {
        const t = await table(['a', 't']);
        await s.registry.create<TableRecord>(keys.table(s.project, ['b', 'ghost']), {
          ...t,
          id: ['b', 'ghost'],
          state: 'arriving',
          move: { nonce: 'an-undone-attempt', from: ['a', 't'] },
        });
        expect(await describeCode(['b', 'ghost'])).toBe(4);
        expect(await readRaw(s, ['b', 'ghost'])).toBeUndefined();
        expect((await readTable(s, ['a', 't']))!.value.uid).toBe(t.uid);
        await assertTableInvariants(s);
      });

      it('a move into a name taken meanwhile is undone by the next reader', async () => {
        const t = await table(['a', 't']);
        await markMoving(s, ['a', 't'], (await readRaw(s, ['a', 't']))!, ['b', 'dest']);
        await table(['b', 'dest']);
        expect((await readTable(s, ['a', 't']))!.value).toMatchObject({ uid: t.uid });
        expect((await readTable(s, ['a', 't']))!.value.state).toBeUndefined();
        await assertTableInvariants(s);
      });

      it('a move into a namespace dropped meanwhile is undone; a cascade never loses the table', async () => {
        const t = await table(['a', 't']);
        await markMoving(s, ['a', 't'], (await readRaw(s, ['a', 't']))!, ['b', 'dest']);
        await dropNamespace(s, { id: ['b'], mode: 'fail', behavior: 'cascade' });
        expect((await readTable(s, ['a', 't']))!.value.uid).toBe(t.uid);
        expect(await objectsUnder(store, t.path)).toHaveLength(2);
        await assertTableInvariants(s);
      });

      it('a cascade of the source namespace lets a committed move get away', async () => {
        const t = await table(['a', 't']);
        await markMoving(s, ['a', 't'], (await readRaw(s, ['a', 't']))!, ['b', 'dest']);
        await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
        expect((await readTable(s, ['b', 'dest']))!.value.uid).toBe(t.uid);
        expect(await objectsUnder(store, t.path)).toHaveLength(2);
        await assertTableInvariants(s);
      });
    });
  });

  describe('Cascade DropNamespace', () => {
    it('drops every table of the subtree, bytes and claims included', async () => {
      await createNamespace(s, { id: ['a', 'deep'], mode: 'create', properties: {} });
      const tables = [await table(['a', 't1']), await table(['a', 't2']), await table(['a', 'deep', 't3'])];
      const keep = await table(['b', 'keep']);
      await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' });
      for (const t of tables) expect(await objectsUnder(store, t.path)).toEqual([]);
      expect(await objectsUnder(store, keep.path)).toHaveLength(2);
      const claims = await allClaims(s);
      expect(claims.map((c: LocationClaimRecord) => c.path)).toEqual([keep.path]);
      await assertTableInvariants(s);
    });
  });
});
