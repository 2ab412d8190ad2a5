/**
 * What a job runner is: the worker (lib/jobs/worker.ts) calls one per claimed job, and the
 * runners (lib/jobs/runners/) implement it, so neither imports the other's module.
 */
import type { CatalogServices } from '../catalog/services.js';
import type { JobRecord } from '../ports/job-record.js';

export interface RunnerContext {
  readonly services: CatalogServices;
  /**
   * Aborted when the worker has lost the job (canceled, or reclaimed after a missed lease) or
   * is shutting down. Runners check it between steps; a step already inside LanceDB cannot be
   * interrupted and finishes, but nothing is reported for it once the lease is lost.
   */
  readonly signal: AbortSignal;
  /** Progress to show in DescribeTransaction; written with the next heartbeat. */
  progress(output: Record<string, string>): void;
}

/** Runs one job; resolves with output strings for DescribeTransaction, or throws. */
export type JobRunner = (job: JobRecord, ctx: RunnerContext) => Promise<Record<string, string>>;
export type JobRunners = Readonly<Record<string, JobRunner>>;
