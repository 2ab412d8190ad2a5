/**
 * The process's one LanceDB session: the index and metadata caches every connection shares.
 *
 * Without one, each `connect()` makes its own default session (6 GiB of index and 1 GiB of
 * metadata cache), and every table lives under its own parent directory and so on its own
 * connection (lib/catalog/tables/location.ts): a busy process held dozens of caches that only
 * grew, until a Lambda container met its memory limit (issue #36). One session sized from the
 * configuration bounds them all together (docs/data-plane.md, "Memory").
 */
import { lanceCacheBudgetsFromEnv, type LanceCacheBudgets } from '../config.js';
import { loadLanceDb, type Session } from './lancedb.js';

export type SessionBudgets = Pick<LanceCacheBudgets, 'indexBytes' | 'metadataBytes'> & Partial<LanceCacheBudgets>;

let budgets: SessionBudgets | undefined;
let session: Session | undefined;

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

/** The session every `connect()` in this process passes (lib/data/connections.ts, computed.ts). */
export function lanceSession(): Session {
  if (!session) {
    budgets ??= lanceCacheBudgetsFromEnv();
    session = new (loadLanceDb().Session)(BigInt(budgets.indexBytes), BigInt(budgets.metadataBytes));
  }
  return session;
}

export interface LanceCacheUse {
  /** What the session's caches hold now, bytes (LanceDB's own accounting). */
  readonly bytes: number;
  readonly items: number;
  /** Index plus metadata budget, bytes. */
  readonly budgetBytes: number;
  readonly indexBudgetBytes: number;
  readonly metadataBudgetBytes: number;
}

/** The caches' use, or undefined before the first data operation (nothing is loaded yet). */
export function lanceCacheUse(): LanceCacheUse | undefined {
  if (!session || !budgets) return undefined;
  return {
    bytes: Number(session.sizeBytes()),
    items: session.approxNumItems(),
    budgetBytes: budgets.indexBytes + budgets.metadataBytes,
    indexBudgetBytes: budgets.indexBytes,
    metadataBudgetBytes: budgets.metadataBytes,
  };
}
