/**
 * The process's one LanceDB session: the index and metadata caches every connection shares.
 *
 * Without one, each `connect()` makes its own default session (6 GiB of index and 1 GiB of
 * metadata cache), and every table lives under its own parent directory and so on its own
 * connection (lib/catalog/dataset/location.ts): a busy process held dozens of caches that only
 * grew, until a Lambda container met its memory limit (issue #36). One session sized from the
 * configuration bounds them all together (docs/data-plane.md, "Memory").
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { lanceCacheBudgetsFromEnv, type LanceCacheBudgets } from '../../config.js';
import { loadLanceDb, type Session } from './lancedb.js';

export type SessionBudgets = Pick<LanceCacheBudgets, 'indexBytes' | 'metadataBytes'> &
  Partial<LanceCacheBudgets> & {
    /** Entries at most before the session is renewed (default: sessionItemLimit). */
    readonly itemLimit?: number;
  };

/**
 * LanceDB 0.31.0's metadata cache keeps about one small entry per table version it ever saw,
 * which its byte accounting weighs at tens of bytes and its eviction does not remove: the entry
 * count grows without bound at a steady byte size, and each entry costs ~3-4 KiB of real memory
 * (measured with the cache at its byte budget: 2.8 KiB of RSS per entry in bench/session-entries.ts,
 * ~4 KiB in the memory soak, issue #36; docs/benchmarks.md, "Renewals"). So the
 * session is also bounded by entries: past the limit a fresh session takes over for every new
 * connection, and the old one is freed with the last connection and handle that use it, which
 * retire gradually (connections.ts, "retirement"). A renewal used to leave 7-20 MiB behind, most
 * of it the old session itself, not yet collected by V8; since it is collected at its last close
 * (collectRenewedSessions) a renewal leaves 0-5 MB, so renewing more often now costs less than
 * the entries it spares. A limit of metadata / 4 KiB (16,384 entries for 64 MiB): on the quiet
 * 2-core machine the memory soak with metadata / 2 KiB rose in every quarter (340.5 -> 359.0 MB,
 * 6 renewals, peak 364 MB), with / 4 KiB it held level twice (311.5 -> 325.1 and 318.1 -> 329.5 MB,
 * 25-27 renewals, peaks 327 and 333 MB), the worst event-loop delay at a renewal 240-260 ms
 * (docs/benchmarks.md, "The entry limit, measured again").
 */
export const SESSION_BYTES_PER_ITEM = 4096;
export const MIN_SESSION_ITEMS = 4096;

export function sessionItemLimit(b: Pick<SessionBudgets, 'metadataBytes' | 'itemLimit'>): number {
  return b.itemLimit ?? Math.max(MIN_SESSION_ITEMS, Math.floor(b.metadataBytes / SESSION_BYTES_PER_ITEM));
}

let budgets: SessionBudgets | undefined;
let session: Session | undefined;
let renewals = 0;

/**
 * Sets the budgets before the first data operation (an entry point that has its configuration;
 * otherwise they come from the environment on first use). The session's size is fixed once it
 * exists: a later configuration changes nothing, and the answer says so (false).
 */
export function configureLanceSession(next: SessionBudgets): boolean {
  if (session) return budgets?.indexBytes === next.indexBytes && budgets.metadataBytes === next.metadataBytes;
  budgets = next;
  return true;
}

/** The session every `connect()` in this process passes (lib/adapters/lance/connections.ts, computed.ts). */
export function lanceSession(): Session {
  if (!session) {
    budgets ??= lanceCacheBudgetsFromEnv();
    session = newSession(budgets);
  }
  return session;
}

function newSession(b: SessionBudgets): Session {
  const made = new (loadLanceDb().Session)(BigInt(b.indexBytes), BigInt(b.metadataBytes));
  uncollected++;
  collected.register(made, undefined);
  return made;
}

let uncollected = 0;
const collected = new FinalizationRegistry<undefined>(() => uncollected--);

/** Sessions made and not yet collected by V8 (the current one included). */
export function uncollectedSessions(): number {
  return uncollected;
}

/**
 * Frees renewed sessions that nothing uses any more; called once the last connection made
 * through one is closed (connections.ts, "retirement").
 *
 * Closing every connection and table of a session is not enough: the JS `Session` object holds
 * the native session (its caches, ~100 MiB at the entry limit) until V8 collects it, and V8
 * sees a few bytes of wrapper, so it waits for a full collection, which a server with a small,
 * steady heap runs rarely. Meanwhile the new session fills beside the old one, and memory freed
 * that late is not handed back whole (docs/benchmarks.md, "Renewals": the steps RSS kept after
 * each renewal). One full collection (tens of ms, once per renewal: every ~18 s in the soak) frees it now.
 * True when one ran.
 */
export function collectRenewedSessions(): boolean {
  if (uncollected <= 1) return false;
  const gc = fullCollection();
  if (!gc) return false;
  gc();
  return true;
}

let collector: (() => void) | null | undefined;

/** V8's `gc`: the global one under --expose-gc, otherwise the flag is set and `gc` taken from a new context. */
function fullCollection(): (() => void) | undefined {
  if (collector === undefined) {
    const global = (globalThis as { gc?: () => void }).gc;
    try {
      if (!global) setFlagsFromString('--expose-gc');
      collector = global ?? (runInNewContext('gc') as () => void);
    } catch {
      collector = null;
    }
  }
  return collector ?? undefined;
}

/** Which session `lanceSession()` answers now: 0 for the first, one more at each renewal. */
export function lanceSessionGeneration(): number {
  return renewals;
}

/**
 * Replaces the session when it holds more entries than its limit (see SESSION_BYTES_PER_ITEM);
 * true when it did, so the caller drops what was connected through the old one.
 */
export function renewCrowdedSession(): boolean {
  if (!session || !budgets || session.approxNumItems() <= sessionItemLimit(budgets)) return false;
  session = newSession(budgets);
  renewals++;
  return true;
}

export interface LanceCacheUse {
  /** What the session's caches hold now, bytes (LanceDB's own accounting). */
  readonly bytes: number;
  readonly items: number;
  /** Index plus metadata budget, bytes. */
  readonly budgetBytes: number;
  readonly indexBudgetBytes: number;
  readonly metadataBudgetBytes: number;
  /** Entries at most before the session is renewed, and how often it was. */
  readonly itemLimit: number;
  readonly renewals: number;
}

/**
 * How long a reading of the caches' byte size stands. LanceDB 0.31's `sizeBytes()` walks every
 * entry on the calling thread — 5 ms at 6,000 entries, 40–70 ms at 16,000–30,000 (measured) —
 * and the data function reads the use after every request, the local server every stats line;
 * the entry count (`approxNumItems()`) is a constant-time read and stays live.
 */
export const CACHE_BYTES_SAMPLE_MS = 60_000;

// By generation, not by the session itself: a reading kept past a renewal must not keep the
// renewed session from being collected (collectRenewedSessions).
let sampled: { readonly generation: number; readonly at: number; readonly bytes: number } | undefined;

function cacheBytes(current: Session, now: number, fresh: boolean): number {
  const age = sampled ? now - sampled.at : Infinity;
  if (fresh || sampled?.generation !== renewals || age < 0 || age >= CACHE_BYTES_SAMPLE_MS) {
    sampled = { generation: renewals, at: now, bytes: Number(current.sizeBytes()) };
  }
  return sampled.bytes;
}

/**
 * The caches' use, or undefined before the first data operation (nothing is loaded yet). `bytes`
 * is at most CACHE_BYTES_SAMPLE_MS old (read afresh for a renewed session, or when `fresh`, as
 * tests that check the budget do).
 */
export function lanceCacheUse(options: { readonly fresh?: boolean; readonly now?: number } = {}): LanceCacheUse | undefined {
  if (!session || !budgets) return undefined;
  return {
    bytes: cacheBytes(session, options.now ?? Date.now(), options.fresh ?? false),
    items: session.approxNumItems(),
    budgetBytes: budgets.indexBytes + budgets.metadataBytes,
    indexBudgetBytes: budgets.indexBytes,
    metadataBudgetBytes: budgets.metadataBytes,
    itemLimit: sessionItemLimit(budgets),
    renewals,
  };
}
