import { createHash } from 'node:crypto';
import type { Claim, ClaimRequest, IdempotencyStore, RequestFingerprint, StoredAnswer } from '../ports/idempotency-store.js';
import { ConcurrentModificationError } from '../errors.js';
import { ConditionFailedError, type ObjectStore } from '../ports/object-store.js';

/**
 * Idempotency keys as records on an object store (the registry's: a directory locally, the
 * registry bucket on AWS), one per (principal, key) at `idem/<sha256(principal)>/<sha256(key)>`
 * (lib/registry/keys.ts). Claiming is a put-if-absent, so of concurrent duplicates exactly one
 * runs; finishing and taking over an expired record are put-if-match on the etag the claim
 * holds, so a claim that lost its record (expired and taken over) can never overwrite the new
 * one. Digests keep keys and principal names (which may be e-mail addresses) out of key names.
 */
export const IDEMPOTENCY_PREFIX = 'idem/';

interface RunningRecord extends RequestFingerprint {
  readonly v: 1;
  readonly state: 'running';
  readonly requestId: string;
  readonly createdAt: string;
  /** After this the claim is dead (its process did not finish) and the key may run again. */
  readonly leaseUntil: string;
  readonly expiresAt: string;
}

interface DoneRecord extends RequestFingerprint {
  readonly v: 1;
  readonly state: 'done';
  readonly requestId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly answer: { readonly status: number; readonly headers: Record<string, string>; readonly body: string };
}

type IdemRecord = RunningRecord | DoneRecord;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export function idempotencyRecordKey(principal: string, key: string): string {
  return `${IDEMPOTENCY_PREFIX}${sha256(principal)}/${sha256(key)}`;
}

/** Lost races in a row before the claim gives up (each one means another request moved the record). */
const MAX_ROUNDS = 8;

export class ObjectStoreIdempotency implements IdempotencyStore {
  constructor(private readonly store: ObjectStore) {}

  async claim(request: ClaimRequest): Promise<Claim> {
    const key = idempotencyRecordKey(request.principal, request.key);
    const now = request.now.getTime();
    const running: RunningRecord = {
      v: 1,
      state: 'running',
      ...pick(request.fingerprint),
      requestId: request.requestId,
      createdAt: request.now.toISOString(),
      leaseUntil: new Date(now + request.leaseMs).toISOString(),
      expiresAt: new Date(now + request.ttlMs).toISOString(),
    };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        const { etag } = await this.store.putIfAbsent(key, JSON.stringify(running));
        return this.held(key, etag, running, request.ttlMs);
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
      }
      const found = await this.store.get(key);
      if (!found) continue; // released or expired and removed meanwhile: claim again
      const record = JSON.parse(found.body.toString('utf8')) as IdemRecord;
      // Our own put, whose answer the store lost (docs/protocols.md, "When S3 fails"): it is ours.
      if (record.state === 'running' && record.requestId === running.requestId && record.createdAt === running.createdAt) {
        return this.held(key, found.etag, running, request.ttlMs);
      }
      const dead = Date.parse(record.expiresAt) <= now || (record.state === 'running' && Date.parse(record.leaseUntil) <= now);
      if (dead) {
        try {
          const { etag } = await this.store.putIfMatch(key, JSON.stringify(running), found.etag);
          return this.held(key, etag, running, request.ttlMs);
        } catch (err) {
          if (err instanceof ConditionFailedError) continue;
          throw err;
        }
      }
      if (!sameRequest(record, request.fingerprint)) return { kind: 'mismatch', first: pick(record) };
      if (record.state === 'running') {
        return { kind: 'running', retryAfterSeconds: Math.max(1, Math.min(5, Math.ceil((Date.parse(record.leaseUntil) - now) / 1000))) };
      }
      return {
        kind: 'replay',
        firstRequestId: record.requestId,
        answer: { status: record.answer.status, headers: { ...record.answer.headers }, body: Buffer.from(record.answer.body, 'base64') },
      };
    }
    throw new ConcurrentModificationError(`Idempotency-Key ${JSON.stringify(request.key)} changed hands ${MAX_ROUNDS} times while this request tried to claim it; retry`);
  }

  private held(key: string, etag: string, running: RunningRecord, ttlMs: number): Claim {
    const store = this.store;
    return {
      kind: 'claimed',
      async complete(answer: StoredAnswer, now: Date): Promise<void> {
        // The key lives a full window from when its answer exists, not from when it was claimed.
        const done: DoneRecord = {
          v: 1,
          state: 'done',
          ...pick(running),
          requestId: running.requestId,
          createdAt: running.createdAt,
          expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
          answer: { status: answer.status, headers: { ...answer.headers }, body: answer.body.toString('base64') },
        };
        await store.putIfMatch(key, JSON.stringify(done), etag);
      },
      async release(): Promise<void> {
        try {
          await store.deleteIfMatch(key, etag);
        } catch (err) {
          // Taken over after its lease: the record is someone else's now.
          if (!(err instanceof ConditionFailedError)) throw err;
        }
      },
    };
  }
}

const pick = (f: RequestFingerprint): RequestFingerprint => ({ operation: f.operation, target: f.target, bodyDigest: f.bodyDigest });

const sameRequest = (a: RequestFingerprint, b: RequestFingerprint) => a.operation === b.operation && a.target === b.target && a.bodyDigest === b.bodyDigest;
