/**
 * What a failure nobody reported says (docs/jobs.md, "Honest failures"): a job whose worker
 * stopped renewing its lease was killed at its tier's limit or crashed. The record says which
 * tier, what its limit is and what to do about it, with a code, so that DescribeTransaction and
 * the `JobsFailed` alarm tell the same story.
 */
import { ErrorCode } from '../errors.js';
import type { JobLease, WorkerTier } from '../ports/job-record.js';

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
      return 'run it on the task tier (a deployment with the job task, docs/deploy.md; a function attempt whose lease lapses is escalated there)';
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
