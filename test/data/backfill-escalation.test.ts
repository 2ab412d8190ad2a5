/**
 * A backfill that outlives the function resumes on the task tier from the fragments it had
 * written (#34 item 5, docs/jobs.md "Tiers"): the function attempt commits one fragment's slice
 * and is then killed with its invocation (it never returns; its lease lapses on the manual
 * clock); the next pass escalates the job, and the task's run, the real backfill runner in the
 * container's worker (lib/app/job-task.ts), computes only the two fragments still null.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { runJobTask } from '../../lib/app/job-task.js';
import { queueBackfill, runBackfill } from '../../lib/catalog/data/backfill.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { resolveTable } from '../../lib/catalog/protocols/lookup.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { jobsHandler } from '../../lib/jobs/lambda.js';
import { backfillRunner } from '../../lib/jobs/runners/backfill.js';
import type { TaskRunner } from '../../lib/ports/task-runner.js';
import { jobContext } from '../../lib/queue/context.js';
import { describeJob } from '../../lib/queue/jobs.js';
import { DEFAULT_TIER_LIMITS } from '../../lib/queue/tiers.js';
import { manualClock } from '../support/clock.js';
import { type ServicesFixture, servicesOver } from '../support/services.js';
import { threeFragmentTable } from './backfill-fixture.js';

let f: ServicesFixture;
const quiet = () => undefined;
const hung: (() => void)[] = [];
const pending: Promise<unknown>[] = [];

beforeAll(async () => {
  f = await servicesOver('fs');
});
afterAll(async () => {
  // The killed invocation ends now: it finds its lease gone and writes nothing; wait for it before deleting the store.
  for (const r of hung.splice(0)) r();
  await Promise.allSettled(pending);
  await f?.cleanup();
});

it('a backfill killed on the function after one fragment is escalated and the task computes only the rest', async () => {
  const clock = manualClock();
  const runs: Promise<unknown>[] = [];
  let svc!: CatalogServices;
  const runner: TaskRunner = {
    kind: 'test',
    start: async (req) => {
      runs.push(runJobTask(svc, { jobId: req.jobId, project: req.project, owner: 'task:t1', limitMs: 3_600_000, runners: { backfill: backfillRunner }, log: quiet }));
      return 't1';
    },
    describe: async () => ({ status: 'stopped', stopReason: 'exit code 0' }),
    stop: async () => undefined,
  };
  svc = {
    ...f.services,
    data: new LanceDataEngine(),
    now: clock.now,
    jobs: { tasks: { runner, concurrency: 2, graceMs: 600_000, limits: DEFAULT_TIER_LIMITS }, policy: { leaseMs: 120_000, heartbeatMs: 3_600_000 } },
  };
  await createNamespace(svc, { id: ['esc'], mode: 'create', properties: {} });
  const id = ['esc', 'three_fragments'];
  const t = await threeFragmentTable(svc, id);
  const engine = svc.data!;
  const { job_id } = await queueBackfill(svc, t, { column: 'twice' });

  // The function's attempt: one slice committed, then the invocation is killed (the runner never returns).
  let sliced = 0;
  const killedAfterOneSlice = async () => {
    const stop = new Error('killed');
    await runBackfill(svc, await resolveTable(svc, id), { column: 'twice' }, { onSlice: () => { sliced++; throw stop; } }).catch(() => undefined);
    await new Promise<void>((resolve) => hung.push(resolve));
    return {};
  };
  const handler = jobsHandler({ services: async () => svc, reserveMs: 0, log: quiet, clock: clock.ms, runners: { backfill: killedAfterOneSlice } });
  pending.push(handler({}, { awsRequestId: 'killed', getRemainingTimeInMillis: () => 900_000 }));
  for (let i = 0; i < 200 && sliced === 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(sliced).toBe(1);
  expect(await engine.countRows(t.location, { predicate: 'twice IS NULL' })).toBe(200);

  clock.advance(120_001);
  await handler({}, { awsRequestId: 'next', getRemainingTimeInMillis: () => 900_000 });
  await Promise.all(runs);
  const v = await describeJob(jobContext(svc), job_id);
  expect(v.status, JSON.stringify(v.properties)).toBe('Succeeded');
  expect(v.properties).toMatchObject({ 'rask.tier': 'task', 'rask.attempts': '2', 'rask.write_path': 'column-only', 'rask.slices': '2', 'rask.updated_rows': '200' });
  expect(await engine.countRows(t.location, { predicate: 'twice = id * 2' })).toBe(300);
}, 120_000);
