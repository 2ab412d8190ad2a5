/**
 * Token buckets shared by every process that serves one deployment (docs/operations.md, "Rate
 * limits", "Shared across containers"). A process does not ask the shared bucket per request:
 * it takes a batch of tokens at once and spends them locally (lib/http/shared-rate-limit.ts), so
 * the remote store sees one conditional write per batch, not per request.
 */

/** A request rate: steady requests per second (0 turns the limit off) and how many may arrive at once. */
export interface Rate {
  readonly perSecond: number;
  readonly burst: number;
}

export interface TakenTokens {
  /** Tokens taken from the shared bucket (0 to `want`); the caller may admit this many requests. */
  readonly granted: number;
  /** Tokens left in the shared bucket after the take, as of `nowMs` (for a Retry-After). */
  readonly left: number;
}

export interface RateBucketStore {
  /**
   * Refills the bucket `key` to `nowMs` at `rate` (never above `rate.burst`; a bucket never seen
   * starts full) and takes up to `want` whole tokens from it, atomically with respect to every
   * other process taking from the same bucket: the sum of all grants never exceeds what one
   * token bucket of `rate` would admit. Throws when the store cannot be reached.
   */
  take(key: string, rate: Rate, want: number, nowMs: number): Promise<TakenTokens>;
}

/** The arithmetic of one bucket, shared by every store so that they all mean the same. */
export function refilled(bucket: { tokens: number; at: number } | undefined, rate: Rate, nowMs: number): { tokens: number; at: number } {
  if (!bucket) return { tokens: rate.burst, at: nowMs };
  // A clock behind the bucket's (another container's) refills nothing rather than going back.
  const elapsed = Math.max(0, nowMs - bucket.at);
  return { tokens: Math.min(rate.burst, bucket.tokens + (elapsed / 1000) * rate.perSecond), at: Math.max(bucket.at, nowMs) };
}
