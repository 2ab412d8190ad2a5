/**
 * Job operations: enqueue, describe and alter (the request side, metadata bundle), claim,
 * heartbeat and finish (the worker side), and the housekeeping that retires and prunes.
 * Every write is a compare-and-swap of what lib/queue/transitions.ts decided from the record
 * just read; nothing here loads the data plane.
 */
import { randomUUID } from 'node:crypto';
import { TransactionNotFoundError } from '../errors.js';
import { ConditionFailedError } from '../ports/object-store.js';
import type { Versioned } from '../ports/object-store.js';
import { applyActions, type AlterAction } from './alter.js';
import type { JobContext } from './context.js';
import { isJobId, jobIdTime, newJobId } from './ids.js';
import { isTerminal, type JobRecord, type JobTable } from '../ports/job-record.js';
import { claim, claimable, fail, type Failure, LeaseLostError, release, renew, succeed, type WorkerInfo } from './transitions.js';
import { toTransaction, type TransactionView } from './view.js';
import { stopTaskOf } from './dispatch.js';
import { DEFAULT_TIER_LIMITS, escalate, type JobEstimate, type Route, routeByEstimate } from './tiers.js';

export interface NewJob {
  readonly type: string;
  readonly table?: JobTable;
  readonly params: Record<string, unknown>;
  readonly summary?: Record<string, string>;
  /** A job id the caller made with newJobId (so it could record it before the job exists); default: a new one. */
  readonly id?: string;
  /** What the job is expected to cost: routes it to the task tier above the limits (lib/queue/tiers.ts). */
  readonly estimate?: JobEstimate;
  /** A tier decided before (a table escalated on an earlier pass: lib/maintenance/fan-out.ts); wins over the estimate. */
  readonly route?: Route;
}

export async function enqueue(ctx: JobContext, spec: NewJob): Promise<JobRecord> {
  const now = ctx.now();
  const at = now.toISOString();
  if (spec.id !== undefined && !isJobId(spec.id)) throw new Error(`not a job id: ${JSON.stringify(spec.id)}`);
  const route = spec.route ?? routeByEstimate(spec.type, spec.estimate, ctx.tasks?.limits ?? DEFAULT_TIER_LIMITS);
  // Without a task tier everything runs on the function tier; the estimate's verdict is still shown.
  const tier = ctx.tasks && route?.tier === 'task' ? 'task' : undefined;
  const job: JobRecord = {
    kind: 'job',
    id: spec.id ?? newJobId(now),
    ...(tier ? { tier } : {}),
    ...(route ? { tierReason: tier || route.tier === 'function' ? route.reason : `${route.reason}, but no task tier is configured` } : {}),
    type: spec.type,
    ...(spec.table ? { table: { id: [...spec.table.id], uid: spec.table.uid } } : {}),
    params: spec.params,
    summary: spec.summary ?? {},
    status: 'Queued',
    properties: {},
    output: {},
    attempts: 0,
    maxAttempts: ctx.policy.maxAttempts,
    notBefore: at,
    createdAt: at,
    updatedAt: at,
  };
  await ctx.queue.insert(job);
  return job;
}

/** The transaction id in a request path: the id's parts joined back with the delimiter. */
export function transactionId(parts: readonly string[], delimiter: string): string {
  return parts.join(delimiter);
}

export async function describeJob(ctx: JobContext, id: string): Promise<TransactionView> {
  return toTransaction((await readJob(ctx, id)).value);
}

/**
 * All actions or none: one compare-and-swap; a lost race re-reads and re-applies them all. The
 * actions are parsed by the door (parseActions, lib/queue/alter.ts) before anything is read.
 */
export async function alterJob(ctx: JobContext, id: string, actions: readonly AlterAction[]): Promise<TransactionView> {
  let stopped = false;
  const altered = await ctx.retrying(`altering transaction ${id}`, async () => {
    const current = await readJob(ctx, id);
    const next = applyActions(current.value, actions, ctx.now());
    await ctx.queue.replace(next, current.etag);
    stopped = isTerminal(next.status) && !isTerminal(current.value.status);
    return next;
  });
  // A job stopped by request leaves the live set now rather than at the next worker pass.
  if (isTerminal(altered.status)) await retireQuietly(ctx, altered.id);
  // Its task (if it has one) is stopped too: a step inside LanceDB would not see the cancel.
  if (stopped) await stopTaskOf(ctx.tasks, altered, (e) => console.error(JSON.stringify({ level: 'warn', component: 'jobs', ...e })));
  return toTransaction(altered);
}

async function readJob(ctx: JobContext, id: string): Promise<Versioned<JobRecord>> {
  const found = isJobId(id) ? await ctx.queue.read(id) : undefined;
  if (!found) throw new TransactionNotFoundError(`transaction ${JSON.stringify(id)} does not exist (or has expired)`);
  return found;
}

// ---- the worker side ----

/** A job this worker holds: the record as last written, its etag, and the lease token. */
export interface Claim {
  readonly job: JobRecord;
  readonly etag: string;
  readonly token: string;
}

export interface ClaimScan {
  readonly claim?: Claim;
  /** Ids of live records that could not be read (reported, never claimed). */
  readonly unreadable: readonly string[];
  /** Jobs this walk found abandoned (lease lapsed): reclaimed, escalated or failed. */
  readonly abandoned: readonly AbandonedJob[];
  /** Jobs this walk ended Failed (abandoned with no attempt left): each counts as `failed`. */
  readonly ended: readonly JobRecord[];
}

export interface AbandonedJob {
  readonly id: string;
  readonly type: string;
  /** The worker whose lease lapsed, and the attempt it was on. */
  readonly owner: string;
  readonly attempt: number;
  readonly outcome: 'reclaimed' | 'escalated' | 'failed';
}

/** Which jobs a worker takes, and what it writes into their leases. */
export interface ClaimOptions extends WorkerInfo {
  /** Only this job (a task runs the one job it was started for). */
  readonly only?: string;
  /** How often an `only` walk has looked again after a lost race. */
  readonly retried?: number;
}

const PAGE = 100;

/**
 * Walks the due jobs (WorkQueue.listDue) and takes the first claimable one of the given types with a
 * compare-and-swap. Losing that race just means another worker took it (or it changed): the
 * walk moves on. Finished jobs met on the way are retired, abandoned jobs out of attempts are
 * failed (transitions.claim) and reported in `ended`.
 */
export async function claimNext(ctx: JobContext, owner: string, types: readonly string[], options: ClaimOptions = {}): Promise<ClaimScan> {
  const unreadable: string[] = [];
  const abandoned: AbandonedJob[] = [];
  const ended: JobRecord[] = [];
  const scan = (claimed?: Claim): ClaimScan => ({ ...(claimed ? { claim: claimed } : {}), unreadable, abandoned, ended });
  let retries = options.retried ?? 0;
  let startAfter: string | undefined;
  do {
    const page = await ctx.queue.listDue(ctx.now(), { startAfter, limit: PAGE });
    unreadable.push(...page.unreadable);
    for (const { value: job, etag } of page.jobs) {
      if (isTerminal(job.status)) {
        await retireQuietly(ctx, job.id);
        continue;
      }
      const now = ctx.now();
      if (options.only !== undefined && job.id !== options.only) continue;
      // The function tier never claims a task-tier job: the dispatcher starts a task for it.
      if (job.tier === 'task' && options.tier !== 'task') continue;
      const state = claimable(job, now);
      if (!types.includes(job.type) || !state) continue;
      const token = randomUUID();
      const escalating = state === 'abandoned' && ctx.tasks !== undefined && job.tier !== 'task' && job.attempts < job.maxAttempts && options.tier !== 'task';
      const next = escalating ? escalate(job, now) : claim(job, owner, token, now, ctx.policy, options);
      let newEtag: string;
      try {
        newEtag = await ctx.queue.replace(next, etag);
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
        // A task's one job changed under it (the dispatcher noting the task's handle, a property):
        // look again rather than exit with its job unclaimed.
        if (options.only !== undefined && retries++ < 5) return claimNext(ctx, owner, types, { ...options, retried: retries });
        continue;
      }
      if (state === 'abandoned') {
        const outcome = escalating ? 'escalated' : next.status === 'Running' ? 'reclaimed' : 'failed';
        abandoned.push({ id: job.id, type: job.type, owner: job.lease?.owner ?? '?', attempt: job.attempts, outcome });
      }
      if (escalating) continue;
      if (next.status === 'Running') return scan({ job: next, etag: newEtag, token });
      ended.push(next);
      await retireQuietly(ctx, next.id);
    }
    startAfter = page.next;
  } while (startAfter !== undefined);
  return scan();
}

/**
 * Writes `decide(current)` while this worker still holds the lease. A lost race is not a lost
 * lease (AlterTransaction may have set a property): re-read, and if the lease is still ours,
 * decide again on the fresh record. `decide` throws LeaseLostError when it is not.
 */
async function updateOwned(ctx: JobContext, held: Claim, decide: (job: JobRecord, now: Date) => JobRecord): Promise<Claim> {
  let { job, etag } = held;
  for (let attempt = 1; ; attempt++) {
    const next = decide(job, ctx.now());
    try {
      return { ...held, job: next, etag: await ctx.queue.replace(next, etag) };
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt >= 10) throw err;
    }
    const current = await ctx.queue.read(job.id);
    if (!current) throw new LeaseLostError(job.id, 'the job record is gone');
    ({ value: job, etag } = current);
  }
}

export function heartbeat(ctx: JobContext, held: Claim, output?: Record<string, string>): Promise<Claim> {
  return updateOwned(ctx, held, (job, now) => renew(job, held.token, now, ctx.policy, output));
}

export async function complete(ctx: JobContext, held: Claim, output: Record<string, string>): Promise<JobRecord> {
  const done = await updateOwned(ctx, held, (job, now) => succeed(job, held.token, now, output));
  await retireQuietly(ctx, done.job.id);
  return done.job;
}

export async function failAttempt(ctx: JobContext, held: Claim, failure: Failure): Promise<JobRecord> {
  const after = await updateOwned(ctx, held, (job, now) => fail(job, held.token, now, ctx.policy, failure));
  if (isTerminal(after.job.status)) await retireQuietly(ctx, after.job.id);
  return after.job;
}

export async function releaseJob(ctx: JobContext, held: Claim): Promise<JobRecord> {
  return (await updateOwned(ctx, held, (job, now) => release(job, held.token, now))).job;
}

/** Deletes retired jobs whose retention has ended. Returns how many went. */
export async function prune(ctx: JobContext): Promise<number> {
  const cutoff = ctx.now().getTime() - ctx.policy.retentionMs;
  let pruned = 0;
  let startAfter: string | undefined;
  do {
    const page = await ctx.queue.listRetired({ startAfter, limit: PAGE });
    for (const id of page.ids) {
      // Ids sort by creation time and a job finishes after it is created: from the first id
      // created after the cutoff on, nothing can have finished before it.
      if (jobIdTime(id).getTime() > cutoff) return pruned;
      const found = await ctx.queue.read(id);
      if (!found?.value.finishedAt || Date.parse(found.value.finishedAt) > cutoff) continue;
      try {
        await ctx.queue.remove(id, found.etag);
        pruned++;
      } catch (err) {
        if (!(err instanceof ConditionFailedError)) throw err;
      }
    }
    startAfter = page.next;
  } while (startAfter !== undefined);
  return pruned;
}

/**
 * Moving a finished job out of the live set is housekeeping: if it fails now, the next claim
 * walk meets the job again and retries, so a failure here must not fail what just succeeded.
 */
async function retireQuietly(ctx: JobContext, id: string): Promise<void> {
  try {
    await ctx.queue.retire(id);
  } catch {
    // retried by the next claimNext
  }
}
