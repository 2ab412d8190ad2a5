/**
 * The scheduled maintenance function's handler (functions/maintenance-jobs.ts), separate from
 * the entry point so that tests can run it with their own services and runners.
 *
 * EventBridge starts it every minute. Each invocation claims and runs ready jobs one after the
 * other, and stops *starting* jobs `reserveMs` before the function's timeout, so every job it
 * starts has at least that long to finish. A job that takes longer is cut off by the timeout:
 * its lease lapses, a later invocation reclaims it, and after `maxAttempts` such tries it ends
 * Failed (docs/jobs.md).
 */
import type { CatalogServices } from '../catalog/services.js';
import { runJobsOnce, type WorkerLog, type WorkerOptions } from './worker.js';
import type { JobRunners } from './runner.js';

/** What the handler reads from the Lambda context. */
export interface InvocationContext {
  readonly awsRequestId: string;
  getRemainingTimeInMillis(): number;
}

export interface JobsHandlerOptions {
  readonly services: () => Promise<CatalogServices>;
  readonly runners?: JobRunners;
  readonly reserveMs: number;
  readonly log?: WorkerLog;
  /** The worker's clock for its start budget (tests inject a manual one); default Date.now. */
  readonly clock?: () => number;
  /** Each job's outcome as soon as it is known (the entry point flushes its metrics there). */
  readonly onOutcome?: WorkerOptions['onOutcome'];
}

/** Lambda's longest timeout: what a function-tier lease records as its limit. */
export const FUNCTION_LIMIT_MS = 15 * 60_000;

export interface JobsInvocationResult {
  readonly ran: number;
  readonly outcomes: Record<string, number>;
  readonly unreadable: number;
  /** Projects whose queue could not be read (their names and errors are in the log). */
  readonly problems: number;
  readonly pruned: number;
}

export function jobsHandler(options: JobsHandlerOptions) {
  return async (_event: unknown, context: InvocationContext): Promise<JobsInvocationResult> => {
    const services = await options.services();
    const budgetMs = Math.max(0, context.getRemainingTimeInMillis() - options.reserveMs);
    const report = await runJobsOnce(services, {
      owner: `lambda:${context.awsRequestId}`,
      budgetMs,
      runners: options.runners,
      log: options.log,
      clock: options.clock,
      tier: 'function',
      limitMs: FUNCTION_LIMIT_MS,
      onOutcome: options.onOutcome,
    });
    const outcomes: Record<string, number> = {};
    for (const r of report.ran) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    return { ran: report.ran.length, outcomes, unreadable: report.unreadable.length, problems: report.problems.length, pruned: report.pruned };
  };
}
