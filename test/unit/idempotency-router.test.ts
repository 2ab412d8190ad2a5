/**
 * Idempotency keys at the router (lib/http/idempotency.ts): scoped to the principal the guard
 * established, expiring on a deterministic clock, and kept only for answers a retry would get
 * again. The handlers count their runs, so "nothing ran again" is observed, not assumed.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { HttpRequest } from '../../lib/contract/http.js';
import type { RequestGuard } from '../../lib/contract/request.js';
import { ServiceUnavailableError, TableAlreadyExistsError } from '../../lib/errors.js';
import { createRouter } from '../../lib/http/router.js';
import { ObjectStoreIdempotency } from '../../lib/registry/idempotency-records.js';
import { manualClock } from '../support/clock.js';

const DAY = 24 * 60 * 60_000;

function setup(declare: () => Promise<unknown>) {
  const clock = manualClock();
  let runs = 0;
  const guard: RequestGuard<object> = {
    authenticate: async (req) => ({ principal: req.headers['x-api-key'] ?? 'anonymous', platformAdmin: true, via: 'api-key' }),
    admit: async (_req, services) => services,
  };
  const router = createRouter<object>({
    handlers: {
      DeclareTable: async () => {
        runs++;
        return declare();
      },
      DescribeTable: async () => {
        runs++;
        return { version: runs };
      },
    },
    services: {},
    maxBodyBytes: 1 << 20,
    guard,
    idempotency: { store: new ObjectStoreIdempotency(new MemoryObjectStore()), ttlMs: DAY, leaseMs: 80_000, now: clock.now },
  });
  let n = 0;
  const call = (principal: string, key: string | undefined, op = 'declare') => {
    const request: HttpRequest = {
      method: 'POST',
      rawPath: `/v1/table/ns%24t/${op}`,
      rawQuery: '',
      headers: { 'content-type': 'application/json', 'x-api-key': principal, ...(key ? { 'idempotency-key': key } : {}) },
      body: Buffer.from('{"properties":{"a":"1"}}'),
      requestId: `r${++n}`,
    };
    return router(request);
  };
  return { call, clock, runs: () => runs };
}

describe('idempotency keys at the router', () => {
  it('a key is scoped to its principal: another principal\'s same key and request runs again', async () => {
    const t = setup(async () => ({ location: 'x' }));
    expect((await t.call('ana', 'k')).status).toBe(200);
    expect((await t.call('bo', 'k')).headers['idempotent-replayed']).toBeUndefined();
    expect(t.runs()).toBe(2);
    expect((await t.call('ana', 'k')).headers['idempotent-replayed']).toBe('true');
    expect((await t.call('bo', 'k')).headers['idempotent-replayed']).toBe('true');
    expect(t.runs()).toBe(2);
  });

  it('keys expire after the window: then the same key runs again', async () => {
    const t = setup(async () => ({ location: 'x' }));
    await t.call('ana', 'k');
    t.clock.advance(DAY - 1);
    await t.call('ana', 'k');
    expect(t.runs()).toBe(1);
    t.clock.advance(1);
    await t.call('ana', 'k');
    expect(t.runs()).toBe(2);
  });

  it('a transient failure is not kept (the retry runs); a refusal is (the retry gets it without running)', async () => {
    let attempt = 0;
    const t = setup(async () => {
      attempt++;
      if (attempt === 1) throw new ServiceUnavailableError('storage hiccup');
      throw new TableAlreadyExistsError('table ns.t already exists');
    });
    expect((await t.call('ana', 'k')).status).toBe(503);
    const refused = await t.call('ana', 'k');
    expect(refused.status).toBe(409);
    const again = await t.call('ana', 'k');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.toString()).toBe(refused.body.toString());
    expect(t.runs()).toBe(2);
  });

  it('reads ignore the key; without a key every write runs', async () => {
    const t = setup(async () => ({ location: 'x' }));
    await t.call('ana', 'k', 'describe');
    await t.call('ana', 'k', 'describe');
    await t.call('ana', undefined);
    await t.call('ana', undefined);
    expect(t.runs()).toBe(4);
  });
});
