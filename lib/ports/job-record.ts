/**
 * The job record: one JSON object per job, the spec's "transaction". Every change to it is a
 * compare-and-swap (lib/queue/store.ts), so whoever wrote last saw everything written before.
 *
 * The scheduling fields (status, notBefore, lease, attempts) are what a claim's WHERE clause
 * reads; they are structured fields, never strings in `properties`. `properties` holds only
 * what callers set through AlterTransaction; DescribeTransaction shows it merged with the
 * server's own view under the reserved `rask.` prefix (lib/queue/view.ts).
 */

/** The spec's TransactionStatus values, stored exactly as the spec spells them. */
export const JOB_STATUSES = ['Queued', 'Running', 'Succeeded', 'Failed', 'Canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL: ReadonlySet<JobStatus> = new Set(['Succeeded', 'Failed', 'Canceled']);

export const isTerminal = (status: JobStatus): boolean => TERMINAL.has(status);

/** Who holds a running job, until when. `token` is new for every claim, so a worker that lost
 * its lease and got the same job back later is still told apart from its earlier self. */
export interface JobLease {
  readonly owner: string;
  readonly token: string;
  readonly until: string;
  /** Where this attempt runs (docs/jobs.md, "Tiers"): named in the message if it lapses. */
  readonly tier?: WorkerTier;
  /** How long this worker may run one job (the function's timeout, the task's maximum duration). */
  readonly limitMs?: number;
}

/**
 * Where a job is routed: `function` (the Jobs function, or the local server's own loop) or
 * `task` (a container task per job, started by the dispatcher: docs/jobs.md, "Tiers").
 */
export type JobTier = 'function' | 'task';
/** Where an attempt ran: the local loop is the function tier's stand-in, named apart in messages. */
export type WorkerTier = JobTier | 'local';

/** What distinguishes a failure the worker did not report itself. */
export type JobErrorKind = 'timeout' | 'task_stopped';

/** The dispatch stamp (docs/jobs.md, "Dispatch"): compare-and-swapped on before the task is started. */
export interface JobDispatch {
  /** Which dispatch this is (the record's `dispatches` when it was stamped): the token is `<id>-<count>`. */
  readonly count: number;
  readonly at: string;
  readonly by: string;
  /** The runner's handle of the started task (an ECS task ARN, a child's pid), once known. */
  readonly task?: string;
}

/** The table a job works on. The uid pins the creation: a table dropped and re-created under
 * the same name is a different table, and never runs a job queued for the old one. */
export interface JobTable {
  readonly id: readonly string[];
  readonly uid: string;
}

export interface JobRecord {
  readonly kind: 'job';
  readonly id: string;
  /** What runs it: `create_index`, `backfill` (lib/jobs/runners/). */
  readonly type: string;
  readonly table?: JobTable;
  /** The runner's input, e.g. the original CreateTableIndex request (never identity or context). */
  readonly params: Readonly<Record<string, unknown>>;
  /** A few strings describing the job, shown by DescribeTransaction (index name, column…). */
  readonly summary: Readonly<Record<string, string>>;
  readonly status: JobStatus;
  /** Caller-owned properties (AlterTransaction). */
  readonly properties: Readonly<Record<string, string>>;
  /** What the runner reported: progress while running, its result once done. */
  readonly output: Readonly<Record<string, string>>;
  /** The last failure, kept after a retry succeeds so that flakiness stays visible. */
  readonly error?: { readonly message: string; readonly code?: number; readonly at: string; readonly kind?: JobErrorKind };
  /** Absent: the function tier. Set at enqueue (by estimate) or by escalation, shown as `rask.tier`. */
  readonly tier?: JobTier;
  /** Why the job is on its tier, shown as `rask.tier_reason`. */
  readonly tierReason?: string;
  /** Set while a task-tier job is being started (and kept while it runs). */
  readonly dispatch?: JobDispatch;
  /** Dispatches so far, never reset: each one's idempotency token is new (`<id>-<n>`). */
  readonly dispatches?: number;
  /** Claims so far: a claim is an attempt, whether it ends in success, failure or a crash. */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** A queued job is not claimed before this time (retry backoff). */
  readonly notBefore: string;
  readonly lease?: JobLease;
  readonly heartbeatAt?: string;
  /** The owner of the last lease, kept after it ends ("which worker"). */
  readonly lastWorker?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
}

/** How long leases last, how often they are renewed, how retries back off, how long records stay. */
export interface JobPolicy {
  /** A running job whose lease is older than this is presumed abandoned and may be reclaimed. */
  readonly leaseMs: number;
  /** How often a running job renews its lease; well under leaseMs so one slow write is no loss. */
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  /** Retry n waits backoffBaseMs × 2^(n-1), at most backoffMaxMs, ±20 % jitter. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Finished jobs are kept this long (DescribeTransaction answers for them), then pruned. */
  readonly retentionMs: number;
}

const MINUTE = 60_000;

export const DEFAULT_JOB_POLICY: JobPolicy = {
  leaseMs: 2 * MINUTE,
  heartbeatMs: 20_000,
  maxAttempts: 3,
  backoffBaseMs: 30_000,
  backoffMaxMs: 15 * MINUTE,
  retentionMs: 7 * 24 * 60 * MINUTE,
};
