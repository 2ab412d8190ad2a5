/**
 * The job queue's behaviour, written once and run against every WorkQueue implementation
 * (work-queue-{memory,fs}.test.ts: the registry store on memory and on the filesystem with jittered
 * calls; work-queue-dynamo.test.ts: the DynamoDB adapter on dynalite): exactly-once claims, lease expiry and reclaim,
 * heartbeats, not-before (no spinning), bounded attempts, cancellation of a running job,
 * retirement and retention. Runners are fakes: what is tested is the protocol, not LanceDB.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { InternalError, InvalidInputError } from '../../lib/errors.js';
import { jobContext } from '../../lib/queue/context.js';
import { parseActions } from '../../lib/queue/alter.js';
import { alterJob, claimNext, complete, describeJob, enqueue, heartbeat } from '../../lib/queue/jobs.js';
import { startJobLoop } from '../../lib/jobs/loop.js';
import type { JobPolicy } from '../../lib/ports/job-record.js';
import { LeaseLostError } from '../../lib/queue/transitions.js';
import { runJobsOnce, type WorkerReport } from '../../lib/jobs/worker.js';
import type { JobRunner } from '../../lib/jobs/runner.js';
import { manualClock, type ManualClock } from '../support/clock.js';

export interface QueueUnderTest {
  /** Catalog services whose `jobs.queue` (absent: the registry's store) is the implementation. */
  readonly services: CatalogServices;
  /** Stores a live job record under `id` that cannot be parsed. */
  plantUnreadable(id: string): Promise<void>;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = () => undefined;

/** Short leases, fast heartbeats, quick retries: the protocol at test speed. */
const FAST: Partial<JobPolicy> = { leaseMs: 300, heartbeatMs: 50, backoffBaseMs: 200, backoffMaxMs: 2000, maxAttempts: 3 };

/** The same queue with other timings (the queue implementation is kept). */
function withPolicy(s: CatalogServices, policy: Partial<JobPolicy>): CatalogServices {
  return { ...s, jobs: { ...s.jobs, policy: { ...FAST, ...policy } } };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function runWorkQueueContract(name: string, make: () => Promise<QueueUnderTest>): void {
describe(`the job queue (${name})`, () => {
  let f: QueueUnderTest;
  /**
   * The catalog's clock (leases, not-before, retention) moves only when a test advances it, so
   * lease expiry and backoff are tested without sleeping against the wall clock. Heartbeats are
   * still driven by real timers; tests wait for their effect (a renewed lease), never a duration.
   */
  let clock: ManualClock;
  afterEach(() => f?.cleanup());

  const setup = async (policy: Partial<JobPolicy> = {}) => {
    f = await make();
    clock = manualClock();
    f = { ...f, services: { ...f.services, now: clock.now } };
    return withPolicy(f.services, policy);
  };
  /** The lease end on the job record, as DescribeTransaction shows it. */
  const leaseUntil = async (s: CatalogServices, id: string) => (await describeJob(jobContext(s), id)).properties['rask.lease_until'];

  it('N workers racing for M jobs run each job exactly once', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const M = 24;
    const ids = [];
    for (let i = 0; i < M; i++) ids.push((await enqueue(ctx, { type: 'count', params: { i } })).id);
    const runs = new Map<string, string[]>();
    const runner: JobRunner = async (job) => {
      runs.set(job.id, [...(runs.get(job.id) ?? []), job.lease!.owner]);
      await sleep(Math.random() * 15);
      return { i: String(job.params.i) };
    };
    const reports = await Promise.all(
      Array.from({ length: 6 }, (_, w) => runJobsOnce(s, { owner: `w${w}`, budgetMs: 30_000, runners: { count: runner }, log: quiet })),
    );
    for (const id of ids) expect(runs.get(id), id).toHaveLength(1);
    expect(reports.flatMap((r) => r.ran).map((r) => r.outcome)).toEqual(Array(M).fill('succeeded'));
    // Work was shared, not done by one worker while the others watched.
    expect(reports.filter((r) => r.ran.length > 0).length).toBeGreaterThan(1);
    for (const id of ids) {
      const view = await describeJob(ctx, id);
      expect(view.status).toBe('Succeeded');
      expect(view.properties['rask.attempts']).toBe('1');
      expect(view.properties['rask.worker']).toBe(runs.get(id)![0]);
    }
    // Finished jobs left the live set: the next claim lists nothing.
    expect((await ctx.queue.listLive({ limit: 1000 })).jobs).toEqual([]);
    expect((await ctx.queue.listDue(new Date(), { limit: 1000 })).jobs).toEqual([]);
    expect((await ctx.queue.listRetired({ limit: 1000 })).ids).toHaveLength(M);
  });

  it('a worker that stops heartbeating loses its job to another once the lease expires', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'count', params: {} });
    // Worker A claims and then goes silent (crashed, frozen): no heartbeat, no result.
    const a = (await claimNext(ctx, 'A', ['count'])).claim!;
    expect(a.job.id).toBe(job.id);
    // Before the lease ends nobody else may take it.
    expect((await claimNext(ctx, 'B', ['count'])).claim).toBeUndefined();
    clock.advance(299);
    expect((await claimNext(ctx, 'B', ['count'])).claim).toBeUndefined();
    clock.advance(51); // 350 ms after the claim: the 300 ms lease is over
    let ranBy = '';
    const report = await runJobsOnce(s, {
      owner: 'B',
      budgetMs: 5000,
      runners: { count: async (j) => ((ranBy = j.lease!.owner), {}) },
      log: quiet,
    });
    expect(ranBy).toBe('B');
    expect(report.ran).toEqual([{ id: job.id, project: s.project, type: 'count', outcome: 'succeeded' }]);
    // A wakes up: its heartbeat and its result are refused, and change nothing.
    await expect(heartbeat(ctx, a)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(complete(ctx, a, { from: 'A' })).rejects.toBeInstanceOf(LeaseLostError);
    const view = await describeJob(ctx, job.id);
    expect(view).toMatchObject({ status: 'Succeeded', properties: { 'rask.attempts': '2', 'rask.worker': 'B' } });
    expect(view.properties['rask.error']).toMatch(/worker A stopped renewing its lease/);
    expect(view.properties['rask.from']).toBeUndefined();
  });

  it('a stalled worker notices at its next heartbeat that its job was reclaimed, and reports nothing', async () => {
    const s = await setup();
    // A beats far less often than its lease lasts: the lease lapses while its runner is stuck.
    const sA = withPolicy(f.services, { heartbeatMs: 700 });
    const job = await enqueue(jobContext(s), { type: 'slow', params: {} });
    let aborted: unknown;
    const aRun = runJobsOnce(sA, {
      owner: 'A',
      budgetMs: 5000,
      log: quiet,
      runners: {
        slow: (_j, { signal }) =>
          new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              aborted = signal.reason;
              reject(new Error('stopped'));
            }),
          ),
      },
    });
    await until('A to hold the job', async () => ((await describeJob(jobContext(s), job.id)).status === 'Running' ? true : undefined));
    clock.advance(350); // A's lease lapses: its next beat (700 ms of real time away) comes too late
    const b = await runJobsOnce(s, { owner: 'B', budgetMs: 5000, log: quiet, runners: { slow: async () => ({ by: 'B' }) } });
    expect(b.ran.map((r) => r.outcome)).toEqual(['succeeded']);
    const a = await aRun;
    // B was done before A's next beat; had it still been running, A would read "reclaimed by B".
    expect(a.ran).toEqual([{ id: job.id, project: s.project, type: 'slow', outcome: 'lost', error: expect.stringMatching(/Succeeded now \(last held by B\)|reclaimed by B/) }]);
    expect(aborted).toBeInstanceOf(LeaseLostError);
    expect(await describeJob(jobContext(s), job.id)).toMatchObject({ status: 'Succeeded', properties: { 'rask.by': 'B', 'rask.attempts': '2' } });
  });

  it('heartbeats keep a long job, and its progress, with its worker', async () => {
    const s = await setup({ leaseMs: 800 });
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'long', params: {} });
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const run = runJobsOnce(s, {
      owner: 'A',
      budgetMs: 5000,
      log: quiet,
      runners: {
        long: async (_j, { progress }) => {
          progress({ progress: 'halfway' });
          await finished;
          return { rows: '42' };
        },
      },
    });
    await until('A to hold the job', async () => ((await describeJob(ctx, job.id)).properties['rask.worker'] === 'A' ? true : undefined));
    // Two and a half leases of catalog time pass in quarter-lease steps. After each step, A's
    // next heartbeat renews the lease past the new present; then another worker looks, and
    // never gets the job (without the heartbeats it would from the fifth step on).
    let seenProgress: string | undefined;
    const stolen: WorkerReport[] = [];
    for (let step = 0; step < 10; step++) {
      clock.advance(200);
      await until('a heartbeat to renew the lease', async () =>
        Date.parse((await leaseUntil(s, job.id))!) > clock.ms() + 600 ? true : undefined,
      );
      stolen.push(await runJobsOnce(s, { owner: 'B', budgetMs: 1000, log: quiet, runners: { long: async () => ({}) } }));
      const view = await describeJob(ctx, job.id);
      if (view.status === 'Running') seenProgress ??= view.properties['rask.progress'];
    }
    finish();
    await run;
    expect(stolen).toHaveLength(10);
    expect(stolen.flatMap((r) => r.ran)).toEqual([]);
    expect(seenProgress).toBe('halfway');
    expect(await describeJob(ctx, job.id)).toMatchObject({
      status: 'Succeeded',
      properties: { 'rask.attempts': '1', 'rask.worker': 'A', 'rask.rows': '42', 'rask.progress': 'halfway' },
    });
  });

  it('respects not-before: a failing job is retried only after its backoff, never spun on, and ends Failed', async () => {
    const s = await setup({ backoffBaseMs: 250 });
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'flaky', params: {} });
    const starts: number[] = [];
    let passes = 0;
    const loop = startJobLoop(s, {
      intervalMs: 5,
      owner: 'L',
      log: quiet,
      runners: {
        flaky: async () => {
          starts.push(clock.ms());
          throw new InternalError('disk on fire');
        },
      },
    });
    const wrapped = loop.runOnce;
    try {
      await until('the job to fail for good', async () => {
        passes++;
        await wrapped();
        clock.advance(25);
        return (await describeJob(ctx, job.id)).status === 'Failed' ? true : undefined;
      });
    } finally {
      await loop.stop();
    }
    // Three attempts, however many passes looked at the queue meanwhile.
    expect(starts).toHaveLength(3);
    // More passes than runs: the loop looked while the job waited, and left it alone.
    expect(passes).toBeGreaterThan(starts.length + 2);
    // Attempt 2 waited 250 ms ± 20 %, attempt 3 500 ms ± 20 % (catalog time, which moves 25 ms a pass).
    expect(starts[1] - starts[0]).toBeGreaterThanOrEqual(200);
    expect(starts[1] - starts[0]).toBeLessThanOrEqual(300 + 25);
    expect(starts[2] - starts[1]).toBeGreaterThanOrEqual(400);
    expect(starts[2] - starts[1]).toBeLessThanOrEqual(600 + 25);
    const view = await describeJob(ctx, job.id);
    expect(view.properties).toMatchObject({ 'rask.attempts': '3', 'rask.error': 'disk on fire', 'rask.error_code': '18' });
  });

  it('fails at once, without retrying, what retrying cannot fix', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'bad', params: {} });
    let calls = 0;
    const r = await runJobsOnce(s, {
      owner: 'A',
      budgetMs: 2000,
      log: quiet,
      runners: { bad: async () => ((calls += 1), Promise.reject(new InvalidInputError('no such distance'))) },
    });
    expect(r.ran).toEqual([{ id: job.id, project: s.project, type: 'bad', outcome: 'failed', error: 'no such distance', code: 13 }]);
    expect(calls).toBe(1);
    expect(await describeJob(ctx, job.id)).toMatchObject({ status: 'Failed', properties: { 'rask.error_code': '13', 'rask.attempts': '1' } });
  });

  it('hides the text of unexpected errors, which may carry paths or secrets', async () => {
    const s = await setup({ maxAttempts: 1 });
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'oops', params: {} });
    await runJobsOnce(s, { owner: 'A', budgetMs: 2000, log: quiet, runners: { oops: async () => Promise.reject(new Error('/secret/path key=abc')) } });
    const view = await describeJob(ctx, job.id);
    expect(view.status).toBe('Failed');
    expect(view.properties['rask.error']).toMatch(/internal error .* see the worker's log/);
    expect(JSON.stringify(view)).not.toContain('secret');
  });

  it('a job that kills its worker every time ends Failed after maxAttempts claims', async () => {
    const s = await setup({ leaseMs: 60 });
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'crash', params: {} });
    for (let n = 1; n <= 3; n++) {
      const c = await until(`claim ${n}`, async () => (await claimNext(ctx, `w${n}`, ['crash'])).claim);
      expect(c.job.attempts).toBe(n);
      // ... and the worker dies without a word; its 60 ms lease runs out.
      clock.advance(61);
    }
    expect((await claimNext(ctx, 'w4', ['crash'])).claim).toBeUndefined();
    const view = await describeJob(ctx, job.id);
    expect(view.status).toBe('Failed');
    expect(view.properties['rask.error']).toMatch(/all 3 attempts are used/);
    expect(view.properties['rask.error_code']).toBe('17');
  });

  it('AlterTransaction cancels a running job: the worker stops at its next heartbeat and reports nothing', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'loop', params: {} });
    let steps = 0;
    let stoppedBecause: unknown;
    const run = runJobsOnce(s, {
      owner: 'A',
      budgetMs: 5000,
      log: quiet,
      runners: {
        loop: async (_j, { signal }) => {
          while (!signal.aborted) {
            steps++;
            await sleep(5);
          }
          stoppedBecause = signal.reason;
          return { finished: 'yes' };
        },
      },
    });
    await until('the job to run', async () => (steps > 0 ? true : undefined));
    // A property set meanwhile changes the record's etag: not a lost lease.
    await alterJob(ctx, job.id, parseActions([{ setPropertyAction: { key: 'owner', value: 'team-a' } }]));
    // A's next heartbeat after the change renews the lease (it would have stopped the job instead).
    clock.advance(100);
    await until('a heartbeat after the change', async () => (Date.parse((await leaseUntil(s, job.id))!) > clock.ms() + 250 ? true : undefined));
    expect((await describeJob(ctx, job.id)).status).toBe('Running');
    const canceled = await alterJob(ctx, job.id, parseActions([{ setStatusAction: { status: 'Canceled' } }]));
    expect(canceled.status).toBe('Canceled');
    const report = await run;
    expect(report.ran).toEqual([{ id: job.id, project: s.project, type: 'loop', outcome: 'lost', error: 'the job is Canceled now (last held by A)' }]);
    expect(stoppedBecause).toBeInstanceOf(LeaseLostError);
    const view = await describeJob(ctx, job.id);
    expect(view).toMatchObject({ status: 'Canceled', properties: { owner: 'team-a' } });
    expect(view.properties['rask.finished']).toBeUndefined();
    // Canceled is final: nothing claims it again.
    expect((await claimNext(ctx, 'B', ['loop'])).claim).toBeUndefined();
  });

  it('concurrent AlterTransactions on a running job all land; the worker keeps its lease', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'busy', params: {} });
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const run = runJobsOnce(s, { owner: 'A', budgetMs: 5000, log: quiet, runners: { busy: async () => (await finished, { ok: '1' }) } });
    await until('the job to run', async () => ((await describeJob(ctx, job.id)).status === 'Running' ? true : undefined));
    await Promise.all(Array.from({ length: 8 }, (_, i) => alterJob(ctx, job.id, parseActions([{ setPropertyAction: { key: `k${i}`, value: String(i) } }]))));
    // A beats at least once after all the changes, and keeps its lease through them.
    clock.advance(100);
    await until('a heartbeat after the changes', async () => (Date.parse((await leaseUntil(s, job.id))!) > clock.ms() + 250 ? true : undefined));
    finish();
    expect((await run).ran.map((r) => r.outcome)).toEqual(['succeeded']);
    const view = await describeJob(ctx, job.id);
    expect(view.status).toBe('Succeeded');
    for (let i = 0; i < 8; i++) expect(view.properties[`k${i}`]).toBe(String(i));
    // After retirement the record is still altered in place.
    expect((await alterJob(ctx, job.id, parseActions([{ unsetPropertyAction: { key: 'k0' } }]))).properties.k0).toBeUndefined();
  });

  it('stopping the local loop gives an unfinished job back to the queue without spending an attempt', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const job = await enqueue(ctx, { type: 'wait', params: {} });
    let started = false;
    const loop = startJobLoop(s, {
      intervalMs: 5,
      owner: 'L',
      log: quiet,
      runners: {
        wait: (_j, { signal }) =>
          new Promise((_r, reject) => {
            started = true;
            signal.addEventListener('abort', () => reject(new Error('shutting down')));
          }),
      },
    });
    await until('the job to start', async () => (started ? true : undefined));
    await loop.stop();
    expect(await describeJob(ctx, job.id)).toMatchObject({ status: 'Queued', properties: { 'rask.attempts': '0' } });
  });

  it('prunes finished jobs after their retention, and answers 10 for them afterwards', async () => {
    const s = await setup({ retentionMs: 150 });
    const ctx = jobContext(s);
    const old = await enqueue(ctx, { type: 'count', params: {} });
    await runJobsOnce(s, { owner: 'A', budgetMs: 2000, log: quiet, runners: { count: async () => ({}) } });
    clock.advance(200);
    const young = await enqueue(ctx, { type: 'count', params: {} });
    const r = await runJobsOnce(s, { owner: 'A', budgetMs: 2000, log: quiet, runners: { count: async () => ({}) } });
    expect(r.pruned).toBe(1);
    await expect(describeJob(ctx, old.id)).rejects.toMatchObject({ code: 10 });
    expect((await describeJob(ctx, young.id)).status).toBe('Succeeded');
  });

  it('skips and reports an unreadable record without stopping the other jobs', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    const bad = 'f'.repeat(32);
    await f.plantUnreadable(bad);
    const job = await enqueue(ctx, { type: 'count', params: {} });
    const r = await runJobsOnce(s, { owner: 'A', budgetMs: 2000, log: quiet, runners: { count: async () => ({}) } });
    expect(r.unreadable).toEqual([`${s.project}/${bad}`]);
    expect(r.ran.map((x) => x.id)).toEqual([job.id]);
  });

  it('answers 10 for ids that are not jobs, whatever their shape', async () => {
    const s = await setup();
    const ctx = jobContext(s);
    for (const id of ['0'.repeat(32), 'nope', '', '../../p/default/w/default']) {
      await expect(describeJob(ctx, id)).rejects.toMatchObject({ code: 10 });
      await expect(alterJob(ctx, id, parseActions([{ setStatusAction: { status: 'Canceled' } }]))).rejects.toMatchObject({ code: 10 });
    }
  });
});
}
