/**
 * What a failure nobody reported says (docs/jobs.md, "Honest failures"): a job whose worker
 * stopped renewing its lease was killed at its tier's limit or crashed. The record says which
 * tier, what its limit is and what to do about it, with a code, so that DescribeTransaction and
 * the `JobsFailed` alarm tell the same story.
 */
import { ErrorCode } from '../errors.js';
import type { JobLease, JobRecord, JobTier, WorkerTier } from '../ports/job-record.js';

/** The code of a timeout: the spec's ServiceUnavailable (17), a transient condition. */
export const TIMEOUT_CODE = ErrorCode.ServiceUnavailable;

const TIER_NAME: Readonly<Record<WorkerTier, string>> = {
  function: 'function-tier',
  task: 'task-tier',
  local: 'local',
};

export function formatLimit(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** What to do when a job keeps outliving (or crashing) its worker on a tier. */
export function remedy(tier: WorkerTier | undefined): string {
  switch (tier) {
    case 'function':
      return 'run it on the task tier (-c rask:jobsTaskTier=on, docs/deploy.md; a function attempt whose lease lapses is then escalated there)';
    case 'task':
      return 'give the task more CPU or a longer maximum duration (rask:jobsTaskCpu, rask:jobsTaskMemoryMb, rask:jobsTaskMaxMinutes; docs/deploy.md), or build beside rask (docs/index-builds.md, "Beyond the largest task")';
    default:
      return "look in the worker's log for why it stopped";
  }
}

/** "the function-tier worker lambda:x stopped renewing its lease (until …): it crashed, or ran past the function tier's limit of 15 min". */
export function abandonedMessage(lease: JobLease | undefined): string {
  const tier = lease?.tier;
  const who = `${tier ? `${TIER_NAME[tier]} ` : ''}worker ${lease?.owner ?? '?'}`;
  const limit = lease?.limitMs !== undefined && tier ? `the ${tier} tier's limit of ${formatLimit(lease.limitMs)}` : 'its time limit';
  return `the ${who} stopped renewing its lease (until ${lease?.until ?? '?'}): it crashed, or ran past ${limit}`;
}

/** A worker that stopped its own job at its limit (the task's maximum duration). */
export function timeoutMessage(tier: WorkerTier, limitMs: number): string {
  return `the job ran past the ${tier} tier's limit of ${formatLimit(limitMs)} and was stopped; ${remedy(tier)}`;
}

// ---- routing (docs/jobs.md, "Routing") ----

/**
 * What a job is estimated to cost when it is queued. `costRows`: rows of a 128-d IVF_PQ build
 * (lib/catalog/data/indices.ts); `bytes`: what a backfill or sweep rewrites.
 */
export interface JobEstimate {
  readonly costRows?: number;
  readonly bytes?: number;
}

/** Above these a job starts on the task tier. */
export interface TierLimits {
  readonly createIndexCostRows: number;
  /** A `backfill`'s estimated bytes (rows × bytes per row). */
  readonly backfillBytes: number;
  /** A `maintenance_sweep`'s estimated bytes (the below-target fragments it compacts). */
  readonly sweepBytes: number;
}

/**
 * `createIndexCostRows` from the measured builds (docs/index-builds.md, "Ceilings per tier"):
 * through the child-process task runner on the 2-core machine, 1M × 128-d took 76 CPU-s, 1M ×
 * 768-d (6M cost-rows) 430 CPU-s, so 72–76 CPU-s per 1M cost-rows (the estimate's proportion to
 * dimension holds), and 4M × 128-d 153 CPU-s (less than linear in rows). At the worst of those
 * rates the function's ~2.3 vCPU and 10 guaranteed minutes hold ~18M cost-rows, ~9M with a 2×
 * margin; the limit is kept at 2M because everything the bench cannot see (Lambda's cores, the
 * read from S3, heavier build parameters) is on the slow side, and a build sent to a task
 * needlessly costs a start and cents, one kept on the function too long a 15-minute attempt.
 * Memory does not bound it (604 MiB–1.1 GiB against 4 GiB).
 *
 * The byte budgets, by the same rule (the slowest measured rate over the job's own time ×
 * the function's 10 guaranteed minutes, halved, rounded down), from bench/job-task-rewrite.ts
 * through the same child-process runner (docs/benchmarks.md, "Compaction and backfill through
 * the task runner"; docs/index-builds.md, "Ceilings per tier"):
 * - `sweepBytes` **2 GiB**: compaction ran at 9.8–92 MB/s of below-target fragments (200 MB to
 *   1 GB, 200 to 1,000 fragments), 9.8 at load 21; 600 s × 9.8 MB/s ÷ 2 = 2.9 GB. It needs
 *   little CPU (51–230 MB per CPU-second without the child's start-up; tiny fragments cost
 *   most): its time is waiting, for a share of the loaded machine and for the disk, and S3 is
 *   further away than that disk.
 * - `backfillBytes` **768 MiB** of what the fill reads (rows × (key + the binding's inputs)):
 *   the column-only fill ran at 3.1–17 MB/s (200 MB to 1 GB; 3.1 at load 21), 600 s × 3.1 ÷ 2
 *   = 0.93 GB. Its CPU per MB grows with the table (0.03 CPU-s at 400k rows, 0.043 at 2M; likely
 *   each slice's merge on the key, over a larger table), and so does its peak RSS (0.7–0.8 GiB → 1.15 GiB
 *   of the function's 4 GiB), so a budget above the sizes measured would extrapolate upwards.
 * The estimates are read from the table's newest manifest at enqueue
 * (lib/catalog/dataset/rewrite-estimates.ts; docs/jobs.md, "Routing").
 */
export const DEFAULT_TIER_LIMITS: TierLimits = {
  createIndexCostRows: 2_000_000,
  backfillBytes: 768 * 1024 ** 2,
  sweepBytes: 2 * 1024 ** 3,
};

/** The defaults with what a deployment set (RASK_JOBS_TASK_INDEX_COST_ROWS, RASK_JOBS_TASK_BACKFILL_BYTES, RASK_JOBS_TASK_SWEEP_BYTES); unset keys keep theirs. */
export function tierLimits(set: Partial<TierLimits>): TierLimits {
  return {
    createIndexCostRows: set.createIndexCostRows ?? DEFAULT_TIER_LIMITS.createIndexCostRows,
    backfillBytes: set.backfillBytes ?? DEFAULT_TIER_LIMITS.backfillBytes,
    sweepBytes: set.sweepBytes ?? DEFAULT_TIER_LIMITS.sweepBytes,
  };
}

/** The byte budget of a job type; undefined for a type that has none (it is not routed by bytes). */
function byteBudget(type: string, limits: TierLimits): number | undefined {
  if (type === 'backfill') return limits.backfillBytes;
  // The maintenance fan-out's job type (lib/maintenance/fan-out.ts, SWEEP_TABLE_JOB; the queue sits below maintenance).
  if (type === 'maintenance_sweep') return limits.sweepBytes;
  return undefined;
}

/**
 * How long a dispatched job may wait for its task's claim before it is dispatched again: a
 * Fargate task takes ~30–60 s to pull and start (docs/deploy.md); ten minutes leaves room for a
 * slow pull without keeping a lost task's job waiting long. A local child starts in seconds.
 */
export const DEFAULT_TASK_GRACE_MS = 10 * 60_000;
export const LOCAL_TASK_GRACE_MS = 60_000;

export interface Route {
  readonly tier: JobTier;
  readonly reason: string;
}

/** The tier a new job starts on, by its estimate; undefined when there is no estimate to go by. */
export function routeByEstimate(type: string, estimate: JobEstimate | undefined, limits: TierLimits): Route | undefined {
  if (!estimate) return undefined;
  if (estimate.costRows !== undefined) {
    const over = estimate.costRows > limits.createIndexCostRows;
    return { tier: over ? 'task' : 'function', reason: `estimate: ${Math.round(estimate.costRows)} cost-rows ${over ? '>' : '≤'} ${limits.createIndexCostRows} (${type})` };
  }
  const budget = byteBudget(type, limits);
  if (estimate.bytes !== undefined && budget !== undefined) {
    const over = estimate.bytes > budget;
    return { tier: over ? 'task' : 'function', reason: `estimate: ${Math.round(estimate.bytes)} bytes ${over ? '>' : '≤'} ${budget} (${type})` };
  }
  return undefined;
}

/**
 * By experience: a function attempt whose lease lapsed goes to the task tier, keeping the
 * attempt it spent and sparing the others (the job is Queued again at once, for the dispatcher).
 */
export function escalate(job: JobRecord, now: Date): JobRecord {
  const at = now.toISOString();
  const { lease: _lease, dispatch: _dispatch, ...rest } = job;
  return {
    ...rest,
    status: 'Queued',
    tier: 'task',
    tierReason: `escalated: attempt ${job.attempts} on the ${job.lease?.tier ?? 'function'} tier stopped renewing its lease (worker ${job.lease?.owner ?? '?'})`,
    error: { message: abandonedMessage(job.lease), code: TIMEOUT_CODE, kind: 'timeout', at },
    notBefore: at,
    updatedAt: at,
  };
}
