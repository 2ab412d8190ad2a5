// @covers CreatePrincipal, ListPrincipals, CreateApiKey, ListApiKeys, RevokeApiKey
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';
import { jwtServerEnv, startTestIssuer, type TestIssuer } from '../support/jwks.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ADMIN = 'admin-key-for-tests-0123456789';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

describe('API keys (RASK_AUTH=keys)', () => {
  let server: TestServer;
  const callOn = (on: TestServer, method: string, p: string, key: string | undefined, body?: unknown, header = 'x-api-key') =>
    on.request(method, p, body === undefined ? undefined : JSON.stringify(body), key ? { [header]: header === 'authorization' ? `Bearer ${key}` : key } : {});
  const call = (method: string, p: string, key: string | undefined, body?: unknown, header = 'x-api-key') =>
    server.request(method, p, body === undefined ? undefined : JSON.stringify(body), key ? { [header]: header === 'authorization' ? `Bearer ${key}` : key } : {});

  beforeAll(async () => {
    server = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
  });
  afterAll(() => server.stop());

  it('answers 401 / code 16 without a key or with a wrong one, before looking at the request', async () => {
    for (const key of [undefined, 'nope-nope-nope-nope', 'rask_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await call('POST', '/v1/namespace/a/create', key, undefined);
      expect(res.status).toBe(401);
      expect(res.json().code).toBe(16);
    }
    // Identity (401) comes before shape (400): a malformed body is not looked at.
    const malformed = await server.request('POST', '/v1/namespace/a/create', '{not json');
    expect(malformed.status).toBe(401);
    expect((await call('POST', '/v1/namespace/a/create', ADMIN, undefined)).status).toBe(200);
    expect((await call('POST', '/v1/namespace/a/describe', ADMIN, undefined, 'authorization')).status).toBe(200);
  });

  it('mints a key once, stores only its hash, lists it without the secret and revokes it', async () => {
    expect((await call('POST', '/v1/principals', ADMIN, { name: 'alice' })).status).toBe(200);
    expect((await call('GET', '/v1/principals', ADMIN)).json().principals).toEqual(['alice']);
    const minted = (await call('POST', '/v1/principals/alice/keys', ADMIN, {})).json();
    expect(minted.api_key).toMatch(/^rask_[a-z0-9]+_[A-Za-z0-9_-]{40,}$/);
    const secret = minted.api_key.split('_').slice(2).join('_');

    const files = await filesUnder(server.dataDir);
    for (const f of files) expect((await readFile(f)).includes(secret), f).toBe(false);

    const listed = (await call('GET', '/v1/principals/alice/keys', minted.api_key)).json();
    expect(listed.keys).toEqual([{ key_id: minted.key_id, created_at: minted.created_at, revoked_at: null, expires_at: null }]);
    expect(JSON.stringify(listed)).not.toContain(secret);

    // Alice manages her own keys, nobody else's.
    const own = await call('POST', '/v1/principals/alice/keys', minted.api_key, {});
    expect(own.status).toBe(200);
    await call('POST', '/v1/principals', ADMIN, { name: 'bob' });
    expect((await call('POST', '/v1/principals/bob/keys', minted.api_key, {})).status).toBe(403);
    expect((await call('POST', '/v1/principals/nobody/keys', ADMIN, {})).json().error).toContain('POST /v1/principals');

    const revoked = await call('POST', `/v1/principals/alice/keys/${minted.key_id}/revoke`, ADMIN, {});
    expect(revoked.json()).toMatchObject({ revoked: true });
    expect((await call('GET', '/v1/principals/alice/keys', minted.api_key)).status).toBe(401);
    expect((await call('GET', '/v1/principals/alice/keys', own.json().api_key)).status).toBe(200);
  });

  it('the official client authenticates with a key against a non-default project base URI', async () => {
    // A server of its own: the principal list asserted above stays exactly what that test made.
    const own = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
    const admin = async (method: string, p: string, body: unknown) => {
      const res = await callOn(own, method, p, ADMIN, body);
      expect([p, res.status]).toEqual([p, 200]);
      return res.json();
    };
    // Inside the local default storage (<data dir>/projects/<project>, docs/governance.md).
    const root = path.join(own.dataDir, 'projects', 'acme', 'main');
    try {
      await admin('POST', '/v1/projects', { name: 'acme' });
      await admin('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: root });
      await admin('POST', '/v1/principals', { name: 'alice' });
      const key = (await admin('POST', '/v1/principals/alice/keys', {})).api_key;
      const uri = `${own.url}/projects/acme`;
      const denied = await lancedb.connectNamespace('rest', { uri, headers: { 'x-api-key': key } });
      await expect(denied.createNamespace(['sales'])).rejects.toThrow(/may not namespace:create/);
      await admin('POST', '/v1/grants', { project: 'acme', principal: 'alice', role: 'writer' });
      const db = await lancedb.connectNamespace('rest', { uri, headers: { 'x-api-key': key } });
      await db.createNamespace(['sales']);
      const t = await db.createTable('orders', [{ id: 1 }, { id: 2 }], ['sales']);
      expect(await t.countRows()).toBe(2);
      const anonymous = await lancedb.connectNamespace('rest', { uri });
      await expect(anonymous.listNamespaces([])).rejects.toThrow(/credentials/);
    } finally {
      await own.stop();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('bootstrap admin key', () => {
  it('is generated at the first start, printed once, and works; later starts do not print it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rask-boot-'));
    const config = loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dataDir, RASK_AUTH: 'keys', RASK_JOBS_INTERVAL_MS: '0' });
    try {
      const first = await startLocalServer(config);
      const line = first.notices.find((n) => n.includes('generated'))!;
      const key = /(rask_\S+)$/.exec(line)![1];
      const ok = await fetch(`${first.url}/v1/projects`, { headers: { 'x-api-key': key } });
      expect(ok.status).toBe(200);
      await first.close();
      const second = await startLocalServer(config);
      expect(second.notices.join('\n')).not.toContain(key);
      expect((await fetch(`${second.url}/v1/projects`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('warns at start-up when authentication is off', async () => {
    const server = await startTestServer();
    try {
      expect(server.notices.join('\n')).toMatch(/WARNING: RASK_AUTH=off/);
    } finally {
      await server.stop();
    }
  });
});

describe('OIDC tokens (RASK_AUTH=jwt)', () => {
  let issuer: TestIssuer;
  let server: TestServer;
  let root: string;

  beforeAll(async () => {
    issuer = await startTestIssuer();
    server = await startTestServer(jwtServerEnv(issuer, ADMIN));
    root = path.join(server.dataDir, 'projects', 'acme', 'main');
    const admin = { 'x-api-key': ADMIN };
    await server.request('POST', '/v1/projects', JSON.stringify({ name: 'acme' }), admin);
    await server.request('POST', '/v1/warehouses', JSON.stringify({ name: 'main', project: 'acme', storage_root: root }), admin);
    // A token's subject is granted like any principal once it is registered.
    // Token subjects are principals named oidc:<sub>, apart from key holders.
    expect((await server.request('POST', '/v1/grants', JSON.stringify({ project: 'acme', principal: 'oidc:carol', role: 'writer' }), admin)).status).toBe(404);
    await server.request('POST', '/v1/principals', JSON.stringify({ name: 'oidc:carol' }), admin);
    expect((await server.request('POST', '/v1/grants', JSON.stringify({ project: 'acme', principal: 'oidc:carol', role: 'writer' }), admin)).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
    await issuer.close();
    await rm(root, { recursive: true, force: true });
  });

  it('the official client works with a valid token against a project base URI', async () => {
    const token = await issuer.sign({ sub: 'carol' });
    const db = await lancedb.connectNamespace('rest', { uri: `${server.url}/projects/acme`, headers: { Authorization: `Bearer ${token}` } });
    await db.createNamespace(['lab']);
    expect((await db.listNamespaces([])).namespaces).toEqual(['lab']);
    const t = await db.createTable('runs', [{ id: 1 }], ['lab']);
    expect(await t.countRows()).toBe(1);
  });

  it('answers 401 / code 16 to expired, wrong-audience and wrong-key tokens', async () => {
    const bad = {
      expired: await issuer.sign({ sub: 'carol' }, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      audience: await issuer.sign({ sub: 'carol' }, { audience: 'someone-else' }),
      key: await issuer.sign({ sub: 'carol' }, { foreignKey: true }),
    };
    for (const [why, token] of Object.entries(bad)) {
      const res = await server.request('GET', '/projects/acme/v1/namespace/%24/list', undefined, { authorization: `Bearer ${token}` });
      expect(res.status, why).toBe(401);
      expect(res.json().code, why).toBe(16);
    }
    const good = await server.request('GET', '/projects/acme/v1/namespace/%24/list', undefined, { authorization: `Bearer ${await issuer.sign({ sub: 'carol' })}` });
    expect(good.status).toBe(200);
    // A token whose subject is "admin" is oidc:admin, not the bootstrap administrator.
    const impostor = await server.request('GET', '/v1/projects', undefined, { authorization: `Bearer ${await issuer.sign({ sub: 'admin' })}` });
    expect(impostor.status).toBe(403);
  });
});
