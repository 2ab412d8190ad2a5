/**
 * What every idempotency store must do (lib/ports/idempotency-store.ts), written once and run on
 * each object store the catalog keeps keys on (idempotency-store.test.ts): the filesystem locally,
 * S3 on AWS, memory in tests. Time moves only when the test says so.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Claim, ClaimRequest, HeldClaim, IdempotencyStore } from '../../lib/ports/idempotency-store.js';
import { ConditionFailedError } from '../../lib/ports/object-store.js';
import { manualClock, type ManualClock } from '../support/clock.js';

export interface IdempotencyStoreUnderTest {
  readonly store: IdempotencyStore;
  readonly cleanup?: () => Promise<void>;
}

const TTL = 24 * 60 * 60_000;
const LEASE = 80_000;
const fingerprint = { operation: 'InsertIntoTable', target: 'POST /v1/table/a%24t/insert', bodyDigest: 'a'.repeat(64) };
const answer = { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"transaction_id":"x","version":2}') };

function held(claim: Claim): HeldClaim {
  expect(claim.kind).toBe('claimed');
  return claim as HeldClaim;
}

export function runIdempotencyStoreContract(name: string, make: () => Promise<IdempotencyStoreUnderTest>): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    let subject: IdempotencyStoreUnderTest;
    let clock: ManualClock;
    let n = 0;
    const ask = (over: Partial<ClaimRequest> = {}): ClaimRequest => ({
      principal: 'ana',
      key: 'k-1',
      fingerprint,
      requestId: `req-${++n}`,
      now: clock.now(),
      ttlMs: TTL,
      leaseMs: LEASE,
      ...over,
    });
    beforeEach(async () => {
      subject = await make();
      clock = manualClock();
    });
    afterEach(async () => subject.cleanup?.());

    it('the first request claims the key; a retry after it completed gets its answer byte for byte', async () => {
      const first = held(await subject.store.claim(ask()));
      await first.complete(answer, clock.now());
      const again = await subject.store.claim(ask());
      expect(again).toMatchObject({ kind: 'replay', firstRequestId: 'req-1' });
      if (again.kind !== 'replay') return;
      expect(again.answer.status).toBe(200);
      expect(again.answer.headers).toEqual(answer.headers);
      expect(Buffer.compare(again.answer.body, answer.body)).toBe(0);
    });

    it('a retry while the first still runs is told to come back, with a wait of a few seconds', async () => {
      held(await subject.store.claim(ask()));
      const again = await subject.store.claim(ask());
      expect(again.kind).toBe('running');
      if (again.kind === 'running') expect(again.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    });

    it('the same key with another request is a mismatch naming the first request, running or done', async () => {
      const first = held(await subject.store.claim(ask()));
      const other = { ...fingerprint, bodyDigest: 'b'.repeat(64) };
      expect(await subject.store.claim(ask({ fingerprint: other }))).toEqual({ kind: 'mismatch', first: fingerprint });
      await first.complete(answer, clock.now());
      expect(await subject.store.claim(ask({ fingerprint: { ...fingerprint, operation: 'CreateTable' } }))).toEqual({ kind: 'mismatch', first: fingerprint });
    });

    it('a key belongs to its principal: another principal\'s same key is another key', async () => {
      const ana = held(await subject.store.claim(ask()));
      await ana.complete(answer, clock.now());
      held(await subject.store.claim(ask({ principal: 'bo', fingerprint: { ...fingerprint, bodyDigest: 'c'.repeat(64) } })));
      expect((await subject.store.claim(ask())).kind).toBe('replay');
    });

    it('a released claim (a transient failure) lets the retry run', async () => {
      const first = held(await subject.store.claim(ask()));
      await first.release();
      held(await subject.store.claim(ask()));
    });

    it('an answer expires after the window counted from its completion; then the key is new', async () => {
      const first = held(await subject.store.claim(ask()));
      clock.advance(10_000);
      await first.complete(answer, clock.now());
      clock.advance(TTL - 1);
      expect((await subject.store.claim(ask({ now: clock.now() }))).kind).toBe('replay');
      clock.advance(1);
      held(await subject.store.claim(ask({ now: clock.now(), fingerprint: { ...fingerprint, bodyDigest: 'd'.repeat(64) } })));
    });

    it('a claim whose process died frees its key after the lease, and can no longer overwrite the new one', async () => {
      const dead = held(await subject.store.claim(ask()));
      clock.advance(LEASE - 1);
      expect((await subject.store.claim(ask({ now: clock.now() }))).kind).toBe('running');
      clock.advance(1);
      const next = held(await subject.store.claim(ask({ now: clock.now() })));
      await expect(dead.complete({ ...answer, body: Buffer.from('stale') }, clock.now())).rejects.toBeInstanceOf(ConditionFailedError);
      await dead.release(); // not its record any more: nothing happens
      await next.complete(answer, clock.now());
      const replay = await subject.store.claim(ask({ now: clock.now() }));
      expect(replay.kind === 'replay' && replay.answer.body.toString()).toBe(answer.body.toString());
    });

    it('of 16 concurrent claims of one key exactly one holds it', async () => {
      const claims = await Promise.all(Array.from({ length: 16 }, () => subject.store.claim(ask())));
      expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.kind === 'running')).toHaveLength(15);
    });
  });
}
