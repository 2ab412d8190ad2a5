// @covers RenameTable, DropTable, DeregisterTable, RegisterTable, ListAllTables
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const json = { 'content-type': 'application/json' };

/**
 * DropTable, DeregisterTable, RegisterTable and RenameTable on the wire: the success shapes, and
 * for every failure the JSON error with its code, followed by a read proving nothing changed.
 * Every test starts from its own server holding namespaces a and b and tables a.t and a.u, so
 * each runs alone and in any order.
 */
describe('raw HTTP: table lifecycle doors', () => {
  let s: TestServer;
  let tLocation: string;
  beforeEach(async () => {
    s = await startTestServer();
    for (const ns of ['a', 'b']) await s.request('POST', `/v1/namespace/${ns}/create`, '{}', json);
    tLocation = await tableWithData('a%24t');
    await tableWithData('a%24u');
  });
  afterEach(() => s.stop());

  const post = (p: string, body: unknown = {}) => s.request('POST', p, JSON.stringify(body), json);
  const expectError = (res: RawResponse, status: number, code: number, message?: RegExp) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json().code).toBe(code);
    if (message) expect(res.json().error).toMatch(message);
  };
  const tables = async (ns: string) => (await s.request('GET', `/v1/namespace/${ns}/table/list`)).json().tables as string[];
  const describeTable = async (id: string) => (await post(`/v1/table/${id}/describe`)).json();

  /** Declares a table and writes a stand-in dataset (one committed manifest) at its location. */
  async function tableWithData(id: string): Promise<string> {
    const res = await post(`/v1/table/${id}/declare`);
    expect(res.status).toBe(200);
    const location = res.json().location as string;
    await mkdir(path.join(location, '_versions'), { recursive: true });
    await writeFile(path.join(location, '_versions', '18446744073709551614.manifest'), 'manifest');
    return location;
  }


  describe('RenameTable', () => {
    it('missing table → 404, code 4; nothing changes', async () => {
      expectError(await post('/v1/table/a%24nope/rename', { new_table_name: 'x' }), 404, 4);
      expect(await tables('a')).toEqual(['t', 'u']);
    });

    it('bad new names → 400, code 13; nothing changes', async () => {
      expectError(await post('/v1/table/a%24t/rename', {}), 400, 13, /new_table_name is required/);
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: '' }), 400, 13);
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: 'tab\there' }), 400, 13, /control character/);
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: 'x'.repeat(81) }), 400, 13, /1 to 80 bytes/);
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: 7 }), 400, 13);
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: 'x', new_namespace_id: 'b' }), 400, 13, /array of strings/);
      expect(await tables('a')).toEqual(['t', 'u']);
      expect((await describeTable('a%24t')).location).toBe(tLocation);
    });

    it('destination exists → 409, code 5; missing destination namespace → 404, code 1; nothing changes', async () => {
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: 'u' }), 409, 5, /already exists/);
      expectError(await post('/v1/table/a%24t/rename', { new_table_name: 'x', new_namespace_id: ['zz'] }), 404, 1);
      expect(await tables('a')).toEqual(['t', 'u']);
      expect((await describeTable('a%24t')).location).toBe(tLocation);
    });

    it('success → 200 {} and the table answers under its new id only', async () => {
      const res = await post('/v1/table/a%24t/rename', { new_table_name: 't moved', new_namespace_id: ['b'] });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({});
      expect((await describeTable('b%24t+moved')).location).toBe(tLocation);
      expectError(await post('/v1/table/a%24t/describe'), 404, 4);
      expect(await tables('a')).toEqual(['u']);
      expect(await tables('b')).toEqual(['t moved']);
    });
  });

  describe('DropTable and DeregisterTable', () => {
    it('missing table → 404, code 4; nothing changes', async () => {
      expectError(await post('/v1/table/a%24nope/drop'), 404, 4);
      expectError(await post('/v1/table/zz%24u/drop'), 404, 4);
      expectError(await post('/v1/table/a%24nope/deregister'), 404, 4);
      expect(await tables('a')).toEqual(['t', 'u']);
    });

    it('deregister → {id, location, properties}, the bytes stay; drop → the same shape', async () => {
      const location = await tableWithData('a%24d');
      await post('/v1/table/a%24p/declare', { properties: { owner: 'ana' } });
      const dereg = await post('/v1/table/a%24d/deregister');
      expect(dereg.json()).toEqual({ id: ['a', 'd'], location, properties: {} });
      const dropped = await post('/v1/table/a%24p/drop');
      expect(dropped.status).toBe(200);
      expect(dropped.json()).toEqual({ id: ['a', 'p'], location: expect.any(String), properties: { owner: 'ana' } });
      expect(await tables('a')).toEqual(['t', 'u']);
    });
  });

  describe('ListTables and ListAllTables', () => {
    it('with include_declared=false, a full page carries a token only when a table with data follows', async () => {
      await s.request('POST', '/v1/namespace/c/create', '{}', json);
      // Written straight to storage under managed versioning: the catalog learns of the data at
      // the next version lookup (what every Lance client's open makes), not before (markers.ts).
      for (const id of ['c%24a1', 'c%24a2']) {
        await tableWithData(id);
        expect((await post(`/v1/table/${id}/version/list`, { descending: true, limit: 1 })).json().versions).toHaveLength(1);
      }
      await post('/v1/table/c%24a3/declare'); // declared only: no data, not listed
      const list = (q: string) => s.request('GET', `/v1/namespace/c/table/list?include_declared=false&${q}`);
      expect((await list('limit=2')).json()).toEqual({ tables: ['a1', 'a2'] });
      expect((await list('limit=1')).json()).toEqual({ tables: ['a1'], page_token: 'a1' });
      expect((await s.request('GET', '/v1/table?include_declared=false&limit=2&page_token=b%24t+moved')).json()).toEqual({ tables: ['c$a1', 'c$a2'] });
      await post('/v1/namespace/c/drop', { behavior: 'Cascade' });
    });

    it('lists every table as a joined id, in pages that resume after the token', async () => {
      await tableWithData('b%24z');
      await post('/v1/table/a%24t/rename', { new_table_name: 't moved', new_namespace_id: ['b'] });
      const all = (await s.request('GET', '/v1/table')).json().tables as string[];
      expect(all).toEqual(['a$u', 'b$t moved', 'b$z']);
      // Namespace records share the walked keys, and a table that is the last key of a LIST is
      // left to the next (its rename mark would follow it), so a page may be short of the limit
      // (an upper bound) and carries a token while keys follow (docs/protocols.md).
      const first = (await s.request('GET', '/v1/table?limit=2')).json();
      expect(first.tables[0]).toBe('a$u');
      expect(first.tables.length).toBeLessThanOrEqual(2);
      expect(first.page_token).toBe(first.tables.at(-1));
      const paged: string[] = [...first.tables];
      for (let token = first.page_token; token !== undefined; ) {
        const page = (await s.request('GET', `/v1/table?limit=2&page_token=${encodeURIComponent(token)}`)).json();
        expect(page.tables.length).toBeLessThanOrEqual(2);
        if (page.page_token !== undefined) expect(page.page_token).toBe(page.tables.at(-1));
        paged.push(...page.tables);
        token = page.page_token;
      }
      expect(paged).toEqual(all);
      expect((await s.request('GET', '/v1/table?delimiter=.')).json().tables).toEqual(['a.u', 'b.t moved', 'b.z']);
      await post('/v1/table/b%24z/drop');
    });
  });

  describe('RegisterTable', () => {
    it('refuses bad requests with the right code and registers nothing', async () => {
      expectError(await post('/v1/table/a%24r/register', {}), 400, 13, /needs `location`/);
      expectError(await post('/v1/table/a%24r/register', { location: '/etc' }), 400, 13, /not inside/);
      expectError(await post('/v1/table/a%24r/register', { location: 'tables' }), 400, 13, /not a Lance dataset/);
      expectError(await post('/v1/table/a%24r/register', { location: tLocation, mode: 'sideways' }), 400, 13, /mode must be one of/);
      expectError(await post('/v1/table/zz%24r/register', { location: tLocation }), 404, 1);
      expectError(await post('/v1/table/a%24u/register', { location: tLocation }), 409, 5);
      expectError(await post('/v1/table/a%24r/register', { location: tLocation }), 400, 13, /already the location of another table/);
      expect(await tables('a')).toEqual(['t', 'u']);
    });

    it('registers by relative location (mode is case-insensitive) and answers the absolute one', async () => {
      const location = await tableWithData('a%24src');
      await post('/v1/table/a%24src/deregister');
      const relative = path.relative(path.dirname(path.dirname(path.dirname(location))), location);
      const res = await post('/v1/table/a%24r/register', { location: relative, mode: 'Create', properties: { k: 'v' } });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ location, properties: { k: 'v' } });
      expect((await describeTable('a%24r')).location).toBe(location);
    });
  });
});
