// @covers GetProjectLimits, SetProjectLimits
/**
 * The limits door (`GET|POST /v1/limits`; docs/governance.md, "Limits and quotas") on the real
 * local server with RASK_AUTH=keys: a project's members read its limits, only a platform
 * administrator sets them, a caller of another project can do neither, bad input is a 400 with
 * nothing changed, and what is set is enforced at once — an object quota at the create doors, a
 * request rate for the project — while another project is unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const ADMIN = 'limits-doors-admin-key-0123456789abcdef';

describe('limits door (RASK_AUTH=keys)', () => {
  let server: TestServer;
  const key: Record<'admin' | 'reader' | 'outsider', string> = { admin: '', reader: '', outsider: '' };
  const call = (method: string, p: string, k: string, body?: unknown): Promise<RawResponse> =>
    server.request(method, p, body === undefined ? undefined : JSON.stringify(body), { 'x-api-key': k, ...(body === undefined ? {} : { 'content-type': 'application/json' }) });
  const ok = async (res: Promise<RawResponse>) => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r.json();
  };
  const limitsRecord = async () => (await ok(call('GET', '/projects/A/v1/limits', ADMIN)));

  beforeAll(async () => {
    server = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN, RASK_QUOTA_TABLES: '100' });
    for (const p of ['A', 'B']) {
      await ok(call('POST', '/v1/projects', ADMIN, { name: p }));
      await ok(call('POST', '/v1/warehouses', ADMIN, { name: 'main', project: p, storage_root: path.join(server.dataDir, 'projects', p, 'main') }));
    }
    const grants = { admin: ['A', 'admin'], reader: ['A', 'reader'], outsider: ['B', 'admin'] } as const;
    // Not `admin`: that is the bootstrap administrator's name.
    for (const [who, [project, role]] of Object.entries(grants)) {
      await ok(call('POST', '/v1/principals', ADMIN, { name: `p-${who}` }));
      await ok(call('POST', '/v1/grants', ADMIN, { principal: `p-${who}`, project, role }));
      key[who as keyof typeof key] = (await ok(call('POST', `/v1/principals/p-${who}/keys`, ADMIN, {}))).api_key;
    }
    await ok(call('POST', '/projects/A/v1/namespace/ns1/create', ADMIN, {}));
  }, 60_000);
  afterAll(() => server?.stop());

  it("members read their project's limits: the defaults, and what is counted", async () => {
    const seen = await ok(call('GET', '/projects/A/v1/limits', key.reader));
    expect(seen).toEqual({
      project: 'A',
      namespaces: { limit: null, source: 'default', in_use: null },
      tables: { limit: 100, source: 'default', in_use: null },
      rate: { per_second: null, burst: null, source: 'default' },
    });
    // The same door addressed by a query parameter.
    expect(await ok(call('GET', '/v1/limits?project=A', key.admin))).toEqual(seen);
  });

  it("only a platform administrator sets them; a project admin and another project's admin get 403, nothing changed", async () => {
    const before = await limitsRecord();
    for (const k of [key.admin, key.reader, key.outsider]) {
      const r = await call('POST', '/projects/A/v1/limits', k, { tables: 100000 });
      expect([r.status, r.json().code], r.text).toEqual([403, 15]);
    }
    const outsider = await call('GET', '/projects/A/v1/limits', key.outsider);
    expect([outsider.status, outsider.json().code]).toEqual([403, 15]);
    expect(await limitsRecord()).toEqual(before);
  });

  it('bad input is 400 / 13 naming the field, and nothing changes', async () => {
    const before = await limitsRecord();
    for (const [body, message] of [
      [{ tables: -1 }, /tables must be a whole number from 0/],
      [{ namespaces: 'ten' }, /namespaces must be a whole number/],
      [{ rate: { per_second: 1.5 } }, /rate must be \{"per_second"/],
      [{ tabels: 3 }, /unknown field "tabels"/],
    ] as const) {
      const r = await call('POST', '/projects/A/v1/limits', ADMIN, body);
      expect([r.status, r.json().code], r.text).toEqual([400, 13]);
      expect(r.json().error).toMatch(message);
    }
    expect(await limitsRecord()).toEqual(before);
  });

  it('a quota set by the platform administrator is enforced at once and counts what exists; B is unaffected', async () => {
    const set = await ok(call('POST', '/projects/A/v1/limits', ADMIN, { namespaces: 2 }));
    expect(set.namespaces).toEqual({ limit: 2, source: 'project', in_use: 1 });
    expect(set.tables).toEqual({ limit: 100, source: 'default', in_use: 0 });
    await ok(call('POST', '/projects/A/v1/namespace/ns2/create', key.admin, {}));
    const refused = await call('POST', '/projects/A/v1/namespace/ns3/create', key.admin, {});
    expect([refused.status, refused.json().code], refused.text).toEqual([403, 15]);
    expect(refused.json().error).toMatch(/project "A" has reached its quota of 2 namespaces/);
    expect((await call('POST', '/projects/A/v1/namespace/ns3/exists', key.admin, {})).status).toBe(404);
    for (const n of ['b1', 'b2', 'b3']) await ok(call('POST', '/projects/B/v1/namespace/' + n + '/create', key.outsider, {}));
    // Back to the default (none): the create goes through.
    expect((await ok(call('POST', '/projects/A/v1/limits', ADMIN, { namespaces: null }))).namespaces).toEqual({ limit: null, source: 'default', in_use: null });
    await ok(call('POST', '/projects/A/v1/namespace/ns3/create', key.admin, {}));
  });

  it("a project's own request rate throttles that project alone: 429 / code 21 with Retry-After", async () => {
    expect((await ok(call('POST', '/projects/A/v1/limits', ADMIN, { rate: { per_second: 1, burst: 3 } }))).rate).toEqual({ per_second: 1, burst: 3, source: 'project' });
    const statuses: number[] = [];
    let refused: RawResponse | undefined;
    for (let i = 0; i < 6; i++) {
      const r = await call('POST', '/projects/A/v1/namespace/ns1/exists', key.reader, {});
      statuses.push(r.status);
      if (r.status === 429) refused = r;
    }
    expect(refused, String(statuses)).toBeDefined();
    expect(refused!.json()).toMatchObject({ code: 21, error: expect.stringMatching(/project "A" is over its rate limit of 1 requests per second \(burst 3\)/) });
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 6; i++) expect((await call('POST', '/projects/B/v1/namespace/b1/exists', key.outsider, {})).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    await ok(call('POST', '/projects/A/v1/limits', ADMIN, { rate: null }));
  });
});
