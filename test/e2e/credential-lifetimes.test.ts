// @covers CreateApiKey, ListApiKeys
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLocalConfig } from '../../lib/config.js';
import { jwtServerEnv, startTestIssuer, type TestIssuer } from '../support/jwks.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * How long a credential proves anything (docs/governance.md, "Token rules" and "Key expiry"):
 * OIDC tokens must carry `exp` and a recent, not-future `iat`; API keys may expire; a key minted
 * with an expiring credential expires no later than it; two credentials at once are refused.
 */

const ADMIN = 'admin-key-for-tests-0123456789';
const MAX_AGE = 600;
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('credential lifetimes (RASK_AUTH=jwt)', () => {
  let issuer: TestIssuer;
  let server: TestServer;
  const admin = { 'x-api-key': ADMIN };
  const post = (p: string, body: unknown, headers: Record<string, string>) => server.request('POST', p, JSON.stringify(body), headers);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const keysOf = async (principal: string) => (await server.request('GET', `/v1/principals/${encodeURIComponent(principal)}/keys`, undefined, admin)).json().keys;

  beforeAll(async () => {
    issuer = await startTestIssuer();
    server = await startTestServer({ ...jwtServerEnv(issuer, ADMIN), RASK_JWT_MAX_AGE_SECONDS: String(MAX_AGE) });
    expect((await post('/v1/principals', { name: 'oidc:carol' }, admin)).status).toBe(200);
    expect((await post('/v1/principals', { name: 'dave' }, admin)).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
    await issuer.close();
  });

  const asCarol = async (token: string) => (await server.request('GET', '/v1/principals/oidc%3Acarol/keys', undefined, bearer(token))).status;

  it('refuses tokens without exp, issued in the future or older than RASK_JWT_MAX_AGE_SECONDS (401 / code 16)', async () => {
    const forged = {
      'no exp': await issuer.sign({ sub: 'carol' }, { expiresIn: null }),
      'no iat': await issuer.sign({ sub: 'carol' }, { issuedAt: null }),
      'iat a year ahead': await issuer.sign({ sub: 'carol' }, { issuedAt: nowSeconds() + 365 * 86400, expiresIn: nowSeconds() + 366 * 86400 }),
      'iat 5 minutes ahead': await issuer.sign({ sub: 'carol' }, { issuedAt: nowSeconds() + 300 }),
      'too old': await issuer.sign({ sub: 'carol' }, { issuedAt: nowSeconds() - MAX_AGE - 120, expiresIn: nowSeconds() + 3600 }),
    };
    for (const [why, token] of Object.entries(forged)) {
      const res = await server.request('GET', '/v1/principals/oidc%3Acarol/keys', undefined, bearer(token));
      expect({ why, status: res.status, code: res.json().code }).toEqual({ why, status: 401, code: 16 });
    }
    // Within the clock tolerance, and just inside the maximum age, a token is fine.
    expect(await asCarol(await issuer.sign({ sub: 'carol' }, { issuedAt: nowSeconds() + 20 }))).toBe(200);
    expect(await asCarol(await issuer.sign({ sub: 'carol' }, { issuedAt: nowSeconds() - MAX_AGE + 60 }))).toBe(200);
  });

  it('RASK_JWT_MAX_AGE_SECONDS is validated at start-up', () => {
    expect(() => loadLocalConfig({ RASK_JWT_MAX_AGE_SECONDS: '10' })).toThrow(/RASK_JWT_MAX_AGE_SECONDS: must be at least 60/);
    expect(() => loadLocalConfig({ RASK_JWT_MAX_AGE_SECONDS: 'a day' })).toThrow(/RASK_JWT_MAX_AGE_SECONDS/);
    expect(loadLocalConfig({}).RASK_JWT_MAX_AGE_SECONDS).toBe(86_400);
  });

  it('a key minted with a token expires when the token does, and may not be asked to outlive it', async () => {
    const exp = nowSeconds() + 240;
    const token = await issuer.sign({ sub: 'carol' }, { expiresIn: exp });
    const tokenExpiry = new Date(exp * 1000).toISOString();
    const minted = await post('/v1/principals/oidc%3Acarol/keys', {}, bearer(token));
    expect(minted.status).toBe(200);
    expect(minted.json().expires_at).toBe(tokenExpiry);
    // The key works (it is not the token) and its listing shows when it ends.
    expect((await server.request('GET', '/v1/principals/oidc%3Acarol/keys', undefined, { 'x-api-key': minted.json().api_key })).status).toBe(200);
    const listed = (await keysOf('oidc:carol')).find((k: { key_id: string }) => k.key_id === minted.json().key_id);
    expect(listed).toEqual({ key_id: minted.json().key_id, created_at: minted.json().created_at, revoked_at: null, expires_at: tokenExpiry });

    const before = (await keysOf('oidc:carol')).length;
    const tooLong = await post('/v1/principals/oidc%3Acarol/keys', { expires_at: '2099-01-01T00:00:00Z' }, bearer(token));
    expect({ status: tooLong.status, code: tooLong.json().code }).toEqual({ status: 400, code: 13 });
    expect(tooLong.json().error).toMatch(/outlive/);
    expect((await keysOf('oidc:carol')).length).toBe(before);
    // An earlier expiry is taken as asked.
    const sooner = new Date((exp - 60) * 1000).toISOString();
    expect((await post('/v1/principals/oidc%3Acarol/keys', { expires_at: sooner }, bearer(token))).json().expires_at).toBe(sooner);
  });

  it('a key minted with an expiring key cannot outlive it either', async () => {
    const parentExpiry = new Date(Date.now() + 3_600_000).toISOString();
    const parent = (await post('/v1/principals/dave/keys', { expires_at: parentExpiry }, admin)).json();
    expect(parent.expires_at).toBe(parentExpiry);
    const child = await post('/v1/principals/dave/keys', {}, { 'x-api-key': parent.api_key });
    expect(child.json().expires_at).toBe(parentExpiry);
    expect((await post('/v1/principals/dave/keys', { expires_at: '2099-01-01T00:00:00Z' }, { 'x-api-key': parent.api_key })).status).toBe(400);
    // The bootstrap key never expires, so what it mints without expires_at never does.
    expect((await post('/v1/principals/dave/keys', {}, admin)).json().expires_at).toBeNull();
  });

  it('an API key with an expiry works until then and is a 401 after', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const minted = await post('/v1/principals/dave/keys', { expires_at: expiresAt }, admin);
    expect(minted.status).toBe(200);
    const key = minted.json().api_key;
    const call = async () => (await server.request('GET', '/v1/principals/dave/keys', undefined, { 'x-api-key': key })).status;
    expect(await call()).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 100));
    expect(await call()).toBe(401);
    // Still listed, with its expiry (so an operator sees why it stopped working).
    expect((await keysOf('dave')).find((k: { key_id: string }) => k.key_id === minted.json().key_id)).toMatchObject({ expires_at: expiresAt, revoked_at: null });
  });

  it('refuses an expiry that is malformed or not in the future (400 / code 13), minting nothing', async () => {
    const before = (await keysOf('dave')).length;
    for (const expires_at of ['tomorrow', '2030-01-01', '2030-01-01T00:00:00', 1893456000, new Date(Date.now() - 1000).toISOString()]) {
      const res = await post('/v1/principals/dave/keys', { expires_at }, admin);
      expect({ expires_at, status: res.status, code: res.json().code }).toEqual({ expires_at, status: 400, code: 13 });
    }
    expect((await keysOf('dave')).length).toBe(before);
  });

  it('refuses a request carrying both x-api-key and a Bearer credential (401), whichever is valid', async () => {
    const token = await issuer.sign({ sub: 'carol' });
    for (const headers of [
      { 'x-api-key': ADMIN, authorization: `Bearer ${token}` },
      { 'x-api-key': 'rask_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAA', authorization: `Bearer ${ADMIN}` },
    ]) {
      const res = await server.request('GET', '/v1/projects', undefined, headers);
      expect({ status: res.status, code: res.json().code }).toEqual({ status: 401, code: 16 });
      expect(res.json().error).toMatch(/both x-api-key and Authorization: Bearer/);
    }
    expect((await server.request('GET', '/v1/projects', undefined, admin)).status).toBe(200);
    expect((await server.request('GET', '/v1/projects', undefined, bearer(ADMIN))).status).toBe(200);
  });
});
