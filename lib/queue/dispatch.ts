/**
 * Dispatch (docs/jobs.md, "Dispatch"): how task-tier jobs get a task. Run by the function-tier
 * worker at each pass (lib/jobs/worker.ts), for every project's queue:
 *
 * - a due task-tier job without a dispatch stamp gets one by compare-and-swap, then one
 *   `TaskRunner.start` with the token `<id>-<count>`: of overlapping passes exactly one wins
 *   the swap, so each dispatch starts one task;
 * - a refused start (throttled, no capacity) takes the stamp back and waits a little: nothing
 *   ran, so no attempt is spent (attempts count claims, and only the task claims);
 * - a stamped job still Queued after `graceMs` lost its task before the claim: its task's stop
 *   reason goes into `rask.error` and it is dispatched again with the next count;
 * - a running task-tier job whose lease lapsed lost its task: the stop reason goes into
 *   `rask.error` and the job is queued again (the attempt is spent), or Failed when none is left.
 *
 * At most `concurrency` task-tier jobs are stamped or running at once, across passes: a pass
 * stamps (compare-and-swap) as many jobs as its first listing leaves room for, then counts the
 * in-flight jobs of every queue once more, and takes back as many of its own stamps as the count
 * is over the cap before starting the rest. A pass's stamps are durable before its recount, so
 * whenever more than `concurrency` stamps were kept, the pass among their owners that recounted
 * last saw them all and would have kept fewer: the cap is never exceeded. Overlapping passes may
 * all back off; nothing ran, so no attempt is spent, and the next pass dispatches. One recount
 * per pass, not one per stamp: a pass lists every queue twice, whatever it dispatches
 * (docs/jobs.md, "Dispatch").
 */
import type { JobRecord } from '../ports/job-record.js';
import { ConditionFailedError, type Versioned } from '../ports/object-store.js';
import { TaskRefusedError } from '../ports/task-runner.js';
import type { JobContext, TaskTier } from './context.js';
import { claimable, outOfAttempts, withoutDispatch } from './transitions.js';
import { abandonedMessage, TIMEOUT_CODE } from './tiers.js';

export interface DispatchReport {
  /** Jobs a task was started for (re-dispatches included). */
  readonly started: string[];
  /** Jobs whose start was refused (no attempt spent). */
  readonly refused: string[];
  /** Task-tier jobs whose task was lost (requeued or failed). */
  readonly lost: string[];
  /** Jobs this pass ended Failed (a lost task with no attempt left). */
  readonly ended: { project: string; job: JobRecord }[];
}

/** How long a refused start waits before the next pass tries again. */
export const REFUSED_BACKOFF_MS = 30_000;

export interface DispatchQueue {
  readonly project: string;
  readonly ctx: JobContext;
}

type Log = (entry: Record<string, unknown>) => void;

const PAGE = 100;

async function liveJobs(ctx: JobContext): Promise<Versioned<JobRecord>[]> {
  const out: Versioned<JobRecord>[] = [];
  let startAfter: string | undefined;
  do {
    const page = await ctx.queue.listLive({ startAfter, limit: PAGE });
    out.push(...page.jobs);
    startAfter = page.next;
  } while (startAfter !== undefined);
  return out;
}

const inFlight = (job: JobRecord, now: Date, tier: TaskTier): boolean =>
  job.tier === 'task' &&
  ((job.status === 'Running' && claimable(job, now) === undefined) ||
    (job.status === 'Queued' && job.dispatch !== undefined && Date.parse(job.dispatch.at) + tier.graceMs > now.getTime()));

export async function dispatchTasks(queues: readonly DispatchQueue[], tier: TaskTier, owner: string, log: Log): Promise<DispatchReport> {
  const report: DispatchReport = { started: [], refused: [], lost: [], ended: [] };
  const seen: { q: DispatchQueue; job: Versioned<JobRecord> }[] = [];
  for (const q of queues) for (const job of await liveJobs(q.ctx)) if (job.value.tier === 'task') seen.push({ q, job });
  const running = seen.filter(({ q, job }) => inFlight(job.value, q.ctx.now(), tier)).length;
  const stamps: { q: DispatchQueue; record: JobRecord; etag: string; count: number }[] = [];

  for (const { q, job } of seen) {
    const ctx = q.ctx;
    const now = ctx.now();
    const { value: record, etag } = job;
    const state = claimable(record, now);
    if (!state) continue;
    if (state === 'abandoned') {
      // The task stopped renewing its lease: ask the runner why, and queue the job again.
      const reason = await stopReason(tier, record);
      const error = {
        message: `${abandonedMessage(record.lease)}${reason ? `; the task stopped: ${reason}` : ''}`,
        code: TIMEOUT_CODE,
        kind: 'task_stopped' as const,
        at: now.toISOString(),
      };
      const next =
        record.attempts >= record.maxAttempts
          ? outOfAttempts(record, error, now)
          : { ...withoutDispatch(record), status: 'Queued' as const, lease: undefined, error, notBefore: now.toISOString(), updatedAt: now.toISOString() };
      const clean = dropUndefined(next);
      if (!(await swap(ctx, clean, etag))) continue;
      report.lost.push(record.id);
      log({ message: 'job task lost', id: record.id, project: q.project, attempt: record.attempts, reason: reason ?? 'unknown' });
      if (clean.status === 'Failed') {
        report.ended.push({ project: q.project, job: clean });
        await ctx.queue.retire(clean.id).catch(() => undefined);
      }
      continue;
    }
    if (record.dispatch && Date.parse(record.dispatch.at) + tier.graceMs > now.getTime()) continue;
    if (running + stamps.length >= tier.concurrency) continue;
    let error = record.error;
    if (record.dispatch) {
      // Dispatched, never claimed, grace over: the task was lost before its claim.
      const reason = await stopReason(tier, record);
      error = { message: `the task started for this job (dispatch ${record.dispatch.count}) never claimed it${reason ? `: ${reason}` : ''}; dispatched again`, kind: 'task_stopped', at: now.toISOString() };
      log({ message: 'job task lost before its claim', id: record.id, project: q.project, dispatch: record.dispatch.count, reason: reason ?? 'unknown' });
    }
    // Never reused, even after the stamp was taken back: ECS returns the first task for a repeated clientToken.
    const count = Math.max(record.dispatches ?? 0, record.dispatch?.count ?? 0) + 1;
    const stamped: JobRecord = {
      ...record,
      ...(error ? { error } : {}),
      dispatch: { count, at: now.toISOString(), by: owner },
      dispatches: count,
      updatedAt: now.toISOString(),
    };
    const stampedEtag = await swap(ctx, stamped, etag);
    // Another pass stamped it (or it changed): that pass starts its task.
    if (stampedEtag) stamps.push({ q, record: stamped, etag: stampedEtag, count });
  }
  if (stamps.length === 0) return report;

  // One recount for all of this pass's stamps, now durable (see the header): over the cap, this
  // pass yields as many of its own places as the count is over, its last stamps first.
  const counted = await countInFlight(queues, tier);
  const over = Math.min(stamps.length, Math.max(0, counted - tier.concurrency));
  for (const { q, record, etag } of stamps.splice(stamps.length - over, over)) {
    log({ message: 'job dispatch deferred', id: record.id, project: q.project, in_flight: counted, concurrency: tier.concurrency });
    await swap(q.ctx, { ...withoutDispatch(record), updatedAt: q.ctx.now().toISOString() }, etag);
  }
  for (const { q, record, etag, count } of stamps) {
    const ctx = q.ctx;
    try {
      const task = await tier.runner.start({ jobId: record.id, project: q.project, token: `${record.id}-${count}` });
      report.started.push(record.id);
      log({ message: 'job task started', id: record.id, project: q.project, dispatch: count, task });
      await noteTask(ctx, record.id, count, `${tier.runner.kind}:${task}`);
    } catch (err) {
      if (!(err instanceof TaskRefusedError)) throw err;
      report.refused.push(record.id);
      log({ message: 'job task refused', id: record.id, project: q.project, error: err.message });
      // Take the stamp back: the next pass (after a short wait) dispatches it again, and no attempt was spent.
      const at = ctx.now();
      await swap(ctx, {
        ...withoutDispatch(record),
        error: { message: `the task could not be started (${err.message}); no attempt was spent, it is tried again`, at: at.toISOString() },
        notBefore: new Date(at.getTime() + REFUSED_BACKOFF_MS).toISOString(),
        updatedAt: at.toISOString(),
      }, etag);
    }
  }
  return report;
}

/** Task-tier jobs stamped or running now, over every queue: the number the cap bounds. */
async function countInFlight(queues: readonly DispatchQueue[], tier: TaskTier): Promise<number> {
  let n = 0;
  for (const q of queues) for (const job of await liveJobs(q.ctx)) if (inFlight(job.value, q.ctx.now(), tier)) n++;
  return n;
}

/** Writes `next` if the record is unchanged; undefined when another writer came first. */
async function swap(ctx: JobContext, next: JobRecord, etag: string): Promise<string | undefined> {
  try {
    return await ctx.queue.replace(next, etag);
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/** Records the task's handle on the stamp it belongs to (the task may have claimed the job meanwhile). */
async function noteTask(ctx: JobContext, id: string, count: number, task: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const found = await ctx.queue.read(id);
    if (!found || found.value.dispatch?.count !== count || found.value.dispatch.task) return;
    if (await swap(ctx, { ...found.value, dispatch: { ...found.value.dispatch, task } }, found.etag)) return;
  }
}

/** The runner's word on a job's last task, if it has one. */
async function stopReason(tier: TaskTier, job: JobRecord): Promise<string | undefined> {
  const task = job.dispatch?.task;
  if (!task) return undefined;
  const handle = task.slice(task.indexOf(':') + 1);
  try {
    const state = await tier.runner.describe(handle);
    return state.status === 'stopped' || state.status === 'missing' ? (state.stopReason ?? state.status) : undefined;
  } catch (err) {
    return `its state could not be read (${String(err)})`;
  }
}

function dropUndefined(job: JobRecord): JobRecord {
  return Object.fromEntries(Object.entries(job).filter(([, v]) => v !== undefined)) as unknown as JobRecord;
}

/** A cancel of a task-tier job also stops its task (best effort: the task also sees the cancel at its next heartbeat). */
export async function stopTaskOf(tier: TaskTier | undefined, job: JobRecord, log: Log): Promise<void> {
  const task = job.dispatch?.task;
  if (!tier || !task) return;
  try {
    await tier.runner.stop(task.slice(task.indexOf(':') + 1), `rask job ${job.id} is ${job.status}`);
  } catch (err) {
    log({ message: 'job task stop failed', id: job.id, task, error: String(err) });
  }
}
