// @covers GetTableProtection, SetTableProtection, GetNamespaceProtection, SetNamespaceProtection, UndropTable, ListTableTasks
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The lifecycle doors over HTTP with the official client (docs/lifecycle.md): protection and
 * force on a table and a namespace, and a recoverable drop undone with every row, version and
 * tag intact, in a warehouse that keeps dropped tables for 7 days.
 */
describe('lifecycle doors with the official client', () => {
  let s: TestServer;
  let db: lancedb.Connection;
  const post = (path: string, body: unknown = {}) => s.request('POST', `${path}${path.includes('?') ? '&' : '?'}delimiter=%24`, JSON.stringify(body), { 'content-type': 'application/json' });
  const get = (path: string) => s.request('GET', `${path}?delimiter=%24`);
  const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));

  beforeAll(async () => {
    s = await startTestServer({ RASK_TRASH_GRACE_DAYS: '7' });
    db = await lancedb.connectNamespace('rest', { uri: s.url });
    await db.createNamespace(['life']);
  });
  afterAll(() => s?.stop());

  it('a protected table refuses drop and rename (409 / 19) until force=true; protection reads back', async () => {
    await db.createTable('guarded', rows(0, 3), ['life']);
    expect((await post('/v1/table/life%24guarded/describe')).json().protected).toBe(false);
    expect((await post('/v1/table/life%24guarded/protection', { protected: true })).json()).toMatchObject({ protected: true, id: ['life', 'guarded'] });
    expect((await get('/v1/table/life%24guarded/protection')).json()).toMatchObject({ protected: true });
    // Every describe carries it as a top-level boolean, the detailed and the plain one (every open).
    expect((await post('/v1/table/life%24guarded/describe', { load_detailed_metadata: true })).json()).toMatchObject({ protected: true, version: 1 });
    expect((await post('/v1/table/life%24guarded/describe')).json().protected).toBe(true);
    expect((await post('/v1/namespace/life/describe')).json()).toEqual({ properties: {}, protected: false });
    await expect(db.dropTable('guarded', ['life'])).rejects.toThrow();
    const refused = await post('/v1/table/life%24guarded/rename', { new_table_name: 'g2' });
    expect(refused.status).toBe(409);
    expect(refused.json()).toMatchObject({ code: 19 });
    expect(await (await db.openTable('guarded', ['life'])).countRows()).toBe(3);
    // Unprotected again: the record still says it may be protected, the protection record decides.
    expect((await post('/v1/table/life%24guarded/protection', { protected: false })).status).toBe(200);
    expect((await post('/v1/table/life%24guarded/describe')).json().protected).toBe(false);
    expect((await post('/v1/table/life%24guarded/protection', { protected: true })).status).toBe(200);
    expect((await post('/v1/table/life%24guarded/drop?force=true&purge=true')).status).toBe(200);
    await expect(db.openTable('guarded', ['life'])).rejects.toThrow();
    // A re-created name is unprotected.
    await db.createTable('guarded', rows(0, 1), ['life']);
    expect((await post('/v1/table/life%24guarded/describe')).json().protected).toBe(false);
  });

  it('a namespace with a protected table refuses a cascade drop, naming the table', async () => {
    await db.createNamespace(['keep']);
    await db.createTable('precious', rows(0, 2), ['keep']);
    expect((await post('/v1/table/keep%24precious/protection', { protected: true })).status).toBe(200);
    const refused = await post('/v1/namespace/keep/drop', { behavior: 'Cascade' });
    expect(refused.status).toBe(409);
    expect(refused.json().error).toContain('["keep","precious"]');
    expect(await (await db.openTable('precious', ['keep'])).countRows()).toBe(2);
    expect((await post('/v1/namespace/keep/protection', { protected: true })).json()).toMatchObject({ protected: true });
    expect((await get('/v1/namespace/keep/protection')).json()).toMatchObject({ protected: true });
    expect((await post('/v1/namespace/keep/protection', { protected: 'yes' })).json()).toMatchObject({ code: 13 });
  });

  it('drop with grace keeps the table restorable: undrop brings back rows, versions and tags', async () => {
    const table = await db.createTable('events', rows(0, 10), ['life']);
    await table.add(rows(10, 5));
    await (await table.tags()).create('v1', 1);
    const versions = (await table.listVersions()).map((v) => v.version);
    await db.dropTable('events', ['life']);
    await expect(db.openTable('events', ['life'])).rejects.toThrow();

    const tasks = (await get('/v1/table/life%24events/tasks')).json().tasks;
    expect(tasks).toEqual([expect.objectContaining({ kind: 'trash', id: ['life', 'events'] })]);
    expect(Date.parse(tasks[0].expires_at) - Date.parse(tasks[0].dropped_at)).toBe(7 * 86_400_000);

    const undone = await post('/v1/table/life%24events/undrop');
    expect(undone.status, undone.text).toBe(200);
    expect(undone.json()).toMatchObject({ id: ['life', 'events'], restored: true });
    const back = await db.openTable('events', ['life']);
    expect(await back.countRows()).toBe(15);
    expect((await back.listVersions()).map((v) => v.version)).toEqual(versions);
    expect(Object.keys(await (await back.tags()).list())).toEqual(['v1']);
    expect((await get('/v1/table/life%24events/tasks')).json().tasks).toEqual([]);
  });

  it('undrop onto a re-used name answers 409 / 5, and restores under another name', async () => {
    await db.createTable('reused', rows(0, 4), ['life']);
    await db.dropTable('reused', ['life']);
    await db.createTable('reused', rows(100, 1), ['life']);
    const conflict = await post('/v1/table/life%24reused/undrop');
    expect(conflict.status).toBe(409);
    expect(conflict.json()).toMatchObject({ code: 5 });
    expect((await post('/v1/table/life%24reused/undrop', { new_table_name: 'reused_old' })).status).toBe(200);
    expect(await (await db.openTable('reused_old', ['life'])).countRows()).toBe(4);
    expect(await (await db.openTable('reused', ['life'])).countRows()).toBe(1);
  });
});
