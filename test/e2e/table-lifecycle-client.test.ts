// @covers RenameTable, DropTable, DeregisterTable, RegisterTable, DropNamespace
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** Every file below `dir` (empty when the directory is gone). */
async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

const json = { 'content-type': 'application/json' };
const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, label: `row ${from + i}` }));

/**
 * Rename, drop, deregister and register through LanceDB's official REST client against the local
 * server, with the warehouse's managed versioning on (every commit goes through the catalog) and
 * off (the client commits straight to disk). The official client has no register/deregister
 * call, so those two go over raw HTTP, as any other client would send them.
 */
describe.each(['true', 'false'])('table lifecycle via connectNamespace("rest"), managed versioning %s', (managed) => {
  let server: TestServer;
  let db: lancedb.Connection;

  beforeAll(async () => {
    server = await startTestServer({ RASK_MANAGED_VERSIONING: managed });
    db = await lancedb.connectNamespace('rest', { uri: server.url });
  });
  afterAll(() => server.stop());

  const locationOf = async (id: string) =>
    (await server.request('POST', `/v1/table/${id}/describe`, '{}', json)).json().location as string;

  /**
   * Each test works in namespaces of its own, so it runs alone (-t) and in any order. `enc`
   * turns an id into its path form.
   */
  let seq = 0;
  async function namespaces(...names: string[]): Promise<string[]> {
    const n = ++seq;
    const made = names.map((name) => `${name}${n}`);
    for (const ns of made) await db.createNamespace([ns]);
    return made;
  }
  const enc = (...id: string[]) => id.map((p) => encodeURIComponent(p).replace(/%20/g, '+')).join('%24');

  it('renames within a namespace: the new name opens with its rows, the old one is not found', async () => {
    const [a] = await namespaces('a');
    await db.createTable('t1', rows(0, 3), [a]);
    const before = await locationOf(enc(a, 't1'));
    await db.renameTable('t1', 't2', { namespacePath: [a], newNamespacePath: [a] });
    expect(await (await db.openTable('t2', [a])).countRows()).toBe(3);
    await expect(db.openTable('t1', [a])).rejects.toThrow(/was not found/);
    expect(await locationOf(enc(a, 't2'))).toBe(before); // the pointer moved, the bytes did not
    // Still writable under its new name.
    await (await db.openTable('t2', [a])).add(rows(3, 2));
    expect(await (await db.openTable('t2', [a])).countRows()).toBe(5);
    expect(await db.tableNames([a])).toEqual(['t2']);
  });

  it('renames into another namespace, to a name with a space', async () => {
    const [a, b] = await namespaces('a', 'b');
    await db.createTable('t2', rows(0, 5), [a]);
    await db.renameTable('t2', 'moved here', { namespacePath: [a], newNamespacePath: [b] });
    expect(await (await db.openTable('moved here', [b])).countRows()).toBe(5);
    await expect(db.openTable('t2', [a])).rejects.toThrow(/was not found/);
    expect(await db.tableNames([b])).toEqual(['moved here']);
    expect(await db.tableNames([a])).toEqual([]);
  });

  it('refuses a rename onto an existing table with "already exists" and changes nothing', async () => {
    const [b] = await namespaces('b');
    await db.createTable('moved here', rows(0, 5), [b]);
    await db.createTable('other', rows(0, 1), [b]);
    await expect(db.renameTable('moved here', 'other', { namespacePath: [b], newNamespacePath: [b] })).rejects.toThrow(
      /already exists/i,
    );
    expect(await (await db.openTable('moved here', [b])).countRows()).toBe(5);
    expect(await (await db.openTable('other', [b])).countRows()).toBe(1);
  });

  it('drops: the table is not found afterwards and its bytes are gone from disk', async () => {
    const [b] = await namespaces('b');
    await db.createTable('other', rows(0, 1), [b]);
    const location = await locationOf(enc(b, 'other'));
    expect(await filesUnder(location)).not.toEqual([]);
    await db.dropTable('other', [b]);
    await expect(db.openTable('other', [b])).rejects.toThrow(/was not found/);
    expect(await filesUnder(location)).toEqual([]);
    expect(existsSync(location)).toBe(false);
    // The name is free again, at a fresh location.
    await db.createTable('other', rows(0, 2), [b]);
    expect(await locationOf(enc(b, 'other'))).not.toBe(location);
    expect(await (await db.openTable('other', [b])).countRows()).toBe(2);
  });

  it('deregisters keeping the bytes, and registers them back under a new name with their rows', async () => {
    const [a, b] = await namespaces('a', 'b');
    await db.createTable('moved here', rows(0, 5), [b]);
    const location = await locationOf(enc(b, 'moved here'));
    const dereg = await server.request('POST', `/v1/table/${enc(b, 'moved here')}/deregister`, '{}', json);
    expect(dereg.status).toBe(200);
    expect(dereg.json()).toEqual({ id: [b, 'moved here'], location, properties: {} });
    await expect(db.openTable('moved here', [b])).rejects.toThrow(/was not found/);
    expect(await filesUnder(location)).not.toEqual([]);

    const reg = await server.request('POST', `/v1/table/${enc(a, 'revived')}/register`, JSON.stringify({ location, properties: { from: 'deregistered' } }), json);
    expect(reg.status).toBe(200);
    expect(reg.json()).toEqual({ location, properties: { from: 'deregistered' } });
    const revived = await db.openTable('revived', [a]);
    expect(await revived.countRows()).toBe(5);
    expect((await revived.query().where('id = 4').toArray())[0].label).toBe('row 4');
    await revived.add(rows(5, 1));
    expect(await (await db.openTable('revived', [a])).countRows()).toBe(6);
  });

  it('refuses to register a location outside the warehouse root or one that is not a Lance dataset (code 13)', async () => {
    const [a] = await namespaces('a');
    await db.createTable('revived', rows(0, 1), [a]);
    const live = await locationOf(enc(a, 'revived'));
    const root = path.dirname(path.dirname(path.dirname(live))); // <root>/tables/<random>/<name>.lance
    const cases = [
      { location: '/tmp', message: /not inside the warehouse's storage root/ },
      { location: '../../elsewhere', message: /not inside the warehouse's storage root/ },
      { location: 's3://bucket/x.lance', message: /not inside the warehouse's storage root/ },
      { location: path.join(root, 'tables'), message: /is not a Lance dataset/ },
      { location: 'nothing/here.lance', message: /is not a Lance dataset/ },
      { location: live, message: /already the location of another table/ },
    ];
    for (const c of cases) {
      const res = await server.request('POST', `/v1/table/${enc(a, 'bad')}/register`, JSON.stringify({ location: c.location }), json);
      expect(res.status, c.location).toBe(400);
      expect(res.json().code).toBe(13);
      expect(res.json().error).toMatch(c.message);
    }
    await expect(db.openTable('bad', [a])).rejects.toThrow(/was not found/);
  });

  it('drops a namespace with Cascade, taking its tables and their bytes with it', async () => {
    const [a, b] = await namespaces('a', 'b');
    await db.createTable('revived', rows(0, 1), [a]);
    await db.createTable('other', rows(0, 2), [b]);
    const locations = [await locationOf(enc(a, 'revived'))];
    await db.createTable('extra', rows(0, 2), [a]);
    locations.push(await locationOf(enc(a, 'extra')));
    await db.dropNamespace([a], { behavior: 'cascade' });
    await expect(db.openTable('revived', [a])).rejects.toThrow(/not found/i);
    for (const location of locations) expect(await filesUnder(location)).toEqual([]);
    // Tables of other namespaces are untouched.
    expect(await (await db.openTable('other', [b])).countRows()).toBe(2);
  });
});
