/**
 * Rate limits shared across containers (lib/http/shared-rate-limit.ts) on DynamoDB served by
 * dynalite (lib/adapters/aws/dynamo-rate-buckets.ts): K limiter instances stand for K Lambda
 * containers, each with its own leases and its own store adapter, all hammering one principal
 * concurrently over real HTTP, on a manual clock the hammer moves (so the bound is checked
 * against exact time however slow the machine). Together they admit at most burst + rate × t + K × batch (the
 * bound in the module's header); per-container buckets, run through the same hammer, admit
 * about K times that, which is what shows the bound can fail.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoRateBuckets } from '../../lib/adapters/aws/dynamo-rate-buckets.js';
import { type Limiter, type Rate, RateLimiter } from '../../lib/http/rate-limit.js';
import { SharedRateLimiter } from '../../lib/http/shared-rate-limit.js';
import type { RateBucketStore } from '../../lib/ports/rate-buckets.js';
import { type Dynalite, startDynalite } from '../support/dynalite.js';

let db: Dynalite;

beforeAll(async () => {
  db = await startDynalite();
});

afterAll(() => db?.stop());

const RATE: Rate = { perSecond: 20, burst: 20 };
const BATCH = 5;
const K = 4;
const OFF: Rate = { perSecond: 0, burst: 1 };

/** Counts the store's takes (each one conditional write, at most, plus a read after a lost race). */
function counted(store: RateBucketStore) {
  const counter = { takes: 0 };
  return {
    counter,
    store: { take: (...args: Parameters<RateBucketStore['take']>) => (counter.takes++, store.take(...args)) } satisfies RateBucketStore,
  };
}

/** The containers' clock, moved by the hammer: the bound is checked against exact time, whatever the machine's speed. */
const clock = { ms: 1_000_000 };

async function containers(k: number) {
  const tableName = await db.newQueueTable();
  const counters: { takes: number }[] = [];
  const limiters = Array.from({ length: k }, () => {
    const { store, counter } = counted(new DynamoRateBuckets({ client: db.client, tableName }));
    counters.push(counter);
    return new SharedRateLimiter(
      { principal: RATE, project: OFF },
      { store, batch: () => BATCH, nowMs: () => clock.ms, onStoreError: (err) => { throw err; } },
    );
  });
  return { tableName, limiters, takes: () => counters.reduce((n, c) => n + c.takes, 0) };
}

const TICK_MS = 10;

/**
 * In each 10 ms tick every limiter admits `principal` once, all concurrently (the shared ones
 * racing on the one DynamoDB item); 100 attempts a second per container, far over the rate.
 * Answers the admissions and the seconds the clock moved.
 */
async function hammer(limiters: readonly Limiter[], principal: string, ms: number) {
  let admitted = 0;
  let refused = 0;
  for (let t = 0; t < ms; t += TICK_MS) {
    await Promise.all(
      limiters.map(async (limiter) => {
        try {
          await limiter.admitPrincipal(principal);
          admitted++;
        } catch (err) {
          expect((err as { status?: number }).status).toBe(429);
          refused++;
        }
      }),
    );
    clock.ms += TICK_MS;
  }
  return { admitted, refused, seconds: ms / 1000 };
}

const bound = (seconds: number, k: number) => RATE.burst + RATE.perSecond * seconds + k * BATCH;

describe('a rate limit shared across containers', () => {
  it(`K=${K} containers hammering one principal admit at most burst + rate × t + K × batch together`, async () => {
    const { limiters, takes } = await containers(K);
    const { admitted, refused, seconds } = await hammer(limiters, 'alice', 1500);
    expect(refused).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(bound(seconds, K));
    // It admits, too: at least the first full bucket.
    expect(admitted).toBeGreaterThanOrEqual(RATE.burst);
    // Far less than one remote take per request: one per batch, plus one per container each
    // time a whole batch could have refilled while it is refused: bounded by time, not by how
    // hard the client hammers (seen: 39 takes for 600 attempts).
    expect(takes()).toBeLessThan((admitted + refused) / 4);
  });

  it('per-container buckets under the same hammer exceed that bound (what the shared limit fixes)', async () => {
    const own = Array.from({ length: K }, () => new RateLimiter({ principal: RATE, project: OFF }, () => clock.ms));
    const { admitted, seconds } = await hammer(own, 'alice', 1500);
    expect(admitted).toBeGreaterThan(bound(seconds, K));
  });

  it('another principal is unaffected while one is throttled', async () => {
    const { limiters } = await containers(K);
    await hammer(limiters, 'noisy', 500);
    // Still throttled: a container spends at most what is left of its lease, then is refused.
    const next = async () => limiters[0]!.admitPrincipal('noisy').then(() => 'admitted', (err: { status?: number }) => err.status);
    const answers = [];
    for (let i = 0; i <= BATCH; i++) answers.push(await next());
    expect(answers).toContain(429);
    // A whole burst for the quiet principal, spread over the same containers, right away.
    for (let i = 0; i < RATE.burst; i++) await limiters[i % K]!.admitPrincipal('quiet');
  });

  it('keeps one item per bucket under rate/, with a TTL', async () => {
    const { limiters, tableName } = await containers(1);
    await limiters[0]!.admitPrincipal('bob');
    const { Item } = await db.client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'rate/principal:bob' }, sk: { S: 'bucket' } }, ConsistentRead: true }),
    );
    expect(Number(Item?.tokens?.N)).toBe(RATE.burst - BATCH);
    // Once it would be full again (burst / rate seconds after the take) and a minute more.
    expect(Number(Item?.ttl?.N)).toBeGreaterThan(clock.ms / 1000 + RATE.burst / RATE.perSecond);
  });

  it('falls back to its own bucket when the shared store is unreachable, and says so', async () => {
    const errors: unknown[] = [];
    const broken: RateBucketStore = { take: async () => { throw new Error('unreachable'); } };
    const limiter = new SharedRateLimiter({ principal: { perSecond: 1, burst: 2 }, project: OFF }, { store: broken, nowMs: () => 0, onStoreError: (e) => errors.push(e) });
    await limiter.admitPrincipal('carol');
    await limiter.admitPrincipal('carol');
    await expect(limiter.admitPrincipal('carol')).rejects.toMatchObject({ status: 429 });
    // One error per lease period, not one per request.
    expect(errors).toHaveLength(1);
  });
});
