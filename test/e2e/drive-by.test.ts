// @covers CreateWarehouse, DeactivateWarehouse, ListWarehouses, CreateNamespace, ListNamespaces
import { request as httpRequest, createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLocalConfig } from '../../lib/config.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Drive-by requests against the local server (docs/governance.md, "Threat model of the local
 * server"): a web page's cross-origin "simple" POST and a DNS-rebound page (foreign Host) are
 * refused before routing and change nothing, JSON doors want a JSON content type, and the
 * official client — whose requests are captured here on the wire — keeps working.
 */

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** node:http, not fetch: fetch would not let a test forge `Host`, nor leave content-type unset. */
function raw(url: string, method: string, p: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path: p, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const expectError = (res: Raw, status: number, code: number, message: RegExp) => {
  expect({ status: res.status, type: res.headers['content-type'] }).toEqual({ status, type: 'application/json' });
  const body = res.json();
  expect(body).toMatchObject({ code, error: expect.stringMatching(message), instance: expect.any(String) });
};

describe('the local server refuses drive-by requests', () => {
  let server: TestServer;
  let victim: string;
  let port: string;

  beforeAll(async () => {
    server = await startTestServer();
    port = new URL(server.url).port;
    victim = await mkdtemp(path.join(tmpdir(), 'rask-victim-'));
    await writeFile(path.join(victim, 'precious.txt'), 'keep me');
  });
  afterAll(async () => {
    await server.stop();
    await rm(victim, { recursive: true, force: true });
  });

  const warehouses = async () => (await server.request('GET', '/v1/warehouses')).json().warehouses as string[];

  it('a cross-origin text/plain POST (the CSRF probe of issue 24) is refused and creates nothing', async () => {
    const probe = JSON.stringify({ name: 'x', storage_root: victim });
    const res = await raw(server.url, 'POST', '/v1/warehouses', { origin: 'http://evil.example', 'content-type': 'text/plain;charset=UTF-8' }, probe);
    expectError(res, 403, 15, /origin/i);
    // The same page with the JSON type (it would need a preflight, which gets no CORS answer) is refused too.
    const json = await raw(server.url, 'POST', '/v1/warehouses', { origin: 'http://evil.example', 'content-type': 'application/json' }, probe);
    expectError(json, 403, 15, /origin/i);
    // A sandboxed frame or a file:// page says `Origin: null`.
    expectError(await raw(server.url, 'POST', '/v1/warehouses', { origin: 'null', 'content-type': 'application/json' }, probe), 403, 15, /origin/i);
    // A body-less POST from a page (fetch with no body sends no content type) is refused by its Origin alone.
    expectError(await raw(server.url, 'POST', '/v1/warehouses/default/deactivate', { origin: 'http://evil.example' }), 403, 15, /origin/i);
    expect(await warehouses()).toEqual(['default']);
    expect(await readdir(victim)).toEqual(['precious.txt']);
  });

  it('a foreign Host (DNS rebinding) is refused before routing and changes nothing', async () => {
    const probe = JSON.stringify({ name: 'x', storage_root: victim });
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost:${Number(port) + 1}`]) {
      const res = await raw(server.url, 'POST', '/v1/warehouses', { host, origin: `http://${host}`, 'content-type': 'text/plain' }, probe);
      expectError(res, 403, 15, /host/i);
      // Without an Origin (a rebound page's same-origin GET may omit it) the Host alone refuses.
      expectError(await raw(server.url, 'GET', '/v1/warehouses', { host }), 403, 15, /host/i);
    }
    expect(await warehouses()).toEqual(['default']);
    expect(await readdir(victim)).toEqual(['precious.txt']);
  });

  it("the server's own names, with its port, are served; a same-origin Origin is fine", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      const res = await raw(server.url, 'GET', '/v1/namespace/%24/list', { host });
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
    }
    const same = await raw(server.url, 'POST', '/v1/namespace/same/create', { origin: server.url, 'content-type': 'application/json' }, '{}');
    expect(same.status).toBe(200);
  });

  it('a JSON door with a body of another content type gets 415 / code 13 and changes nothing', async () => {
    const body = JSON.stringify({ id: ['typed'] });
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      expectError(await raw(server.url, 'POST', '/v1/namespace/typed/create', { 'content-type': type }, body), 415, 13, /application\/json/);
    }
    // A body with no content type at all (a page's fetch of a Blob sends none) is refused too.
    expectError(await raw(server.url, 'POST', '/v1/namespace/typed/create', {}, body), 415, 13, /application\/json/);
    // A form post with an empty body is still a form post.
    expectError(await raw(server.url, 'POST', '/v1/warehouses/default/deactivate', { 'content-type': 'application/x-www-form-urlencoded' }, ''), 415, 13, /application\/json/);
    const names = (await server.request('GET', '/v1/namespace/%24/list')).json().namespaces as string[];
    expect(names).not.toContain('typed');
    // JSON types with parameters, and +json types, are JSON.
    for (const [name, type] of [['t1', 'application/json; charset=utf-8'], ['t2', 'Application/JSON'], ['t3', 'application/merge-patch+json']]) {
      expect((await raw(server.url, 'POST', `/v1/namespace/${name}/create`, { 'content-type': type }, '{}')).status, type).toBe(200);
    }
    // A JSON door called with no body and no content type (curl -X POST) still works.
    expect((await raw(server.url, 'POST', '/v1/namespace/bare/create')).status).toBe(200);
  });
});

describe('trusted browser apps and proxies (RASK_ALLOWED_ORIGINS, RASK_ALLOWED_HOSTS)', () => {
  let server: TestServer;
  const APP = 'http://localhost:3000';

  beforeAll(async () => {
    server = await startTestServer({ RASK_ALLOWED_ORIGINS: `${APP}, https://ui.example`, RASK_ALLOWED_HOSTS: 'rask.internal,proxy.example:8443' });
  });
  afterAll(() => server.stop());

  it('answers an allowed origin\'s preflight and marks its answers for CORS; other origins stay refused', async () => {
    const preflight = await raw(server.url, 'OPTIONS', '/v1/namespace/app/create', {
      origin: APP,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, x-api-key',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'content-type, x-api-key',
      vary: 'origin',
    });
    const created = await raw(server.url, 'POST', '/v1/namespace/app/create', { origin: APP, 'content-type': 'application/json' }, '{}');
    expect(created.status).toBe(200);
    expect(created.headers['access-control-allow-origin']).toBe(APP);
    // An allowed origin still sends JSON doors JSON.
    expect((await raw(server.url, 'POST', '/v1/namespace/app2/create', { origin: APP, 'content-type': 'text/plain' }, '{}')).status).toBe(415);
    const foreign = await raw(server.url, 'OPTIONS', '/v1/namespace/app/create', { origin: 'http://localhost:3001', 'access-control-request-method': 'POST' });
    expectError(foreign, 403, 15, /origin/);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('serves listed host names (any port, or the listed one) and still refuses others', async () => {
    expect((await raw(server.url, 'GET', '/v1/namespace/%24/list', { host: 'rask.internal' })).status).toBe(200);
    expect((await raw(server.url, 'GET', '/v1/namespace/%24/list', { host: 'rask.internal:9999' })).status).toBe(200);
    expect((await raw(server.url, 'GET', '/v1/namespace/%24/list', { host: 'proxy.example:8443' })).status).toBe(200);
    expectError(await raw(server.url, 'GET', '/v1/namespace/%24/list', { host: 'proxy.example:9000' }), 403, 15, /RASK_ALLOWED_HOSTS/);
    expectError(await raw(server.url, 'GET', '/v1/namespace/%24/list', { host: 'evil.example' }), 403, 15, /RASK_ALLOWED_HOSTS/);
  });

  it('refuses a cross-site browser request that carries no Origin (Sec-Fetch-Site)', async () => {
    expectError(await raw(server.url, 'GET', '/v1/warehouses', { 'sec-fetch-site': 'cross-site' }), 403, 15, /cross-site/);
    expect((await raw(server.url, 'GET', '/v1/warehouses', { 'sec-fetch-site': 'none' })).status).toBe(200);
  });

  it('validates both lists at start-up', () => {
    for (const bad of ['localhost:3000', 'http://app.example/path', 'ftp://app.example', 'http://app.example/']) {
      expect(() => loadLocalConfig({ RASK_ALLOWED_ORIGINS: bad }), bad).toThrow(/RASK_ALLOWED_ORIGINS/);
    }
    expect(() => loadLocalConfig({ RASK_ALLOWED_HOSTS: 'http://rask.internal' })).toThrow(/RASK_ALLOWED_HOSTS/);
    expect(loadLocalConfig({ RASK_ALLOWED_ORIGINS: 'http://a.example, https://b.example:8443', RASK_ALLOWED_HOSTS: '' })).toMatchObject({
      RASK_ALLOWED_ORIGINS: ['http://a.example', 'https://b.example:8443'],
      RASK_ALLOWED_HOSTS: [],
    });
    expect(loadLocalConfig({})).toMatchObject({ RASK_ALLOWED_ORIGINS: [], RASK_ALLOWED_HOSTS: [] });
  });

  it('authentication is off by default only on loopback: serving the network without it must be asked for', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'rask.internal']) {
      expect(() => loadLocalConfig({ RASK_HOST: host }), host).toThrow(/RASK_AUTH is not set/);
      expect(loadLocalConfig({ RASK_HOST: host, RASK_AUTH: 'off' }).RASK_AUTH).toBe('off');
      expect(loadLocalConfig({ RASK_HOST: host, RASK_AUTH: 'keys' }).RASK_AUTH).toBe('keys');
    }
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) expect(loadLocalConfig({ RASK_HOST: host }).RASK_AUTH).toBe('off');
  });
});

describe('what the official client sends, captured on the wire', () => {
  let server: TestServer;
  let proxy: Server;
  let proxyUrl: string;
  const seen: { method: string; path: string; type: string | undefined; bytes: number; origin?: string }[] = [];

  beforeAll(async () => {
    server = await startTestServer({ RASK_MANAGED_VERSIONING: 'true' });
    const target = new URL(server.url);
    // Records each request, then forwards it with the server's own Host (as a client pointed at the server would send).
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        seen.push({ method: req.method!, path: req.url!, type: req.headers['content-type'], bytes: body.length, ...(req.headers.origin ? { origin: req.headers.origin } : {}) });
        const forward = httpRequest(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await server.stop();
  });

  it('sends application/json on every JSON body, nothing on Arrow bodies and body-less calls, and never an Origin', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: proxyUrl });
    await db.createNamespace(['wire']);
    const t = await db.createTable('t', [{ id: 1, v: 'a' }], ['wire']);
    await t.add([{ id: 2, v: 'b' }]);
    expect(await t.countRows()).toBe(2);
    const again = await db.openTable('t', ['wire']);
    expect(await again.countRows()).toBe(2);
    expect(await db.tableNames(['wire'])).toEqual(['t']);
    await db.renameTable('t', 't2', { namespacePath: ['wire'], newNamespacePath: ['wire'] });
    await db.dropTable('t2', ['wire']);
    await db.dropNamespace(['wire']);

    expect(seen.length).toBeGreaterThan(5);
    expect(seen.some((r) => r.path.includes('/version/'))).toBe(true); // managed versioning's calls went through too
    for (const r of seen) {
      expect(r.origin, `${r.method} ${r.path}`).toBeUndefined();
      if (r.bytes > 0) expect(r.type, `${r.method} ${r.path}`).toBe('application/json');
      else expect(r.type, `${r.method} ${r.path}`).toBeUndefined();
    }
  });
});
