import type { RateBucketStore } from '../ports/rate-buckets.js';
import { type Rate, type RateLimits, RateLimiter, refusal } from './rate-limit.js';

/**
 * Rate limits shared by every container of a deployment (docs/operations.md, "Shared across
 * containers"). Per-container buckets (RateLimiter) let a principal spread over N Lambda
 * containers get N times its rate; here each container leases tokens from one shared bucket
 * per principal and per project (lib/ports/rate-buckets.ts) in batches, and spends a batch
 * locally, so the shared store sees one conditional write per `batch` requests, not one each.
 *
 * The bound. Every grant is a conditional write on the one bucket item, so all grants together
 * are what a single token bucket admits: from a full bucket, at most burst + rate × t requests
 * in t seconds, whatever the number of containers. A container may still hold up to batch − 1
 * unspent tokens of an earlier grant, so over a window that starts later (bucket not full), N
 * containers admit at most burst + rate × t + N × batch; and tokens a container does not spend
 * within `leaseMs` are dropped (never handed back, which would cost a write), so an idle
 * container strands at most batch − 1 tokens for at most leaseMs.
 *
 * An empty shared bucket is remembered until it will have a token again, so a client far over
 * its rate costs no write per refused request either. If the shared store cannot be reached,
 * the container falls back to its own bucket (the old per-container limit) and says so in the
 * log: limits degrade to rate × containers, requests are not refused for the store's outage.
 */
export interface SharedRateLimiterOptions {
  readonly store: RateBucketStore;
  readonly nowMs?: () => number;
  /** Tokens asked for at once, at most (capped by the bucket's burst); default: a tenth of a second of the rate. */
  readonly batch?: (rate: Rate) => number;
  /** How long leased tokens may be spent; default 1 s. */
  readonly leaseMs?: number;
  readonly onStoreError?: (err: unknown) => void;
}

interface Lease {
  tokens: number;
  until: number;
  /** The shared bucket was empty: refuse locally until then. */
  emptyUntil?: number;
}

/** Leases kept at most, least recently used dropped (docs/architecture.md, "Caches and their bounds"). */
export const MAX_LEASES = 10_000;

/** A tenth of a second of the rate, at least 1: ten writes a second for a principal at its full rate. */
export const defaultBatch = (rate: Rate): number => Math.max(1, Math.ceil(rate.perSecond / 10));

export class SharedRateLimiter {
  readonly #leases = new Map<string, Lease>();
  readonly #asking = new Map<string, Promise<unknown>>();
  readonly #fallback: RateLimiter;
  readonly #nowMs: () => number;
  /** After the store failed, the fallback alone until then (one error logged per lease, not per request). */
  #storeDownUntil = 0;

  constructor(
    readonly limits: RateLimits,
    private readonly options: SharedRateLimiterOptions,
  ) {
    this.#nowMs = options.nowMs ?? Date.now;
    this.#fallback = new RateLimiter(limits, this.#nowMs);
  }

  admitPrincipal(principal: string, own?: Rate): Promise<void> {
    return this.#take(`principal:${principal}`, own ?? this.limits.principal, `principal ${JSON.stringify(principal)}`);
  }

  admitProject(project: string, own?: Rate): Promise<void> {
    return this.#take(`project:${project}`, own ?? this.limits.project, `project ${JSON.stringify(project)}`);
  }

  async #take(key: string, rate: Rate, who: string): Promise<void> {
    if (rate.perSecond <= 0) return;
    for (;;) {
      const now = this.#nowMs();
      if (now < this.#storeDownUntil) return this.#fallback.admit(key, rate, who);
      const lease = this.#leases.get(key);
      if (lease?.emptyUntil !== undefined && lease.emptyUntil > now) throw refusal(who, rate, Math.ceil((lease.emptyUntil - now) / 1000));
      if (lease && lease.until > now && lease.tokens >= 1) {
        lease.tokens -= 1;
        return;
      }
      // One ask per bucket at a time in this process: the others wait for its lease.
      const asking = this.#asking.get(key);
      if (asking) {
        await asking.catch(() => undefined);
        continue;
      }
      const ask = this.#lease(key, rate, now);
      this.#asking.set(key, ask);
      try {
        const outcome = await ask;
        if (outcome === 'fallback') return this.#fallback.admit(key, rate, who);
      } finally {
        this.#asking.delete(key);
      }
    }
  }

  async #lease(key: string, rate: Rate, now: number): Promise<'leased' | 'fallback'> {
    const want = Math.max(1, Math.min(Math.floor(rate.burst), (this.options.batch ?? defaultBatch)(rate)));
    let taken;
    try {
      taken = await this.options.store.take(key, rate, want, now);
    } catch (err) {
      this.#storeDownUntil = now + (this.options.leaseMs ?? 1000);
      this.options.onStoreError?.(err);
      return 'fallback';
    }
    const until = now + (this.options.leaseMs ?? 1000);
    const lease: Lease =
      taken.granted > 0
        ? { tokens: taken.granted, until }
        : // Come back when a whole batch could be there: asking for every single token would
          // cost a (losing) conditional write per token per container under hostile load.
          { tokens: 0, until, emptyUntil: now + ((want - taken.left) / rate.perSecond) * 1000 };
    this.#leases.delete(key);
    this.#leases.set(key, lease);
    if (this.#leases.size > MAX_LEASES) this.#leases.delete(this.#leases.keys().next().value as string);
    return 'leased';
  }
}
