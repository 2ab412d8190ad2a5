import { randomUUID } from 'node:crypto';
import { ConcurrentModificationError, InternalError } from '../errors.js';
import { ConditionFailedError, type ObjectStore } from '../ports/object-store.js';
import { decodeSegment, isEncodedSegment } from './keys.js';
import { currentDeadline, remainingMs } from '../deadline.js';
import { signal } from '../observability/signals.js';

export interface Versioned<T> {
  readonly value: T;
  readonly etag: string;
}

export interface RetryPolicy {
  /** Attempts before a lost race becomes ConcurrentModification (code 14). */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 10, baseDelayMs: 5, maxDelayMs: 250 };

/**
 * The field every registry write adds to the record it stores: a fresh id, so no two writes at a
 * key store the same bytes. An S3 etag is the MD5 of the body; without this, a door that writes a
 * record back to a value it held before (an undone rename, a drop and its undrop, a rename there
 * and back) would bring an old etag back, and an If-Match held on it since could land again. With
 * it, an etag a key has left never returns, so "the record is no longer at etag E (or is gone)"
 * proves that no conditional write on E can ever succeed (docs/protocols.md, "Etags never come
 * back"). Readers never see it: `read` takes it off.
 */
export const WRITE_ID = '_write';

/**
 * JSON records on an object store, guarded by conditional writes. This is the registry's only
 * way to touch storage, so every read-modify-write is a compare-and-swap and every lost race is
 * retried the same way.
 */
export class Registry {
  constructor(
    readonly store: ObjectStore,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  async read<T>(key: string): Promise<Versioned<T> | undefined> {
    const obj = await this.store.get(key);
    if (!obj) return undefined;
    try {
      const value = JSON.parse(obj.body.toString('utf8')) as T;
      if (value !== null && typeof value === 'object') delete (value as Record<string, unknown>)[WRITE_ID];
      return { value, etag: obj.etag };
    } catch (cause) {
      // A destructive decision must never be made on a record we cannot read (brief rule 8).
      throw new InternalError(`registry record ${key} is unreadable`, { cause });
    }
  }

  /** Put-if-absent; throws ConditionFailedError when the key exists. */
  async create<T>(key: string, value: T): Promise<string> {
    return (await this.store.putIfAbsent(key, stamped(value))).etag;
  }

  /** Put-if-match; throws ConditionFailedError when the record changed or vanished. */
  async replace<T>(key: string, value: T, etag: string): Promise<string> {
    return (await this.store.putIfMatch(key, stamped(value), etag)).etag;
  }

  /** Delete-if-match; throws ConditionFailedError when the record changed or vanished. */
  async remove(key: string, etag: string): Promise<void> {
    await this.store.deleteIfMatch(key, etag);
  }

  /**
   * Runs `attempt` until it completes without losing a race. `attempt` re-reads what it needs
   * each time; a ConditionFailedError from it means "someone else wrote first, look again".
   * Exhausted retries answer code 14, never 500.
   */
  async retrying<R>(what: string, attempt: () => Promise<R>): Promise<R> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
        signal('CasConflict');
        if (n >= this.retry.attempts) {
          signal('CasExhausted');
          throw new ConcurrentModificationError(`${what} lost ${n} races in a row to concurrent writers; retry later`);
        }
        const delay = jitter(this.retry, n);
        // Past the request's deadline a commit would land after the client gave up (deadline.ts).
        const deadline = currentDeadline();
        if (deadline && remainingMs(deadline) <= delay) {
          throw new ConcurrentModificationError(
            `${what} lost ${n} races to concurrent writers within the request's ${deadline.budgetMs} ms commit deadline; nothing was written, retry later`,
          );
        }
        await (deadline ? deadline.clock.sleep(delay) : sleep(delay));
      }
    }
  }

  /**
   * One page of the leaf names directly under `prefix` (records, not sub-directories), in byte
   * order, starting after `startAfter` (a decoded name). One LIST per page, whatever the total.
   */
  async listNames(
    prefix: string,
    options: {
      startAfter?: string;
      limit?: number;
      encode: (name: string) => string;
      /** Is handed each leaf that is not an encoded name (a drop mark, keys.ts), which is not listed. */
      onOther?: (segment: string) => void;
    },
  ): Promise<{ names: string[]; more: boolean }> {
    const names: string[] = [];
    let startAfter = options.startAfter === undefined ? undefined : prefix + options.encode(options.startAfter);
    // Deeper keys (sub-directories) never sit under a records prefix, but skip them defensively
    // and keep paging so a page is never short because of them.
    for (;;) {
      const want = options.limit === undefined ? undefined : options.limit - names.length + 1;
      const page = await this.listKeys({ prefix, startAfter, limit: want });
      for (const key of page.keys) {
        const rest = key.slice(prefix.length);
        if (rest.includes('/')) continue;
        if (!isEncodedSegment(rest)) {
          options.onOther?.(rest);
          continue;
        }
        names.push(decodeSegment(rest));
      }
      const last = page.keys[page.keys.length - 1];
      if (options.limit !== undefined && names.length > options.limit) {
        return { names: names.slice(0, options.limit), more: true };
      }
      if (!page.truncated || !last) return { names, more: false };
      startAfter = last;
    }
  }

  /** Keys alone, for callers that need no etags: a store that pays per object for them skips that. */
  async listKeys(options: { prefix: string; startAfter?: string; limit?: number }): Promise<{ keys: string[]; truncated: boolean }> {
    if (this.store.listKeys) return this.store.listKeys(options);
    const page = await this.store.list(options);
    return { keys: page.objects.map((o) => o.key), truncated: page.truncated };
  }
}

/** The record's JSON with a fresh write id (see WRITE_ID). Records are JSON objects. */
function stamped<T>(value: T): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InternalError('a registry record must be a JSON object');
  }
  return JSON.stringify({ ...value, [WRITE_ID]: randomUUID() });
}

function jitter(policy: RetryPolicy, attempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.random() * cap;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
