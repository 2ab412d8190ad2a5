/**
 * What DescribeTransaction and AlterTransaction answer: the status and one string map. The map
 * is the caller's properties plus the server's view of the job under keys starting with
 * `rask.`, which callers cannot set or unset (lib/queue/alter.ts), so the server can add keys
 * later without ever colliding with a caller's.
 */
import type { JobRecord, JobStatus } from '../ports/job-record.js';

export const RESERVED_PREFIX = 'rask.';

export interface TransactionView {
  status: JobStatus;
  properties: Record<string, string>;
}

export function toTransaction(job: JobRecord): TransactionView {
  const own: Record<string, string | undefined> = {
    kind: job.type,
    ...job.summary,
    table: job.table ? JSON.stringify(job.table.id) : undefined,
    attempts: String(job.attempts),
    max_attempts: String(job.maxAttempts),
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    not_before: job.status === 'Queued' ? job.notBefore : undefined,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    worker: job.lease?.owner ?? job.lastWorker,
    lease_until: job.lease?.until,
    heartbeat_at: job.heartbeatAt,
    error: job.error?.message,
    error_code: job.error?.code === undefined ? undefined : String(job.error.code),
    error_at: job.error?.at,
    error_kind: job.error?.kind,
    tier: job.tier ?? 'function',
    tier_reason: job.tierReason,
    dispatched_at: job.dispatch?.at,
    dispatches: job.dispatches === undefined ? undefined : String(job.dispatches),
    task: job.dispatch?.task,
  };
  const properties: Record<string, string> = { ...job.properties };
  // Runner output first, so that the fields above always win over a runner's key of the same name.
  for (const [k, v] of Object.entries({ ...job.output, ...own })) {
    if (v !== undefined) properties[RESERVED_PREFIX + k] = v;
  }
  return { status: job.status, properties };
}
