/**
 * The job state machine as pure functions: each takes a record and returns the next one, or
 * throws. Storage never decides anything; lib/queue/jobs.ts writes what these return with a
 * compare-and-swap against the record they were given, so a decision made on a stale record
 * can never land.
 *
 *            claim (due)                 succeed
 *   Queued ───────────────▶ Running ───────────────▶ Succeeded
 *     ▲                      │  │ fail, attempts left: Queued, notBefore = now + backoff
 *     └──────────────────────┘  │ fail, permanent or out of attempts ──▶ Failed
 *                               │ lease expired: reclaimed (a new attempt) or, out of attempts, Failed
 *   Queued | Running ── AlterTransaction ──▶ Canceled | Failed
 */
import { InvalidInputError } from '../errors.js';
import { isTerminal, type JobErrorKind, type JobPolicy, type JobRecord, type WorkerTier } from '../ports/job-record.js';
import { abandonedMessage, remedy, TIMEOUT_CODE } from './tiers.js';

/** The worker no longer holds the job; it must stop and write nothing more. */
export class LeaseLostError extends Error {
  constructor(
    readonly jobId: string,
    readonly reason: string,
  ) {
    super(`job ${jobId}: ${reason}`);
    this.name = 'LeaseLostError';
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (t: string) => Date.parse(t);

/**
 * The claim's WHERE clause: a queued job whose not-before time has come, or a running job whose
 * lease has run out (its worker stopped heartbeating: crashed, frozen or timed out).
 */
export function claimable(job: JobRecord, now: Date): 'due' | 'abandoned' | undefined {
  if (job.status === 'Queued' && ms(job.notBefore) <= now.getTime()) return 'due';
  if (job.status === 'Running' && (!job.lease || ms(job.lease.until) < now.getTime())) return 'abandoned';
  return undefined;
}

/**
 * Takes a claimable job for `owner`. An abandoned job that has used all its attempts is not
 * run again but failed: a job that kills its worker every time (a native crash, a build longer
 * than the function's timeout) must end, not loop.
 */
export function claim(job: JobRecord, owner: string, token: string, now: Date, policy: JobPolicy, worker: WorkerInfo = {}): JobRecord {
  const state = claimable(job, now);
  if (!state) throw new Error(`job ${job.id} is not claimable`);
  const at = now.toISOString();
  const abandonedBy = state === 'abandoned' ? abandonment(job, now) : undefined;
  if (abandonedBy && job.attempts >= job.maxAttempts) return outOfAttempts(job, abandonedBy, now);
  return {
    // A task-tier job keeps its dispatch stamp while it runs: a cancel finds the task to stop there.
    ...job,
    status: 'Running',
    attempts: job.attempts + 1,
    lease: {
      owner,
      token,
      until: iso(now.getTime() + policy.leaseMs),
      ...(worker.tier ? { tier: worker.tier } : {}),
      ...(worker.limitMs !== undefined ? { limitMs: worker.limitMs } : {}),
    },
    heartbeatAt: at,
    lastWorker: owner,
    startedAt: at,
    updatedAt: at,
    ...(abandonedBy ? { error: abandonedBy } : {}),
  };
}

/** What a worker writes into the lease it takes (named in the message if the lease lapses). */
export interface WorkerInfo {
  readonly tier?: WorkerTier;
  readonly limitMs?: number;
}

type JobError = NonNullable<JobRecord['error']>;

/** The error an abandoned attempt leaves: a timeout, with the code, naming the tier and its limit. */
export function abandonment(job: JobRecord, now: Date): JobError {
  return { message: abandonedMessage(job.lease), code: TIMEOUT_CODE, kind: 'timeout', at: now.toISOString() };
}

/** An abandoned job with no attempt left ends Failed, naming the remedy. */
export function outOfAttempts(job: JobRecord, error: JobError, now: Date): JobRecord {
  const message = `${error.message}; all ${job.maxAttempts} attempts are used. Remedy: ${remedy(job.lease?.tier)}`;
  return finished({ ...job, error: { ...error, message } }, 'Failed', now);
}

/** Throws unless `token` still holds the running job. */
export function requireLease(job: JobRecord, token: string): void {
  if (job.status !== 'Running') {
    const last = job.lastWorker ? ` (last held by ${job.lastWorker})` : '';
    throw new LeaseLostError(job.id, `the job is ${job.status} now${last}`);
  }
  if (job.lease?.token !== token) {
    throw new LeaseLostError(job.id, `the job was reclaimed by ${job.lease?.owner ?? 'another worker'} after this worker's lease expired`);
  }
}

/** Extends the lease (and records progress the runner reported). */
export function renew(job: JobRecord, token: string, now: Date, policy: JobPolicy, output: Record<string, string> = {}): JobRecord {
  requireLease(job, token);
  const at = now.toISOString();
  return {
    ...job,
    lease: { ...job.lease!, until: iso(now.getTime() + policy.leaseMs) },
    heartbeatAt: at,
    output: { ...job.output, ...output },
    updatedAt: at,
  };
}

export function succeed(job: JobRecord, token: string, now: Date, output: Record<string, string>): JobRecord {
  requireLease(job, token);
  return finished({ ...job, output: { ...job.output, ...output } }, 'Succeeded', now);
}

export interface Failure {
  readonly message: string;
  readonly code?: number;
  /** Retrying cannot help (bad input, missing table…): fail now whatever attempts are left. */
  readonly permanent: boolean;
  readonly kind?: JobErrorKind;
}

/** A failed attempt: back to the queue after a backoff while attempts remain, else Failed. */
export function fail(job: JobRecord, token: string, now: Date, policy: JobPolicy, failure: Failure, random = Math.random): JobRecord {
  requireLease(job, token);
  const error = {
    message: failure.message,
    ...(failure.code === undefined ? {} : { code: failure.code }),
    ...(failure.kind === undefined ? {} : { kind: failure.kind }),
    at: now.toISOString(),
  };
  if (failure.permanent || job.attempts >= job.maxAttempts) return finished({ ...job, error }, 'Failed', now);
  return {
    ...withoutDispatch(withoutLease(job)),
    status: 'Queued',
    error,
    notBefore: iso(now.getTime() + backoffMs(job.attempts, policy, random)),
    updatedAt: now.toISOString(),
  };
}

/** Gives a job back unfinished (the worker is shutting down): not a failure, so not an attempt. */
export function release(job: JobRecord, token: string, now: Date): JobRecord {
  requireLease(job, token);
  return {
    ...withoutDispatch(withoutLease(job)),
    status: 'Queued',
    attempts: Math.max(0, job.attempts - 1),
    notBefore: now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

/**
 * A status set through AlterTransaction. Only stopping makes sense from outside: a queued or
 * running job may be Canceled (or Failed, for callers that want that word); setting the status
 * a finished job already has is a no-op, so a repeated cancel is harmless. A running worker
 * learns of it at its next heartbeat (its lease is gone) and stops.
 */
export function setStatusByRequest(job: JobRecord, status: JobRecord['status'], now: Date): JobRecord {
  if (status === job.status && isTerminal(status)) return job;
  if ((status === 'Canceled' || status === 'Failed') && !isTerminal(job.status)) {
    const stopped =
      status === 'Failed' ? { ...job, error: { message: 'failed by request (AlterTransaction)', at: now.toISOString() } } : job;
    return finished(stopped, status, now);
  }
  throw new InvalidInputError(
    `a ${job.status} transaction cannot be set to ${status}: only a Queued or Running transaction can be set to Canceled or Failed`,
  );
}

/** Retry n (1-based) waits base × 2^(n-1), capped, with ±20 % jitter so retries do not march in step. */
export function backoffMs(attempt: number, policy: JobPolicy, random = Math.random): number {
  const base = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export function finished(job: JobRecord, status: 'Succeeded' | 'Failed' | 'Canceled', now: Date): JobRecord {
  const at = now.toISOString();
  return { ...withoutLease(job), status, finishedAt: at, updatedAt: at };
}

/** A job going back to the queue needs a new task when it is due again: its old stamp must not look in flight. */
export function withoutDispatch(job: JobRecord): JobRecord {
  const { dispatch: _dispatch, ...rest } = job;
  return rest;
}

function withoutLease(job: JobRecord): JobRecord {
  const { lease: _lease, ...rest } = job;
  return rest;
}
