import { randomUUID } from 'node:crypto';
import { ConcurrentModificationError, InternalError, StorageUnavailableError } from '../errors.js';
import { ConditionFailedError, type ObjectStore, type Versioned } from '../ports/object-store.js';
import { decodeSegment, isEncodedSegment } from './keys.js';
import { currentDeadline, remainingMs } from '../deadline.js';
import { signal } from '../signals.js';
import { CHANGE_FIELD, currentChangeStamp } from '../events/change-stamp.js';

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
 * The write ids a record descends from, newest first (its predecessor's, that one's…), at most
 * LINEAGE_DEPTH: what settles the one case the object-store port cannot (docs/protocols.md, "What
 * the read-back cannot tell"). A conditional write whose earlier attempt had an unknown outcome
 * and whose key now holds another writer's record either never applied, or applied and was
 * replaced since; our write id among the current record's ancestors says it applied, the record
 * we replaced followed by another write id says it did not (an If-Match on it can never land
 * after that). Readers never see it either.
 */
export const LINEAGE = '_lineage';
const LINEAGE_DEPTH = 8;
/** Ancestry of the records this registry has read or written, by key and etag (etags never come back). */
const KNOWN_WRITES = 4096;

interface WriteStamp {
  readonly write: string;
  readonly lineage: readonly string[];
}

/**
 * JSON records on an object store, guarded by conditional writes. This is the registry's only
 * way to touch storage, so every read-modify-write is a compare-and-swap and every lost race is
 * retried the same way.
 */
export class Registry {
  /** Write stamps of records read or written, by `key\0etag` (insertion order: oldest first). */
  private readonly known = new Map<string, WriteStamp>();

  constructor(
    readonly store: ObjectStore,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  async read<T>(key: string): Promise<Versioned<T> | undefined> {
    const obj = await this.store.get(key);
    if (!obj) return undefined;
    const { value } = this.parse<T>(key, obj.body, obj.etag);
    return { value, etag: obj.etag };
  }

  /** Put-if-absent; throws ConditionFailedError when the key exists. */
  async create<T>(key: string, value: T): Promise<string> {
    const stamp: WriteStamp = { write: randomUUID(), lineage: [] };
    return this.settled(key, stamp, undefined, () => this.store.putIfAbsent(key, stamped(value, stamp)));
  }

  /**
   * Put-if-match; throws ConditionFailedError when the record changed or vanished. When an
   * earlier attempt's outcome was unknown and the record changed (`mayHaveApplied`), the lineage
   * decides: applied (and replaced since) answers an etag no object has any more, so the caller's
   * change is not made twice and a compare-and-swap on it loses as it should.
   */
  async replace<T>(key: string, value: T, etag: string): Promise<string> {
    const base = this.known.get(`${key}\0${etag}`);
    const stamp: WriteStamp = { write: randomUUID(), lineage: base ? [base.write, ...base.lineage].slice(0, LINEAGE_DEPTH) : [] };
    return this.settled(key, stamp, base, () => this.store.putIfMatch(key, stamped(value, stamp), etag));
  }

  /** Runs a conditional write; remembers its stamp, and settles a `mayHaveApplied` lost race by lineage. */
  private async settled(key: string, stamp: WriteStamp, base: WriteStamp | undefined, write: () => Promise<{ etag: string }>): Promise<string> {
    try {
      const { etag } = await write();
      this.remember(key, etag, stamp);
      return etag;
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || !err.mayHaveApplied) throw err;
      let now: Awaited<ReturnType<ObjectStore['get']>>;
      try {
        now = await this.store.get(key);
      } catch (cause) {
        // Unreadable now: whether ours applied is unknown, and a caller that ran its step again
        // could apply it twice.
        throw new StorageUnavailableError('the outcome of a registry write is unknown: storage failed while reading it back', { cause });
      }
      if (!now) throw err; // removed since: nothing says whether ours applied first
      const current = this.parse(key, now.body, now.etag).stamp;
      if (current?.write === stamp.write) return now.etag;
      const ancestors = current ? [current.write, ...current.lineage] : [];
      const ours = ancestors.indexOf(stamp.write);
      // Ours among the ancestors: it applied, and a later writer who read it replaced it.
      if (ours > 0) return supersededEtag(stamp.write);
      // The record we replaced, followed by another writer's: ours can never land now.
      const replaced = base ? ancestors.indexOf(base.write) : -1;
      if (replaced > 0) throw new ConditionFailedError(key, err.reason);
      throw err; // deeper than the lineage reaches (or no lineage): still undecided
    }
  }

  private parse<T>(key: string, body: Buffer, etag: string): { value: T; stamp?: WriteStamp } {
    let value: T;
    try {
      value = JSON.parse(body.toString('utf8')) as T;
    } catch (cause) {
      // A destructive decision must never be made on a record we cannot read (docs/rules.md rule 8).
      throw new InternalError(`registry record ${key} is unreadable`, { cause });
    }
    if (value === null || typeof value !== 'object') return { value };
    const record = value as Record<string, unknown>;
    const write = record[WRITE_ID];
    const lineage = Array.isArray(record[LINEAGE]) ? (record[LINEAGE] as unknown[]).filter((x): x is string => typeof x === 'string') : [];
    delete record[WRITE_ID];
    delete record[LINEAGE];
    delete record[CHANGE_FIELD];
    if (typeof write !== 'string') return { value };
    const stamp = { write, lineage };
    this.remember(key, etag, stamp);
    return { value, stamp };
  }

  private remember(key: string, etag: string, stamp: WriteStamp): void {
    const id = `${key}\0${etag}`;
    this.known.delete(id);
    this.known.set(id, stamp);
    if (this.known.size > KNOWN_WRITES) this.known.delete(this.known.keys().next().value!);
  }

  /** Delete-if-match; throws ConditionFailedError when the record changed or vanished. */
  async remove(key: string, etag: string): Promise<void> {
    await this.store.deleteIfMatch(key, etag);
  }

  /**
   * Runs `attempt` until it completes without losing a race. `attempt` re-reads what it needs
   * each time; a ConditionFailedError from it means "someone else wrote first, look again".
   * Exhausted retries answer code 14, never 500. `attempts` overrides the policy's for a record
   * many requests are expected to race on at once (a project's quota counter, lib/catalog/quotas.ts).
   */
  async retrying<R>(what: string, attempt: () => Promise<R>, attempts = this.retry.attempts): Promise<R> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
        // A lost race whose earlier attempt may have applied, which the lineage could not settle:
        // running the step again could apply it twice (a counter counted twice), so the outcome
        // goes to the caller as unknown (docs/protocols.md, "The registry settles it by lineage").
        if (err.mayHaveApplied) throw new StorageUnavailableError(`${what}: the outcome of a write is unknown (storage failed mid-write); retry later`, { cause: err });
        signal('CasConflict');
        if (n >= attempts) {
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

/**
 * The record's JSON with its write id and lineage (see WRITE_ID, LINEAGE) and, inside a mutating
 * request, its change stamp (lib/events/change-stamp.ts: it rides in this write, so it costs no
 * request). Records are JSON objects.
 */
function stamped<T>(value: T, stamp: WriteStamp): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InternalError('a registry record must be a JSON object');
  }
  const change = currentChangeStamp();
  return JSON.stringify({
    ...value,
    [WRITE_ID]: stamp.write,
    ...(stamp.lineage.length > 0 ? { [LINEAGE]: stamp.lineage } : {}),
    ...(change ? { [CHANGE_FIELD]: change } : {}),
  });
}

/**
 * What `replace` answers for a write that applied and has been replaced since: an etag no object
 * can have (S3's are quoted hex digests, the disk store's and the memory store's are hex), so a
 * compare-and-swap on it loses and the caller reads again.
 */
const supersededEtag = (write: string) => `superseded-${write}`;

function jitter(policy: RetryPolicy, attempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.random() * cap;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
