// @covers CreateNamespace, DeclareTable, CreateProject, ListNamespaces, ListTables, ListProjects
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Names and limits (docs/governance.md): names with invisible or path-like characters are
 * refused at every door, a malformed project base URI is 404 (never the default project), and
 * oversized properties and deeply nested bodies are refused with 400 / code 13.
 */

/** One request with the path sent byte for byte: fetch would resolve `.`/`..` and `%2e` segments first. */
function raw(url: string, method: string, path: string, body?: string | Buffer): Promise<{ status: number; type: string; json: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('names and limits over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', '/v1/projects', JSON.stringify({ name: 'acme' }));
  });
  afterAll(() => s.stop());

  const post = (path: string, body: unknown = {}) => raw(s.url, 'POST', path, JSON.stringify(body));
  const get = (path: string) => raw(s.url, 'GET', path);
  const expect400 = (res: { status: number; json: any }) => {
    expect(res.status).toBe(400);
    expect(res.json.code).toBe(13);
    expect(res.json.error).toMatch(/names are 1 to 80 bytes of UTF-8, not "\." or "\.\."/);
  };

  describe('name hygiene', () => {
    // Percent-encoded as the official client sends them: RLO, zero-width space, BOM, ".", "..".
    const BAD = ['%E2%80%AEevil', 'a%E2%80%8Bb', '%EF%BB%BFbom', '%2E', '%2E%2E'];

    it('refuses such namespaces and tables, and a following list shows nothing was created', async () => {
      await post('/v1/namespace/ok/create');
      for (const bad of BAD) {
        expect400(await post(`/v1/namespace/${bad}/create`));
        expect400(await post(`/v1/namespace/ok%24${bad}/create`));
        expect400(await post(`/v1/table/ok%24${bad}/declare`));
      }
      expect((await get('/v1/namespace/%24/list')).json.namespaces).toEqual(['ok']);
      expect((await get('/v1/namespace/ok/list')).json.namespaces).toEqual([]);
      expect((await get('/v1/namespace/ok/table/list')).json.tables).toEqual([]);
    });

    it('refuses such projects and warehouses, and a following list shows nothing was created', async () => {
      for (const name of ['\u202Eevil', 'a\u200Bb', '\uFEFFbom', '.', '..', 'x\u2066y']) {
        expect400(await post('/v1/projects', { name }));
        expect400(await post('/v1/warehouses', { name, project: 'acme', storage_root: '/tmp/never-used' }));
      }
      const projects = (await get('/v1/projects')).json.projects as string[];
      expect(projects.sort()).toEqual(['acme', 'default']);
      expect((await get('/projects/acme/v1/warehouses')).json.warehouses).toEqual([]);
    });
  });

  describe('a malformed project base URI', () => {
    const MALFORMED = [
      '/projects//v1/namespace/m/create',
      '/projects/acme/../default/v1/namespace/m/create',
      '/projects/acme/%2e%2e/default/v1/namespace/m/create',
      '/projects/acme/%2E%2E/v1/namespace/m/create',
      '/projects/%2e%2e/v1/namespace/m/create',
      '/projects/./v1/namespace/m/create',
      '/projects/acme%2F..%2Fdefault/v1/namespace/m/create',
      '/projects/acme%2fx/v1/namespace/m/create',
      '/projects/acme/x/v1/namespace/m/create',
      '/projects/v1/namespace/m/create',
    ];

    it('is 404 with the JSON error contract and creates nothing in any project', async () => {
      for (const path of MALFORMED) {
        const res = await raw(s.url, 'POST', path, '{}');
        expect(res.status, path).toBe(404);
        expect(res.type).toBe('application/json');
        expect(res.json.code, path).toBe(0);
        expect(typeof res.json.error).toBe('string');
      }
      expect((await get('/v1/namespace/%24/list')).json.namespaces).not.toContain('m');
      expect((await get('/projects/acme/v1/namespace/%24/list')).json.namespaces ?? []).not.toContain('m');
    });

    it('keeps the well-formed ones: a base path prefix, a trailing slash, a project named v1-like', async () => {
      expect((await raw(s.url, 'GET', '/projects/acme/v1/namespace/%24/list')).status).toBe(200);
      expect((await raw(s.url, 'GET', '/projects/acme//v1/namespace/%24/list')).status).toBe(200);
      expect((await raw(s.url, 'GET', '/lance/v1/namespace/%24/list')).status).toBe(200);
      expect((await raw(s.url, 'GET', '//v1/namespace/%24/list')).status).toBe(200);
      expect((await raw(s.url, 'GET', '/lance/projects/acme/v1/namespace/%24/list')).status).toBe(200);
      // A project named v1 is addressed as such, not as the default project.
      const v1 = await raw(s.url, 'GET', '/projects/v1/v1/namespace/%24/list');
      expect([v1.status, v1.json.error]).toEqual([404, expect.stringContaining('project "v1"')]);
    });
  });

  describe('properties and nesting caps', () => {
    const big = (bytes: number) => Object.fromEntries(Array.from({ length: Math.ceil(bytes / 1000) }, (_, i) => [`k${i}`, 'v'.repeat(1000)]));
    const expectCap = (res: { status: number; json: any }, what: RegExp) => {
      expect(res.status).toBe(400);
      expect(res.json.code).toBe(13);
      expect(res.json.error).toMatch(what);
    };

    it('refuses a properties map over the limit at every door that stores one, and stores nothing', async () => {
      const props = big(70 * 1024);
      expectCap(await post('/v1/namespace/fat/create', { properties: props }), /properties.*65536 bytes/);
      await post('/v1/namespace/slim/create');
      expectCap(await post('/v1/table/slim%24t1/declare', { properties: props }), /properties.*65536 bytes/);
      expectCap(await post('/v1/table/slim%24t2/register', { location: 'x/t2', properties: props }), /properties.*65536 bytes/);
      expect((await get('/v1/namespace/%24/list')).json.namespaces).not.toContain('fat');
      expect((await get('/v1/namespace/slim/table/list')).json.tables).toEqual([]);
    });

    it('refuses too many properties, naming the count limit', async () => {
      const many = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`k${i}`, '']));
      expectCap(await post('/v1/namespace/many/create', { properties: many }), /1024 properties/);
    });

    it('keeps a properties map within the limits', async () => {
      const res = await post('/v1/namespace/fine/create', { properties: big(60 * 1024) });
      expect(res.status).toBe(200);
    });

    it('refuses a body nested deeper than the limit with 400 / 13 before parsing it', async () => {
      const deep = '['.repeat(2_000_000) + ']'.repeat(2_000_000);
      expectCap(await raw(s.url, 'POST', '/v1/namespace/deep/create', `{"properties":${deep}}`), /nested deeper than 64/);
      expectCap(await raw(s.url, 'POST', '/v1/namespace/deep/create', '{"a":' + '{"b":'.repeat(65) + '1' + '}'.repeat(66)), /nested deeper than 64/);
      // Brackets inside strings are text, not nesting.
      const inString = await post('/v1/namespace/brackets/create', { properties: { k: '['.repeat(10_000) + '\\"{' } });
      expect(inString.status).toBe(200);
      expect((await get('/v1/namespace/%24/list')).json.namespaces).not.toContain('deep');
    });
  });

  describe('configured limits (RASK_MAX_PROPERTIES_BYTES, RASK_MAX_JSON_DEPTH)', () => {
    let small: TestServer;
    beforeAll(async () => {
      small = await startTestServer({ RASK_MAX_PROPERTIES_BYTES: '2048', RASK_MAX_JSON_DEPTH: '8' });
      await raw(small.url, 'POST', '/v1/namespace/n/create', '{}');
    });
    afterAll(() => small.stop());

    it('bound CreateTable\'s properties query parameter too, and the depth of any body', async () => {
      // CreateTable carries its properties as one JSON query parameter beside an Arrow body;
      // a query string is bounded by the header size anyway, so a small limit shows the check.
      const q = encodeURIComponent(JSON.stringify({ k: 'v'.repeat(3000) }));
      const res = await raw(small.url, 'POST', `/v1/table/n%24t/create?properties=${q}`, Buffer.alloc(0));
      expect([res.status, res.json.code]).toEqual([400, 13]);
      expect(res.json.error).toMatch(/at most 2048 bytes of properties/);
      const deep = await raw(small.url, 'POST', '/v1/namespace/d/create', '{"a":[[[[[[[[1]]]]]]]]}');
      expect([deep.status, deep.json.code]).toEqual([400, 13]);
      expect(deep.json.error).toMatch(/nested deeper than 8/);
      expect((await raw(small.url, 'GET', '/v1/namespace/n/table/list')).json.tables).toEqual([]);
      expect((await raw(small.url, 'GET', '/v1/namespace/%24/list')).json.namespaces).toEqual(['n']);
    });
  });
});
