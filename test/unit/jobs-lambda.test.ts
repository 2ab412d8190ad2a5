/**
 * The scheduled jobs function's handler (lib/jobs/lambda.ts): it runs ready jobs, and stops
 * starting them once less than `reserveMs` of the invocation is left.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { jobContext } from '../../lib/queue/context.js';
import { describeJob, enqueue } from '../../lib/queue/jobs.js';
import { keys } from '../../lib/registry/keys.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { createProject, deleteProject } from '../../lib/catalog/control/projects.js';
import { RegistryWorkQueue } from '../../lib/queue/store.js';
import { Registry } from '../../lib/registry/registry.js';
import { jobsHandler } from '../../lib/jobs/lambda.js';
import { manualClock, type ManualClock } from '../support/clock.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import type { JobPolicy } from '../../lib/ports/job-record.js';
import { ErrorCode } from '../../lib/errors.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

/** A Lambda context whose deadline is `timeoutMs` after the clock's present. */
function lambdaContext(timeoutMs: number, clock: ManualClock) {
  const deadline = clock.ms() + timeoutMs;
  return { awsRequestId: 'req-1', getRemainingTimeInMillis: () => deadline - clock.ms() };
}

/**
 * A runner that outlives its invocation: it never returns while the test runs (the Lambda would
 * kill it at its timeout). `release()` lets every hung run end at cleanup; by then its lease is
 * gone, so it reports nothing.
 */
function hangingRunner() {
  const waiting: (() => void)[] = [];
  let started = 0;
  return {
    runner: async () => {
      started++;
      await new Promise<void>((resolve) => waiting.push(resolve));
      return {};
    },
    started: () => started,
    release: () => {
      for (const r of waiting.splice(0)) r();
    },
  };
}

/** Services on a manual clock with a policy where no heartbeat fires during a test (it is real time). */
function onClock(services: CatalogServices, clock: ManualClock, policy: Partial<JobPolicy> = {}): CatalogServices {
  return { ...services, now: clock.now, jobs: { ...services.jobs, policy: { leaseMs: 120_000, heartbeatMs: 3_600_000, ...policy } } };
}

describe('jobs Lambda handler', () => {
  let f: ServicesFixture;
  const hung: ReturnType<typeof hangingRunner>[] = [];
  afterEach(async () => {
    for (const h of hung.splice(0)) h.release();
    await f?.cleanup();
  });

  it('an out-of-attempts job ends Failed with the timeout code, naming tier, limit and remedy, and its invocation reports failed: 1', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    const services = onClock(f.services, clock, { maxAttempts: 2 });
    const job = await enqueue(jobContext(services), { type: 't', params: {} });
    const h = hangingRunner();
    hung.push(h);
    const logs: Record<string, unknown>[] = [];
    const handler = jobsHandler({ services: async () => services, reserveMs: 0, log: (e) => logs.push(e), clock: clock.ms, runners: { t: h.runner } });
    // Two invocations each claim the job and are killed with it (their promises never settle).
    for (let n = 1; n <= 2; n++) {
      void handler({}, { awsRequestId: `killed-${n}`, getRemainingTimeInMillis: () => 900_000 });
      await expect.poll(() => h.started()).toBe(n);
      clock.advance(120_001);
    }
    const result = await handler({}, { awsRequestId: 'req-3', getRemainingTimeInMillis: () => 900_000 });
    expect(result).toMatchObject({ ran: 1, outcomes: { failed: 1 } });
    const view = await describeJob(jobContext(services), job.id);
    expect(view.status).toBe('Failed');
    expect(view.properties['rask.error_code']).toBe(String(ErrorCode.ServiceUnavailable));
    expect(view.properties['rask.error_kind']).toBe('timeout');
    expect(view.properties['rask.error']).toMatch(/function-tier worker lambda:killed-2 stopped renewing its lease/);
    expect(view.properties['rask.error']).toMatch(/function tier's limit of 15 min; all 2 attempts are used\. Remedy: run it on the task tier/);
    // The reclaim and the failure are both in the log, under the job's id.
    const abandoned = logs.filter((l) => l.message === 'job abandoned');
    expect(abandoned.map((l) => [l.id, l.owner, l.outcome])).toEqual([
      [job.id, 'lambda:killed-1', 'reclaimed'],
      [job.id, 'lambda:killed-2', 'failed'],
    ]);
    expect(logs.find((l) => l.message === 'job failed')).toMatchObject({ id: job.id, code: ErrorCode.ServiceUnavailable });
  });

  it('reports each outcome as soon as the job ends, before the next job starts (the entry point flushes metrics there)', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    const services = onClock(f.services, clock);
    const ctx = jobContext(services);
    const h = hangingRunner();
    hung.push(h);
    // Ids sort by creation time: one millisecond apart, they run in this order.
    for (const type of ['ok', 'bad', 'hang']) {
      await enqueue(ctx, { type, params: {} });
      clock.advance(1);
    }
    const flushed: string[] = [];
    const handler = jobsHandler({
      services: async () => services,
      reserveMs: 0,
      log: () => undefined,
      clock: clock.ms,
      onOutcome: (e) => flushed.push(`${e.type}:${e.outcome}`),
      runners: {
        ok: async () => ({}),
        bad: async () => {
          throw new Error('boom');
        },
        hang: h.runner,
      },
    });
    // The invocation never ends (its last job outlives it), yet the first two outcomes are out.
    void handler({}, { awsRequestId: 'req-k', getRemainingTimeInMillis: () => 900_000 });
    await expect.poll(() => h.started()).toBe(1);
    expect(flushed).toEqual(['ok:succeeded', 'bad:retrying']);
  });

  it('runs ready jobs under the invocation id, one after the other, and stops starting them at the reserve', async () => {
    f = await servicesOver('memory');
    const ctx = jobContext(f.services);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue(ctx, { type: 't', params: {} })).id);
    // Each job takes 300 ms on a clock that moves only when a job runs.
    const clock = manualClock();
    const handler = jobsHandler({
      services: async () => f.services,
      reserveMs: 1000,
      log: () => undefined,
      clock: clock.ms,
      runners: { t: async (job) => (clock.advance(300), { by: job.lease!.owner }) },
    });
    // 1.4 s to run, 1 s reserved: 400 ms to start jobs in. Jobs start at 0 and 300; at 600 the budget is spent.
    const result = await handler({}, lambdaContext(1400, clock));
    expect(result).toMatchObject({ ran: 2, outcomes: { succeeded: 2 }, unreadable: 0 });
    const views = await Promise.all(ids.map((id) => describeJob(ctx, id)));
    expect(views.map((v) => v.status).sort()).toEqual(['Queued', 'Succeeded', 'Succeeded']);
    for (const v of views.filter((x) => x.status === 'Succeeded')) expect(v.properties['rask.by']).toBe('lambda:req-1');
  });

  it('starts nothing when less than the reserve is left', async () => {
    f = await servicesOver('memory');
    const job = await enqueue(jobContext(f.services), { type: 't', params: {} });
    let ran = false;
    const handler = jobsHandler({ services: async () => f.services, reserveMs: 60_000, log: () => undefined, runners: { t: async () => ((ran = true), {}) } });
    expect(await handler({}, lambdaContext(30_000, manualClock()))).toMatchObject({ ran: 0 });
    expect(ran).toBe(false);
    expect((await describeJob(jobContext(f.services), job.id)).status).toBe('Queued');
  });

  it('runs the jobs of every project in the registry, each visible only through its own project', async () => {
    f = await servicesOver('memory');
    for (const name of ['acme', 'zeta']) await f.services.registry.create(keys.project(name), { kind: 'project', name });
    const scoped = (project: string) => jobContext({ ...f.services, project });
    const queued = {
      home: (await enqueue(scoped(f.services.project), { type: 't', params: {} })).id,
      acme: (await enqueue(scoped('acme'), { type: 't', params: {} })).id,
      zeta: (await enqueue(scoped('zeta'), { type: 't', params: {} })).id,
    };
    const ranIn: string[] = [];
    const handler = jobsHandler({
      services: async () => f.services,
      reserveMs: 0,
      log: () => undefined,
      runners: { t: async (job) => (ranIn.push(job.id), {}) },
    });
    const result = await handler({}, { awsRequestId: 'req-2', getRemainingTimeInMillis: () => 60_000 });
    expect(result).toMatchObject({ ran: 3, outcomes: { succeeded: 3 }, problems: 0 });
    expect(ranIn.sort()).toEqual(Object.values(queued).sort());
    expect((await describeJob(scoped('acme'), queued.acme)).status).toBe('Succeeded');
    // No existence oracle: another project's job is as unknown as one that never existed.
    await expect(describeJob(scoped(f.services.project), queued.acme)).rejects.toThrow(/does not exist/);
    await expect(describeJob(scoped('zeta'), queued.acme)).rejects.toThrow(/does not exist/);
    // A second pass finds nothing left to run in any project.
    expect(await handler({}, { awsRequestId: 'req-3', getRemainingTimeInMillis: () => 60_000 })).toMatchObject({ ran: 0 });
  });

  it('refuses to delete a project whose own queue holds a job, wherever that queue lives', async () => {
    f = await servicesOver('memory');
    // A queue outside the registry (as DynamoDB is): the refusal must come from the project's queue, not a registry listing.
    const queues = new Map<string, RegistryWorkQueue>();
    const elsewhere = new Registry(new MemoryObjectStore());
    const services = { ...f.services, jobs: { queueFor: (p: string) => queues.get(p) ?? queues.set(p, new RegistryWorkQueue(elsewhere, p)).get(p)! } };
    await createProject(services, undefined, { name: 'busy' });
    await enqueue(jobContext({ ...services, project: 'busy' }), { type: 't', params: {} });
    await expect(deleteProject(services, 'busy')).rejects.toThrow(/queued or running jobs/);
  });
});
