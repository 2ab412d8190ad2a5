import type { Registry } from '../registry/registry.js';
import type { WorkQueue } from '../ports/work-queue.js';
import { DEFAULT_JOB_POLICY, type JobPolicy } from '../ports/job-record.js';
import { RegistryWorkQueue } from './store.js';
import type { TaskRunner } from '../ports/task-runner.js';
import type { TierLimits } from './tiers.js';

/** What CatalogServices may carry about jobs; absent means the registry's store and the defaults. */
export interface JobSettings {
  /**
   * The queue of one project (the DynamoDB adapter keys its items by project). A factory, not
   * one queue: services scoped to another project (the guard's per-request scoping, the
   * maintenance walks, the worker's walk over every project) must reach that project's jobs and
   * never the deployment's default project's, or a job would be visible from the wrong project.
   */
  readonly queueFor?: (project: string) => WorkQueue;
  readonly policy?: Partial<JobPolicy>;
  /** The task tier (docs/jobs.md, "Tiers"); absent: every job runs on the function tier. */
  readonly tasks?: TaskTier;
}

/** A task tier: its runner, how many tasks may run at once, how long a start may take, the routing limits. */
export interface TaskTier {
  readonly runner: TaskRunner;
  /** At most this many task-tier jobs dispatched or running at once (rask:jobsTaskConcurrency). */
  readonly concurrency: number;
  /** A dispatched job not claimed within this long is taken for lost and dispatched again. */
  readonly graceMs: number;
  /** Estimates above which a job goes to the task tier at enqueue (lib/queue/tiers.ts). */
  readonly limits: TierLimits;
}

/** Everything the job operations need, derived from the services once per call. */
export interface JobContext {
  readonly queue: WorkQueue;
  readonly policy: JobPolicy;
  readonly tasks?: TaskTier;
  now(): Date;
  /** Re-runs a read-decide-write step that lost a race; exhausted retries are code 14. */
  retrying<R>(what: string, attempt: () => Promise<R>): Promise<R>;
}

/** What jobContext reads of the catalog's services (CatalogServices has all of it). */
export interface JobServices {
  readonly registry: Registry;
  readonly project: string;
  readonly jobs?: JobSettings;
  now(): Date;
}

export function jobContext(services: JobServices): JobContext {
  const settings = services.jobs ?? {};
  return {
    // The object-store queue holds no state of its own, so a new one per call costs nothing.
    queue: settings.queueFor?.(services.project) ?? new RegistryWorkQueue(services.registry, services.project),
    policy: { ...DEFAULT_JOB_POLICY, ...settings.policy },
    ...(settings.tasks ? { tasks: settings.tasks } : {}),
    now: () => services.now(),
    retrying: (what, attempt) => services.registry.retrying(what, attempt),
  };
}
