import type { JobRecord } from './job-record.js';
import type { Versioned } from './object-store.js';

/**
 * Where job records live. Storage only: what a claim, a heartbeat or a cancel means is decided
 * by lib/jobs/ (pure transitions plus compare-and-swap), identically for every implementation.
 *
 * Semantics every implementation keeps (the object-store one is lib/queue/store.ts):
 * - `insert` succeeds for exactly one caller per id; `replace` and `remove` only while the
 *   record's version tag is the given one, and throw `ConditionFailedError` otherwise (also
 *   when the record is gone or has moved), so callers re-read and decide again;
 * - `read` finds a job wherever it is (live or retired);
 * - `listLive` returns every job not yet retired, oldest first, a superset of what is claimable
 *   (the claimer re-checks each record); `listRetired` returns retired jobs, oldest first.
 *
 * The object-store implementation lists and reads every live job per claim, which is right for
 * the handful of live jobs a catalog has. The DynamoDB adapter (lib/adapters/aws/dynamo-work-queue.ts,
 * on the stack's table: a due index on not-before / lease end, TTL for retention) is for when
 * that stops being true; both run one contract suite (test/contract/work-queue.suite.ts).
 */
export interface WorkQueue {
  insert(job: JobRecord): Promise<void>;
  read(id: string): Promise<Versioned<JobRecord> | undefined>;
  replace(job: JobRecord, etag: string): Promise<string>;
  listLive(page: PageRequest): Promise<JobPage>;
  /**
   * What a claim walks: live jobs that may be claimable at `now` (a superset; the claimer
   * re-checks each record). An implementation with a due index (DynamoDB) lists only jobs whose
   * not-before time or lease end has come; one without may list every live job. `startAfter`
   * is the previous page's opaque `next`.
   */
  listDue(now: Date, page: PageRequest): Promise<JobPage>;
  /** Moves a finished job out of the live set. Idempotent; a job that is not finished stays. */
  retire(id: string): Promise<void>;
  listRetired(page: PageRequest): Promise<RetiredPage>;
  /** Deletes a retired job if it is unchanged. */
  remove(id: string, etag: string): Promise<void>;
}

export interface PageRequest {
  /** Exclusive: the last id of the previous page. */
  readonly startAfter?: string;
  readonly limit: number;
}

export interface JobPage {
  readonly jobs: readonly Versioned<JobRecord>[];
  /** Ids listed but unreadable (corrupt records); skipped, and reported by the worker. */
  readonly unreadable: readonly string[];
  /** Set when more may follow: pass it as the next page's startAfter. */
  readonly next?: string;
}

/** Retired jobs are listed by id alone: the prune reads only those old enough to expire. */
export interface RetiredPage {
  readonly ids: readonly string[];
  readonly next?: string;
}
