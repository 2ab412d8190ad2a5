/**
 * Rate limits per principal and per project (lib/http/rate-limit.ts) at the router, on a clock
 * that moves only when the test says so: a principal over its rate gets 429 / code 21 with
 * Retry-After while another principal, and another project, are unaffected.
 */
import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../lib/contract/http.js';
import type { RequestGuard } from '../../lib/contract/request.js';
import { MAX_BUCKETS, RateLimiter, type RateLimits } from '../../lib/http/rate-limit.js';
import { createRouter } from '../../lib/http/router.js';
import { manualClock } from '../support/clock.js';

type Svc = { project: string };

function setup(limits: RateLimits) {
  const clock = manualClock();
  let runs = 0;
  const guard: RequestGuard<Svc> = {
    authenticate: async (req) => ({ principal: req.headers['x-api-key'] ?? 'anonymous', platformAdmin: true, via: 'api-key' }),
    // The project the request addresses, as admission scopes the services to it.
    admit: async (req) => ({ project: req.query.get('project') ?? 'default' }),
  };
  const router = createRouter<Svc>({
    handlers: { DescribeTable: async () => ({ runs: ++runs }) },
    services: { project: 'default' },
    maxBodyBytes: 1 << 20,
    guard,
    rateLimits: { limiter: new RateLimiter(limits, clock.ms), projectOf: (s) => s.project },
  });
  let n = 0;
  const call = (principal: string, project = 'default') =>
    router({
      method: 'POST',
      rawPath: '/v1/table/ns%24t/describe',
      rawQuery: `project=${project}`,
      headers: { 'content-type': 'application/json', 'x-api-key': principal },
      body: Buffer.alloc(0),
      requestId: `r${++n}`,
    } satisfies HttpRequest);
  return { call, clock, runs: () => runs };
}

const OFF = { perSecond: 0, burst: 1 };

describe('rate limits', () => {
  it('a principal over its rate gets 429 / code 21 with Retry-After; another principal is unaffected; the bucket refills', async () => {
    const t = setup({ principal: { perSecond: 2, burst: 4 }, project: OFF });
    for (let i = 0; i < 4; i++) expect((await t.call('noisy')).status).toBe(200);
    const refused = await t.call('noisy');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body.toString())).toMatchObject({ code: 21, error: expect.stringMatching(/principal "noisy" is over its rate limit of 2 requests per second \(burst 4\)/) });
    expect(refused.headers['retry-after']).toBe('1');
    for (let i = 0; i < 4; i++) expect((await t.call('quiet')).status).toBe(200);
    expect(t.runs()).toBe(8);
    t.clock.advance(499);
    expect((await t.call('noisy')).status).toBe(429);
    t.clock.advance(1); // 500 ms at 2/s: one token
    expect((await t.call('noisy')).status).toBe(200);
    expect((await t.call('noisy')).status).toBe(429);
  });

  it('a project over its rate refuses every principal in it, and no other project', async () => {
    const t = setup({ principal: OFF, project: { perSecond: 1, burst: 3 } });
    for (const p of ['a', 'b', 'c']) expect((await t.call(p, 'busy')).status).toBe(200);
    const refused = await t.call('d', 'busy');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body.toString()).error).toMatch(/project "busy" is over its rate limit/);
    expect((await t.call('d', 'calm')).status).toBe(200);
    t.clock.advance(1000);
    expect((await t.call('d', 'busy')).status).toBe(200);
  });

  it('Retry-After counts the seconds until the bucket has a token again', async () => {
    const t = setup({ principal: { perSecond: 1, burst: 1 }, project: OFF });
    expect((await t.call('slow')).status).toBe(200);
    const refused = await t.call('slow');
    expect(refused.headers['retry-after']).toBe('1');
    const limiter = new RateLimiter({ principal: { perSecond: 0.1, burst: 1 }, project: OFF }, () => 0);
    limiter.admitPrincipal('x');
    expect(() => limiter.admitPrincipal('x')).toThrow(expect.objectContaining({ headers: { 'retry-after': '10' } }));
  });

  it('keeps at most MAX_BUCKETS buckets (a dropped one comes back full)', () => {
    let now = 0;
    const limiter = new RateLimiter({ principal: { perSecond: 1, burst: 1 }, project: OFF }, () => now);
    limiter.admitPrincipal('first');
    for (let i = 0; i < MAX_BUCKETS; i++) limiter.admitPrincipal(`p${i}`);
    now += 1; // no refill to speak of: only the drop explains a fresh token
    expect(() => limiter.admitPrincipal('first')).not.toThrow();
    expect(() => limiter.admitPrincipal(`p${MAX_BUCKETS - 1}`)).toThrow(/over its rate limit/);
  });
});
