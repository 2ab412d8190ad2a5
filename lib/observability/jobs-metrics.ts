import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { JobsInvocationResult } from '../jobs/lambda.js';

/** Every outcome a job run can have (lib/jobs/worker.ts), written each invocation (0 when none). */
export const JOB_OUTCOMES = ['succeeded', 'retrying', 'failed', 'lost', 'released'] as const;

/** `JobsSucceeded`, `JobsFailed`, …: the metric names the alarms and dashboard use. */
export const jobMetricName = (outcome: string): string => `Jobs${outcome[0].toUpperCase()}${outcome.slice(1)}`;

/**
 * EMF metrics of one jobs invocation: a count per outcome, even when zero, so a quiet minute
 * is data, not a gap; `JobRecordsUnreadable` counts job records that could not be read.
 */
export function recordJobMetrics(metrics: Metrics, result: JobsInvocationResult): void {
  for (const outcome of JOB_OUTCOMES) {
    metrics.addMetric(jobMetricName(outcome), MetricUnit.Count, result.outcomes[outcome] ?? 0);
  }
  metrics.addMetric('JobRecordsUnreadable', MetricUnit.Count, result.unreadable);
}

/**
 * One job's outcome, published at once (docs/jobs.md, "Honest failures"): an invocation killed
 * at its timeout by a later job has already written the counts of the jobs it finished. The
 * end-of-invocation record then carries zeros for the outcomes (a quiet minute is data) and the
 * unreadable count.
 */
export function publishJobOutcome(metrics: Metrics, outcome: string): void {
  metrics.addMetric(jobMetricName(outcome), MetricUnit.Count, 1);
  metrics.publishStoredMetrics();
}
