/**
 * Object quotas on the real local server (RASK_QUOTA_*; lib/catalog/quotas.ts): 16 concurrent
 * creates over HTTP against a quota of 10 — namespaces, then tables — admit exactly 10; the
 * others get 403 / code 15 naming the quota and how to raise it, and nothing of theirs exists.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RASK_QUOTA_NAMESPACES: '10', RASK_QUOTA_TABLES: '10' });
});
afterAll(() => s.stop());

async function listAll(path: string, field: string): Promise<string[]> {
  const res = await s.request('GET', `${path}?limit=1000`);
  expect(res.status, res.text).toBe(200);
  return res.json()[field];
}

it('16 concurrent CreateNamespace against a quota of 10: exactly 10 created, 6 refused with 403 / 15 naming the quota', async () => {
  const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => s.request('POST', `/v1/namespace/q${i}/create`, '{}')));
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((x) => x === 200).length, String(statuses)).toBe(10);
  const refused = answers.filter((a) => a.status !== 200);
  expect(refused.map((a) => a.status)).toEqual(Array(6).fill(403));
  for (const r of refused) {
    expect(r.json()).toMatchObject({
      code: 15,
      error: expect.stringMatching(/has reached its quota of 10 namespaces.*ask a platform administrator to raise the quota \(POST \/v1\/limits/),
      detail: expect.stringMatching(/^quota: namespaces; limit: 10; in use: 10$/),
    });
  }
  const created = new Set(answers.flatMap((a, i) => (a.status === 200 ? [`q${i}`] : [])));
  expect(new Set(await listAll('/v1/namespace/%24/list', 'namespaces'))).toEqual(created);
});

it('16 concurrent DeclareTable against a quota of 10: exactly 10 declared, the others absent', async () => {
  const ns = (await listAll('/v1/namespace/%24/list', 'namespaces'))[0];
  const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => s.request('POST', `/v1/table/${ns}%24t${i}/declare`, '{}')));
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((x) => x === 200).length, String(statuses)).toBe(10);
  expect(statuses.filter((x) => x === 403).length).toBe(6);
  const declared = new Set(answers.flatMap((a, i) => (a.status === 200 ? [`t${i}`] : [])));
  expect(new Set(await listAll(`/v1/namespace/${ns}/table/list`, 'tables'))).toEqual(declared);
  for (let i = 0; i < 16; i++) {
    if (declared.has(`t${i}`)) continue;
    expect((await s.request('POST', `/v1/table/${ns}%24t${i}/exists`, '{}')).status).toBe(404);
  }
});
