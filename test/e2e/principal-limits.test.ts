// @covers GetPrincipalLimits, SetPrincipalLimits
/**
 * A principal's own limits (`GET|POST /v1/principals/{principal}/limits`; docs/operations.md,
 * "Per-principal limits") on the real local server with RASK_AUTH=keys: a principal reads its
 * own and no one else's, only a platform administrator sets them (a tenant cannot raise its own,
 * a project admin cannot raise anyone's), each change is an audit event naming who made it, bad
 * input is a 400 with nothing changed, and what is set is enforced at once — the principal's
 * request rate (429 / code 21 for it alone, another principal unaffected), never past its
 * project's rate, and its API-key quota.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const ADMIN = 'principal-limits-admin-key-0123456789abcdef';

describe('principal limits doors (RASK_AUTH=keys)', () => {
  let server: TestServer;
  const key: Record<'tenant' | 'padmin' | 'other', string> = { tenant: '', padmin: '', other: '' };
  const call = (method: string, p: string, k: string, body?: unknown): Promise<RawResponse> =>
    server.request(method, p, body === undefined ? undefined : JSON.stringify(body), { 'x-api-key': k, ...(body === undefined ? {} : { 'content-type': 'application/json' }) });
  const ok = async (res: Promise<RawResponse>) => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r.json();
  };
  const limitsOf = async (who: string) => ok(call('GET', `/v1/principals/${who}/limits`, ADMIN));

  beforeAll(async () => {
    server = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN, RASK_QUOTA_KEYS_PER_PRINCIPAL: '5' });
    await ok(call('POST', '/v1/projects', ADMIN, { name: 'A' }));
    await ok(call('POST', '/v1/warehouses', ADMIN, { name: 'main', project: 'A', storage_root: path.join(server.dataDir, 'projects', 'A', 'main') }));
    await ok(call('POST', '/projects/A/v1/namespace/ns1/create', ADMIN, {}));
    for (const [who, role] of [['tenant', 'writer'], ['padmin', 'admin'], ['other', 'reader']] as const) {
      await ok(call('POST', '/v1/principals', ADMIN, { name: who }));
      await ok(call('POST', '/v1/grants', ADMIN, { principal: who, project: 'A', role }));
      key[who] = (await ok(call('POST', `/v1/principals/${who}/keys`, ADMIN, {}))).api_key;
    }
  }, 60_000);
  afterAll(() => server?.stop());

  it('a principal reads its own limits (the defaults, and what is counted), no one else’s', async () => {
    expect(await ok(call('GET', '/v1/principals/tenant/limits', key.tenant))).toEqual({
      principal: 'tenant',
      keys: { limit: 5, source: 'default', in_use: 1 },
      rate: { per_second: null, burst: null, source: 'default' },
    });
    const r = await call('GET', '/v1/principals/other/limits', key.tenant);
    expect([r.status, r.json().code], r.text).toEqual([403, 15]);
    const missing = await call('GET', '/v1/principals/nobody/limits', ADMIN);
    expect(missing.status, missing.text).toBe(404);
  });

  it('only a platform administrator sets them: a tenant cannot raise its own, a project admin no one’s; each refusal is audited, nothing changed', async () => {
    const before = await limitsOf('tenant');
    const padminBefore = await limitsOf('padmin');
    for (const k of [key.tenant, key.padmin]) {
      for (const target of ['tenant', 'padmin']) {
        const r = await call('POST', `/v1/principals/${target}/limits`, k, { keys: 1000, rate: { per_second: 10000 } });
        expect([r.status, r.json().code], r.text).toEqual([403, 15]);
      }
    }
    // Nor through the project's door.
    const r = await call('POST', '/projects/A/v1/limits', key.padmin, { rate: { per_second: 10000 } });
    expect([r.status, r.json().code], r.text).toEqual([403, 15]);
    expect(await limitsOf('tenant')).toEqual(before);
    expect(await limitsOf('padmin')).toEqual(padminBefore);
  });

  it('bad input is 400 / 13 naming the field, and nothing changes', async () => {
    const before = await limitsOf('tenant');
    for (const [body, message] of [
      [{ keys: -1 }, /keys must be a whole number from 0/],
      [{ keys: 'many' }, /keys must be a whole number/],
      [{ rate: { per_second: 1.5 } }, /rate must be \{"per_second"/],
      [{ rate: { per_second: 1, brust: 2 } }, /rate must be \{"per_second"/],
      [{ kyes: 3 }, /unknown field "kyes"/],
    ] as const) {
      const r = await call('POST', '/v1/principals/tenant/limits', ADMIN, body);
      expect([r.status, r.json().code], r.text).toEqual([400, 13]);
      expect(r.json().error).toMatch(message);
    }
    expect(await limitsOf('tenant')).toEqual(before);
  });

  it("a principal's own rate throttles it alone: 429 / code 21 with Retry-After; the change is an audit event", async () => {
    const set = await ok(call('POST', '/v1/principals/tenant/limits', ADMIN, { rate: { per_second: 1, burst: 3 } }));
    expect(set.rate).toEqual({ per_second: 1, burst: 3, source: 'principal' });
    const statuses: number[] = [];
    let refused: RawResponse | undefined;
    for (let i = 0; i < 6; i++) {
      const r = await call('POST', '/projects/A/v1/namespace/ns1/exists', key.tenant, {});
      statuses.push(r.status);
      if (r.status === 429) refused = r;
    }
    expect(refused, String(statuses)).toBeDefined();
    expect(refused!.json()).toMatchObject({ code: 21, error: expect.stringMatching(/principal "tenant" is over its rate limit of 1 requests per second \(burst 3\)/) });
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another principal of the same project is unaffected.
    for (let i = 0; i < 6; i++) expect((await call('POST', '/projects/A/v1/namespace/ns1/exists', key.other, {})).status).toBe(200);
    // The audit trail: who set what.
    const events = await readEvents(server.dataDir);
    const audit = events.filter((e) => e.type === 'dev.rask.principal.limits_set');
    expect(audit.length).toBeGreaterThanOrEqual(1);
    expect(audit.at(-1)!.data).toMatchObject({ principal: 'admin', operation: 'SetPrincipalLimits', id: ['tenant'] });
    expect(events.some((e) => e.type === 'dev.rask.access.denied' && e.data.operation === 'SetPrincipalLimits')).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await ok(call('POST', '/v1/principals/tenant/limits', ADMIN, { rate: null }))).rate).toEqual({ per_second: null, burst: null, source: 'default' });
  });

  it("a principal's own rate never takes it past its project's: the project's bucket still applies", async () => {
    await ok(call('POST', '/projects/A/v1/limits', ADMIN, { rate: { per_second: 1, burst: 2 } }));
    await ok(call('POST', '/v1/principals/padmin/limits', ADMIN, { rate: { per_second: 1000, burst: 1000 } }));
    const statuses: number[] = [];
    let refused: RawResponse | undefined;
    for (let i = 0; i < 5; i++) {
      const r = await call('POST', '/projects/A/v1/namespace/ns1/exists', key.padmin, {});
      statuses.push(r.status);
      if (r.status === 429) refused = r;
    }
    expect(refused, String(statuses)).toBeDefined();
    expect(refused!.json().error).toMatch(/project "A" is over its rate limit of 1 requests per second/);
    // The project's bucket refills before its limit is cleared (that request is the project's too).
    await new Promise((r) => setTimeout(r, 1100));
    await ok(call('POST', '/projects/A/v1/limits', ADMIN, { rate: null }));
    await ok(call('POST', '/v1/principals/padmin/limits', ADMIN, { rate: null }));
  });

  it('a keys quota set by the platform administrator is enforced at once on the tenant’s own mints', async () => {
    expect((await ok(call('POST', '/v1/principals/tenant/limits', ADMIN, { keys: 2 }))).keys).toEqual({ limit: 2, source: 'principal', in_use: 1 });
    await ok(call('POST', '/v1/principals/tenant/keys', key.tenant, {}));
    const refused = await call('POST', '/v1/principals/tenant/keys', key.tenant, {});
    expect([refused.status, refused.json().code], refused.text).toEqual([403, 15]);
    expect(refused.json().error).toMatch(/principal "tenant" has reached its quota of 2 API keys/);
    expect((await ok(call('GET', '/v1/principals/tenant/keys', key.tenant))).keys).toHaveLength(2);
  });
});

async function readEvents(dataDir: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const dir = path.join(dataDir, 'events');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.ndjson')).sort();
  const lines = (await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')))).join('').split('\n').filter(Boolean);
  return lines.map((l) => JSON.parse(l));
}
