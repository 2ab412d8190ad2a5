/**
 * The worker: claims ready jobs and runs them one at a time, renewing the lease while a job
 * runs, until nothing is ready or the budget for starting jobs is spent. The same function
 * runs in the local server's loop (lib/jobs/loop.ts) and in the scheduled Lambda
 * (functions/maintenance-jobs.ts).
 */
import type { CatalogServices } from '../catalog/services.js';
import { CatalogError, ErrorCode } from '../errors.js';
import { jobContext, type JobContext } from '../queue/context.js';
import { type Claim, claimNext, complete, failAttempt, heartbeat, prune, releaseJob } from '../queue/jobs.js';
import type { JobRunner, JobRunners } from './runner.js';
import { type Failure, LeaseLostError } from '../queue/transitions.js';
import { encodeSegment, keys } from '../registry/keys.js';
import type { JobRecord, WorkerTier } from '../ports/job-record.js';
import { dispatchTasks } from '../queue/dispatch.js';
import { TIMEOUT_CODE, timeoutMessage } from '../queue/tiers.js';
import { withCommitSink } from '../events/commits.js';
import { jobCommitEvent } from './commit-events.js';

export type WorkerLog = (entry: Record<string, unknown>) => void;

export interface WorkerOptions {
  /** Who holds the leases (host, process, Lambda request id): shown as `rask.worker`. */
  readonly owner: string;
  /** Job types to take; default: every type `runners` knows. */
  readonly kinds?: readonly string[];
  /** No job is started after this many milliseconds; a started job runs to its end. */
  readonly budgetMs: number;
  /** Default: the data-plane runners (lib/jobs/runners/), loaded on first use. */
  readonly runners?: JobRunners;
  /** Stops claiming and aborts the running job (a job not finished is given back). */
  readonly signal?: AbortSignal;
  readonly log?: WorkerLog;
  /** Milliseconds since the epoch, for the start budget (tests inject a manual clock); default Date.now. */
  readonly clock?: () => number;
  /** Where this worker runs and how long it may run a job: written into each lease (docs/jobs.md, "Tiers"). */
  readonly tier?: WorkerTier;
  readonly limitMs?: number;
  /** Only this job (a task is started for one job). */
  readonly only?: string;
  /** Only this project's queue (a task knows its job's project); default: every project's. */
  readonly project?: string;
  /**
   * Stop a job at `limitMs` (the task tier's maximum duration): its signal is aborted, the worker
   * stops waiting for it and fails the attempt with the timeout code; the caller then exits,
   * which ends a step still inside LanceDB. The function tier's limit is Lambda's to enforce.
   */
  readonly enforceLimit?: boolean;
  /**
   * Called as soon as each job's outcome is known, before the next job starts: the Jobs
   * function flushes its metrics here, so a later job that outlives the invocation loses none.
   */
  readonly onOutcome?: (entry: WorkerReport['ran'][number]) => void;
}

export type Outcome = 'succeeded' | 'retrying' | 'failed' | 'lost' | 'released';

export interface WorkerReport {
  readonly ran: { id: string; project: string; type: string; outcome: Outcome; error?: string; code?: number }[];
  /** Unreadable job records, as `<project>/<id>`. */
  readonly unreadable: string[];
  /** Projects whose queue could not be read this pass (the others still ran). */
  readonly problems: string[];
  pruned: number;
}

export const consoleWorkerLog: WorkerLog = (entry) => console.error(JSON.stringify({ level: 'info', component: 'jobs', ...entry }));

interface ProjectQueue {
  readonly project: string;
  readonly services: CatalogServices;
  readonly ctx: JobContext;
}

/**
 * Runs ready jobs of every project in the registry (a job queued through `/projects/acme` lives
 * in acme's queue, lib/queue/context.ts). Projects take turns, one job each per round, so a
 * project with a long queue cannot starve the others; a project whose queue has nothing ready
 * leaves the rotation for this pass.
 */
export async function runJobsOnce(services: CatalogServices, options: WorkerOptions): Promise<WorkerReport> {
  const log = options.log ?? consoleWorkerLog;
  const runners = options.runners ?? (await import('./runners/index.js')).dataRunners;
  const kinds = options.kinds ?? Object.keys(runners);
  const clock = options.clock ?? Date.now;
  const deadline = clock() + options.budgetMs;
  const report: WorkerReport = { ran: [], unreadable: [], problems: [], pruned: 0 };
  const projects = options.project !== undefined ? [options.project] : await projectsWithQueues(services);
  const queues: ProjectQueue[] = projects.map((project) => {
    const scoped = project === services.project ? services : { ...services, project };
    return { project, services: scoped, ctx: jobContext(scoped) };
  });
  const stop = () => Boolean(options.signal?.aborted) || clock() >= deadline;
  const failedByWalk = (project: string, job: JobRecord) => {
    const entry = { id: job.id, project, type: job.type, outcome: 'failed' as const, error: job.error?.message ?? 'failed', ...(job.error?.code === undefined ? {} : { code: job.error.code }) };
    log({ message: 'job failed', ...entry });
    report.ran.push(entry);
    options.onOutcome?.(entry);
  };
  // The function tier starts the task-tier jobs' tasks (lib/queue/dispatch.ts); a task never does.
  const tasks = options.tier !== 'task' ? queues[0]?.ctx.tasks : undefined;
  const dispatch = async () => {
    if (!tasks) return;
    try {
      const d = await dispatchTasks(queues, tasks, options.owner, log);
      for (const { project, job } of d.ended) failedByWalk(project, job);
    } catch (err) {
      report.problems.push(`dispatch: ${String(err)}`);
      log({ message: 'job dispatch failed', error: String(err) });
    }
  };
  await dispatch();
  let escalated = false;

  let rotation = queues;
  while (rotation.length > 0 && !stop()) {
    const stillBusy: ProjectQueue[] = [];
    for (const q of rotation) {
      if (stop()) break;
      let scan;
      try {
        scan = await claimNext(q.ctx, options.owner, kinds, { tier: options.tier, limitMs: options.limitMs, only: options.only });
      } catch (err) {
        // One project's unreadable queue must not keep every other project's jobs waiting.
        report.problems.push(`project ${JSON.stringify(q.project)}: ${String(err)}`);
        log({ message: 'job queue unreadable', project: q.project, error: String(err) });
        continue;
      }
      for (const id of scan.unreadable) {
        const named = `${q.project}/${id}`;
        if (!report.unreadable.includes(named)) report.unreadable.push(named);
      }
      for (const a of scan.abandoned) {
        log({ message: 'job abandoned', id: a.id, project: q.project, type: a.type, attempt: a.attempt, owner: a.owner, outcome: a.outcome });
        if (a.outcome === 'escalated') escalated = true;
      }
      // A job the walk failed (abandoned, out of attempts) is a failure like any other: counted, alarmed on.
      for (const job of scan.ended) failedByWalk(q.project, job);
      if (!scan.claim) continue;
      stillBusy.push(q);
      const { job } = scan.claim;
      log({ message: 'job claimed', id: job.id, project: q.project, type: job.type, attempt: job.attempts, owner: options.owner });
      const limit = options.enforceLimit && options.limitMs !== undefined && options.tier ? { tier: options.tier, ms: options.limitMs } : undefined;
      const result = await runClaimed(q.ctx, q.services, scan.claim, runners[job.type], options.signal, log, limit);
      log({ message: `job ${result.outcome}`, id: job.id, project: q.project, type: job.type, ...(result.error ? { error: result.error } : {}) });
      const entry = { id: job.id, project: q.project, type: job.type, ...result };
      report.ran.push(entry);
      options.onOutcome?.(entry);
    }
    rotation = stillBusy;
  }
  // A job escalated by this pass gets its task now rather than a minute later.
  if (escalated) await dispatch();
  if (report.unreadable.length > 0) log({ message: 'unreadable job records skipped', ids: report.unreadable });
  for (const q of queues) {
    try {
      report.pruned += await prune(q.ctx);
    } catch (err) {
      report.problems.push(`project ${JSON.stringify(q.project)}: pruning: ${String(err)}`);
    }
  }
  return report;
}

/**
 * The services' own project first, then every other project in the registry. One LIST per page
 * of project names per pass; the services' project is included even if its record is missing.
 */
async function projectsWithQueues(services: CatalogServices): Promise<string[]> {
  const names = [services.project];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.listNames(keys.projectsPrefix(), { startAfter, limit: 1000, encode: encodeSegment });
    for (const name of page.names) if (name !== services.project) names.push(name);
    if (!page.more) return names;
    startAfter = page.names[page.names.length - 1];
  }
}

async function runClaimed(
  ctx: JobContext,
  services: CatalogServices,
  claimed: Claim,
  runner: JobRunner | undefined,
  shutdown: AbortSignal | undefined,
  log: WorkerLog,
  limit?: { tier: WorkerTier; ms: number },
): Promise<{ outcome: Outcome; error?: string; code?: number }> {
  const abort = new AbortController();
  const onShutdown = () => abort.abort('shutdown');
  shutdown?.addEventListener('abort', onShutdown);
  // A stop that came between the claim and here has already fired its event.
  if (shutdown?.aborted) onShutdown();
  let held = claimed;
  let lost: LeaseLostError | undefined;
  let pending: Record<string, string> = {};
  // One heartbeat at a time, and the last one awaited before the final write, so no two writes
  // of this worker ever race each other on the record.
  let beating: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beating = beating.then(async () => {
      if (lost) return;
      const output = pending;
      pending = {};
      try {
        held = await heartbeat(ctx, held, output);
      } catch (err) {
        if (err instanceof LeaseLostError) {
          lost = err;
          abort.abort(err);
        } else {
          // A store hiccup: the lease has slack for a few missed beats; keep the progress for the next one.
          pending = { ...output, ...pending };
          log({ message: 'heartbeat failed', id: held.job.id, error: String(err) });
        }
      }
    });
  }, ctx.policy.heartbeatMs);

  let output: Record<string, string> | undefined;
  let failure: unknown;
  let timedOut: JobTimeout | undefined;
  let limitTimer: NodeJS.Timeout | undefined;
  try {
    if (!runner) throw new CatalogError(ErrorCode.Unsupported, `no runner for job type ${JSON.stringify(held.job.type)}`);
    const job = held.job;
    // Each table version the runner commits gets its event now, not when the job ends
    // (commit-events.ts): the change relay must find it claimed within its settle window.
    const table = job.table;
    const announce = async (version: number) => {
      if (table) await services.events?.publish([jobCommitEvent(services.project, { ...job, table }, version, services.now())]);
    };
    const running = withCommitSink(announce, () =>
      runner(job, {
        services,
        signal: abort.signal,
        progress: (o) => void (pending = { ...pending, ...o }),
      }),
    );
    // At the limit the signal is aborted and the worker stops waiting: a step inside LanceDB
    // cannot be interrupted, so the caller exits after the failure is written.
    const atLimit = limit
      ? new Promise<never>((_, reject) => {
          limitTimer = setTimeout(() => {
            timedOut = new JobTimeout(limit.tier, limit.ms);
            abort.abort(timedOut);
            reject(timedOut);
          }, limit.ms);
        })
      : undefined;
    running.catch(() => undefined);
    output = await (atLimit ? Promise.race([running, atLimit]) : running);
  } catch (err) {
    failure = err;
  } finally {
    clearTimeout(limitTimer);
    clearInterval(timer);
    await beating;
    shutdown?.removeEventListener('abort', onShutdown);
  }

  if (lost) return { outcome: 'lost', error: lost.reason };
  try {
    if (failure === undefined) {
      await complete(ctx, held, { ...pending, ...output });
      return { outcome: 'succeeded' };
    }
    if (abort.signal.aborted && abort.signal.reason === 'shutdown') {
      await releaseJob(ctx, held);
      return { outcome: 'released' };
    }
    const f: Failure = timedOut
      ? { message: timeoutMessage(timedOut.tier, timedOut.limitMs), code: TIMEOUT_CODE, kind: 'timeout', permanent: true }
      : classify(failure, held.job.id, log);
    const after = await failAttempt(ctx, held, f);
    return { outcome: after.status === 'Failed' ? 'failed' : 'retrying', error: f.message, ...(f.code === undefined ? {} : { code: f.code }) };
  } catch (err) {
    if (err instanceof LeaseLostError) return { outcome: 'lost', error: err.reason };
    throw err;
  }
}

/** A job stopped at its tier's limit (WorkerOptions.enforceLimit). */
export class JobTimeout extends Error {
  constructor(
    readonly tier: WorkerTier,
    readonly limitMs: number,
  ) {
    super(timeoutMessage(tier, limitMs));
    this.name = 'JobTimeout';
  }
}

/** Retrying cannot fix a bad request or a missing table; it may fix a conflict, a timeout or an outage. */
const TRANSIENT: ReadonlySet<number> = new Set([
  ErrorCode.ConcurrentModification,
  ErrorCode.ServiceUnavailable,
  ErrorCode.Internal,
  ErrorCode.Throttling,
]);

function classify(err: unknown, id: string, log: WorkerLog): Failure {
  if (err instanceof CatalogError) {
    return { message: err.message, code: err.code, permanent: !TRANSIENT.has(err.code) };
  }
  // Like the API's error contract: an unexpected error's text may carry paths or secrets, so it
  // goes to the log and the record only says where to look.
  log({ message: 'job runner error', id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  return { message: `internal error while running the job; see the worker's log for job ${id}`, code: ErrorCode.Internal, permanent: false };
}
