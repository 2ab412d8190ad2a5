/**
 * Where the answers of writes sent with an `Idempotency-Key` are kept (docs/operations.md,
 * "Idempotency keys"): the first request with a key claims it, runs, and stores its answer; a
 * retry with the same key and the same request gets that answer back without running again. A
 * key belongs to one principal: another principal's identical key is another key.
 *
 * One implementation (lib/registry/idempotency-records.ts) over the object-store port, so the
 * local server keeps keys on disk and the Lambda functions in S3 with the same conditional
 * writes the registry uses; test/contract/idempotency-store.suite.ts runs on each store.
 */

/** What makes two requests "the same request": compared field by field, so a mismatch can be named. */
export interface RequestFingerprint {
  /** The operation id (`InsertIntoTable`). */
  readonly operation: string;
  /** Method, path and query as sent. */
  readonly target: string;
  /** SHA-256 (hex) of the body bytes. */
  readonly bodyDigest: string;
}

/** An answer as sent, byte for byte. */
export interface StoredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface ClaimRequest {
  readonly principal: string;
  readonly key: string;
  readonly fingerprint: RequestFingerprint;
  readonly requestId: string;
  readonly now: Date;
  /** How long a completed answer is kept (RASK_IDEMPOTENCY_TTL_SECONDS). */
  readonly ttlMs: number;
  /**
   * How long a claim whose request never finished (its process died) blocks the key; after it a
   * retry runs again. Longer than any request may run (the commit deadline and then some).
   */
  readonly leaseMs: number;
}

/** The claim this request holds: finish it with the answer, or give it back so a retry runs. */
export interface HeldClaim {
  readonly kind: 'claimed';
  /** Stores the answer; the key then lives `ttlMs` from `now`. */
  complete(answer: StoredAnswer, now: Date): Promise<void>;
  release(): Promise<void>;
}

export type Claim =
  | HeldClaim
  /** The same key and request completed before: its answer. */
  | { readonly kind: 'replay'; readonly answer: StoredAnswer; readonly firstRequestId: string }
  /** The same key and request is still running elsewhere. */
  | { readonly kind: 'running'; readonly retryAfterSeconds: number }
  /** The key was used with another request (while it lives). */
  | { readonly kind: 'mismatch'; readonly first: RequestFingerprint };

export interface IdempotencyStore {
  claim(request: ClaimRequest): Promise<Claim>;
}
