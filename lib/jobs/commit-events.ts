/**
 * The event of a table version a job committed (docs/events.md, "Commits straight to storage"):
 * the worker (worker.ts) hears each main-branch commit its runner makes (lib/events/commits.ts)
 * and appends this at once, before the runner's next step. So the change relay finds the version
 * claimed however long the job still runs (a backfill commits slice after slice), and announces
 * no `via: storage` twin of it. The id is derived from (job, version): an attempt that commits
 * the same version again, or a retry of the append, carries the same id.
 */
import { createHash } from 'node:crypto';
import { cloudEvent, type RaskEvent } from '../events/cloudevent.js';
import { JOB_COMMIT_EVENT, JOB_COMMIT_EVENTS } from '../events/vocabulary.js';
import type { JobRecord } from '../ports/job-record.js';

/** A stable UUID-shaped id for version `version` committed by job `jobId` of `project`. */
export function jobCommitId(project: string, jobId: string, version: number): string {
  const h = createHash('sha256').update(`job-commit\n${project}\n${jobId}\n${version}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The event of `version`, committed by `job` (which names its table) in `project`. */
export function jobCommitEvent(project: string, job: JobRecord & { table: NonNullable<JobRecord['table']> }, version: number, at: Date): RaskEvent {
  return cloudEvent(
    JOB_COMMIT_EVENTS[job.type] ?? JOB_COMMIT_EVENT,
    {
      project,
      kind: 'table',
      id: [...job.table.id],
      // The job runs for whoever queued it; their request's event names them (with this job's id).
      principal: 'jobs',
      operation: job.type,
      request_id: job.id,
      version,
      details: { transaction_id: job.id, via: 'job' },
    },
    at,
    jobCommitId(project, job.id, version),
  );
}
