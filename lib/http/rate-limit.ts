import { ErrorCode } from '../errors.js';
import { TransportError } from './transport-errors.js';

/**
 * Request rates per principal and per project on the local server (docs/operations.md, "Rate
 * limits"), as token buckets: each holds up to `burst` requests and refills at `perSecond`; a
 * request finds a token or is refused with 429 / code 21 Throttling and a Retry-After of the
 * seconds until its bucket has one again. One principal's or project's buckets never touch
 * another's, so a noisy client is throttled alone. On AWS the stage throttle and the WAF per-IP
 * rule come first (docs/deploy.md); these run in the function as well.
 */
import type { Rate } from '../ports/rate-buckets.js';

export type { Rate } from '../ports/rate-buckets.js';

export interface RateLimits {
  readonly principal: Rate;
  readonly project: Rate;
}

/** No limits (RASK_RATE_* unset); a project's own rate still applies (RouterOptions.rateLimits.projectRate). */
export const NO_RATES: RateLimits = { principal: { perSecond: 0, burst: 1 }, project: { perSecond: 0, burst: 1 } };

/** Buckets kept at most, least recently used dropped (docs/architecture.md, "Caches and their bounds"); a dropped bucket comes back full. */
export const MAX_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    readonly limits: RateLimits,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Takes a token for the principal, or throws the 429 that names the limit. `own`: its own rate (SetPrincipalLimits), else the default. */
  admitPrincipal(principal: string, own?: Rate): void {
    this.admit(`principal:${principal}`, own ?? this.limits.principal, `principal ${JSON.stringify(principal)}`);
  }

  /** `own`: the project's own rate (its record's limits), else the default. */
  admitProject(project: string, own?: Rate): void {
    this.admit(`project:${project}`, own ?? this.limits.project, `project ${JSON.stringify(project)}`);
  }

  /** What a limiter does for one bucket: `key` names it, `who` the limit in the refusal. Also the shared limiter's fallback. */
  admit(key: string, rate: Rate, who: string): void {
    if (rate.perSecond <= 0) return;
    const now = this.nowMs();
    const found = this.#buckets.get(key);
    const bucket = found ?? { tokens: rate.burst, at: now };
    bucket.tokens = Math.min(rate.burst, bucket.tokens + ((now - bucket.at) / 1000) * rate.perSecond);
    bucket.at = now;
    // Most recently used last: the first entry is the one to drop.
    this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > MAX_BUCKETS) this.#buckets.delete(this.#buckets.keys().next().value as string);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    throw refusal(who, rate, Math.ceil((1 - bucket.tokens) / rate.perSecond));
  }
}

/**
 * Either limiter's port as the router sees it: admits or throws the 429; the shared one answers
 * after its lease is known (lib/http/shared-rate-limit.ts).
 */
export interface Limiter {
  admitPrincipal(principal: string, own?: Rate): void | Promise<void>;
  admitProject(project: string, own?: Rate): void | Promise<void>;
}

/** The 429 / code 21 that names the limit and when to come back (at least 1 s). */
export function refusal(who: string, rate: Rate, seconds: number): TransportError {
  const retryAfter = Math.max(1, seconds);
  return new TransportError(
    ErrorCode.Throttling,
    429,
    `${who} is over its rate limit of ${rate.perSecond} requests per second (burst ${rate.burst}); retry after ${retryAfter} s, or ask an administrator to raise the limit`,
    { 'retry-after': String(retryAfter) },
  );
}
