/**
 * Rate limits on the real local server (RASK_RATE_*; lib/http/rate-limit.ts): what a throttled
 * client sees over HTTP. The clock-driven cases are in test/unit/rate-limits.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
beforeAll(async () => {
  // A rate of 1 per second with a burst of 3: the fourth request in a row is over it.
  s = await startTestServer({ RASK_RATE_PRINCIPAL_PER_SECOND: '1', RASK_RATE_PRINCIPAL_BURST: '3' });
});
afterAll(() => s.stop());

it('a client over its rate gets 429 / code 21 with Retry-After, and nothing runs', async () => {
  // At most one token comes back per second: unless each request took a second, one of these is
  // refused, however slow the machine (the exact moment is the unit test's, on a manual clock).
  const statuses: number[] = [];
  let refused;
  let refusedAt = -1;
  for (let i = 0; i < 10 && refused === undefined; i++) {
    const res = await s.request('POST', `/v1/namespace/n${i}/create`, '{}');
    statuses.push(res.status);
    if (res.status === 429) [refused, refusedAt] = [res, i];
  }
  expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
  expect(refused, String(statuses)).toBeDefined();
  expect(refused!.json()).toMatchObject({ code: 21, error: expect.stringMatching(/rate limit of 1 requests per second \(burst 3\)/) });
  expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  await new Promise((r) => setTimeout(r, 1100));
  expect((await s.request('POST', `/v1/namespace/n${refusedAt}/exists`, '{}')).status).toBe(404);
});
