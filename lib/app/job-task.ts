/**
 * The task tier's worker (docs/jobs.md, "Tiers"): what the container (functions/job-task.ts)
 * runs for the one job it was started for. The same worker as the Jobs function, scoped to one
 * job of one project: it claims the job, heartbeats and finishes it by the queue's protocol, and
 * stops it at the task's maximum duration through the runner's signal.
 */
import type { CatalogServices } from '../catalog/services.js';
import type { JobRunners } from '../jobs/runner.js';
import { runJobsOnce, type Outcome, type WorkerLog } from '../jobs/worker.js';

export interface JobTaskOptions {
  readonly jobId: string;
  readonly project: string;
  /** Who holds the lease: `task:<host or task id>`. */
  readonly owner: string;
  /** The task's maximum duration (rask:jobsTaskMaxMinutes). */
  readonly limitMs: number;
  readonly runners: JobRunners;
  readonly log: WorkerLog;
  /** Aborted on SIGTERM (StopTask, a cancel): the job is given back or, if canceled, dropped. */
  readonly signal?: AbortSignal;
}

export interface JobTaskResult {
  /** `none`: the job was not claimable (taken by an earlier task, canceled, finished). */
  readonly outcome: Outcome | 'none';
  /** 0 unless the job failed; a failed job's code is in its record. */
  readonly exitCode: number;
}

export async function runJobTask(services: CatalogServices, options: JobTaskOptions): Promise<JobTaskResult> {
  const report = await runJobsOnce(services, {
    owner: options.owner,
    only: options.jobId,
    project: options.project,
    // Only this job is ever claimable here; once it has run (or was not claimable) the walk ends.
    budgetMs: 60_000,
    runners: options.runners,
    log: options.log,
    signal: options.signal,
    tier: 'task',
    limitMs: options.limitMs,
    enforceLimit: true,
  });
  const ran = report.ran.find((r) => r.id === options.jobId);
  if (!ran) {
    options.log({ message: 'job task found nothing to run', id: options.jobId, project: options.project });
    return { outcome: 'none', exitCode: 0 };
  }
  return { outcome: ran.outcome, exitCode: ran.outcome === 'failed' ? 1 : 0 };
}
