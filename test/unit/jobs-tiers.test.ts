/**
 * The task tier (docs/jobs.md, "Tiers", "Routing", "Dispatch"; #34 items 2–3): dispatch with
 * the official ECS client mocked (aws-sdk-client-mock), and routing on a manual clock with an
 * in-process task runner that runs the container's worker (lib/app/job-task.ts).
 */
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { EcsTaskRunner } from '../../lib/adapters/aws/ecs-task-runner.js';
import { runJobTask } from '../../lib/app/job-task.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { jobsHandler } from '../../lib/jobs/lambda.js';
import type { JobRunners } from '../../lib/jobs/runner.js';
import { runJobsOnce } from '../../lib/jobs/worker.js';
import { queueTableJob } from '../../lib/maintenance/fan-out.js';
import type { TableUnit } from '../../lib/maintenance/walker.js';
import type { TaskRunner } from '../../lib/ports/task-runner.js';
import type { WorkQueue } from '../../lib/ports/work-queue.js';
import { dispatchTasks } from '../../lib/queue/dispatch.js';
import { alterJob, describeJob, enqueue } from '../../lib/queue/jobs.js';
import { parseActions } from '../../lib/queue/alter.js';
import { jobContext, type TaskTier } from '../../lib/queue/context.js';
import { DEFAULT_TIER_LIMITS, routeByEstimate, tierLimits } from '../../lib/queue/tiers.js';
import { manualClock, type ManualClock } from '../support/clock.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

const ecs = mockClient(ECSClient);
const ecsRunner = () =>
  new EcsTaskRunner(new ECSClient({ region: 'eu-west-1' }), { cluster: 'c', taskDefinition: 'td', container: 'worker', subnets: ['s'], securityGroups: ['g'], assignPublicIp: true });
const quiet = () => undefined;
const GRACE = 10 * 60_000;

function withTier(services: CatalogServices, clock: ManualClock, runner: TaskRunner, concurrency = 100): CatalogServices {
  const tasks: TaskTier = { runner, concurrency, graceMs: GRACE, limits: DEFAULT_TIER_LIMITS };
  return { ...services, now: clock.now, jobs: { ...services.jobs, tasks, policy: { leaseMs: 120_000, heartbeatMs: 3_600_000 } } };
}

const taskJob = { type: 't', params: {}, route: { tier: 'task' as const, reason: 'test' } };

describe('dispatch (ECS mocked)', () => {
  let f: ServicesFixture;
  afterEach(async () => {
    ecs.reset();
    await f?.cleanup();
  });

  it('4 overlapping passes over 10 task-tier jobs make exactly 10 RunTask calls, and the function claims none of them', async () => {
    f = await servicesOver('memory', { jitterTurns: 4 });
    const clock = manualClock();
    let n = 0;
    ecs.on(RunTaskCommand).callsFake(async () => ({ tasks: [{ taskArn: `arn:task/${++n}` }] }));
    const s = withTier(f.services, clock, ecsRunner());
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await enqueue(jobContext(s), taskJob)).id);
    let ranHere = 0;
    const reports = await Promise.all(
      Array.from({ length: 4 }, (_, w) => runJobsOnce(s, { owner: `lambda:${w}`, tier: 'function', budgetMs: 60_000, log: quiet, clock: clock.ms, runners: { t: async () => (ranHere++, {}) } })),
    );
    const tokens = ecs.commandCalls(RunTaskCommand).map((c) => c.args[0].input.clientToken);
    expect(tokens.sort()).toEqual(ids.map((id) => `${id}-1`).sort());
    expect(ranHere).toBe(0);
    expect(reports.flatMap((r) => r.ran)).toEqual([]);
    for (const id of ids) {
      const v = await describeJob(jobContext(s), id);
      expect(v.status).toBe('Queued');
      expect(v.properties).toMatchObject({ 'rask.tier': 'task', 'rask.tier_reason': 'test', 'rask.attempts': '0', 'rask.dispatches': '1' });
      expect(v.properties['rask.task']).toMatch(/^ecs:arn:task\/\d+$/);
    }
  });

  it('at most rask:jobsTaskConcurrency tasks are started', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: 'arn:task/x' }] });
    const s = withTier(f.services, clock, ecsRunner(), 3);
    for (let i = 0; i < 5; i++) await enqueue(jobContext(s), taskJob);
    await runJobsOnce(s, { owner: 'lambda:a', tier: 'function', budgetMs: 1000, log: quiet, clock: clock.ms, runners: { t: async () => ({}) } });
    await runJobsOnce(s, { owner: 'lambda:b', tier: 'function', budgetMs: 1000, log: quiet, clock: clock.ms, runners: { t: async () => ({}) } });
    expect(ecs.commandCalls(RunTaskCommand)).toHaveLength(3);
  });

  it('the cap holds across overlapping passes: 4 passes at once over 10 jobs start at most rask:jobsTaskConcurrency tasks (real interleaving)', async () => {
    f = await servicesOver('memory', { jitterTurns: 4 });
    const clock = manualClock();
    let n = 0;
    ecs.on(RunTaskCommand).callsFake(async () => ({ tasks: [{ taskArn: `arn:task/${++n}` }] }));
    const s = withTier(f.services, clock, ecsRunner(), 3);
    for (let i = 0; i < 10; i++) await enqueue(jobContext(s), taskJob);
    const pass = (w: string) => runJobsOnce(s, { owner: `lambda:${w}`, tier: 'function', budgetMs: 60_000, log: quiet, clock: clock.ms, runners: {} });
    for (let round = 0; round < 3; round++) {
      await Promise.all(['a', 'b', 'c', 'd'].map((w) => pass(`${w}${round}`)));
      expect(ecs.commandCalls(RunTaskCommand).length, `after round ${round}`).toBeLessThanOrEqual(3);
    }
    // A pass that backed off left its job Queued and unstamped: a lone pass fills the cap exactly.
    await pass('lone');
    expect(ecs.commandCalls(RunTaskCommand)).toHaveLength(3);
    const stamped = [];
    for (const id of (await jobContext(s).queue.listLive({ limit: 100 })).jobs) if (id.value.dispatch) stamped.push(id.value.id);
    expect(stamped).toHaveLength(3);
  });

  it('a throttled RunTask spends no attempt: the stamp is taken back and a later pass starts the task', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    ecs.on(RunTaskCommand).rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })).resolves({ tasks: [{ taskArn: 'arn:task/1' }] });
    const s = withTier(f.services, clock, ecsRunner());
    const job = await enqueue(jobContext(s), taskJob);
    const pass = () => runJobsOnce(s, { owner: 'lambda:p', tier: 'function', budgetMs: 1000, log: quiet, clock: clock.ms, runners: {} });
    await pass();
    let v = await describeJob(jobContext(s), job.id);
    expect(v.properties).toMatchObject({ 'rask.attempts': '0', 'rask.dispatches': '1' });
    expect(v.properties['rask.task']).toBeUndefined();
    expect(v.properties['rask.error']).toMatch(/ThrottlingException: Rate exceeded\); no attempt was spent/);
    // Not before the short wait…
    await pass();
    expect(ecs.commandCalls(RunTaskCommand)).toHaveLength(1);
    clock.advance(30_001);
    await pass();
    expect(ecs.commandCalls(RunTaskCommand)).toHaveLength(2);
    v = await describeJob(jobContext(s), job.id);
    // A new token for the second call: a refused one is never reused.
    expect(ecs.commandCalls(RunTaskCommand).map((c) => c.args[0].input.clientToken)).toEqual([`${job.id}-1`, `${job.id}-2`]);
    expect(v.properties).toMatchObject({ 'rask.attempts': '0', 'rask.dispatches': '2', 'rask.task': 'ecs:arn:task/1' });
  });

  it("a task lost before its claim is dispatched again after the grace period, with its stop reason in rask.error", async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    ecs.on(RunTaskCommand).resolvesOnce({ tasks: [{ taskArn: 'arn:task/1' }] }).resolves({ tasks: [{ taskArn: 'arn:task/2' }] });
    ecs.on(DescribeTasksCommand).resolves({ tasks: [{ lastStatus: 'STOPPED', stopCode: 'TaskFailedToStart', stoppedReason: 'CannotPullContainerError: pull access denied' }] });
    const s = withTier(f.services, clock, ecsRunner());
    const job = await enqueue(jobContext(s), taskJob);
    const pass = () => runJobsOnce(s, { owner: 'lambda:p', tier: 'function', budgetMs: 1000, log: quiet, clock: clock.ms, runners: {} });
    await pass();
    clock.advance(GRACE - 1000);
    await pass();
    expect(ecs.commandCalls(RunTaskCommand)).toHaveLength(1);
    clock.advance(1001);
    await pass();
    expect(ecs.commandCalls(RunTaskCommand).map((c) => c.args[0].input.clientToken)).toEqual([`${job.id}-1`, `${job.id}-2`]);
    expect(ecs.commandCalls(DescribeTasksCommand)[0]!.args[0].input.tasks).toEqual(['arn:task/1']);
    const v = await describeJob(jobContext(s), job.id);
    expect(v.properties).toMatchObject({ 'rask.attempts': '0', 'rask.dispatches': '2', 'rask.task': 'ecs:arn:task/2', 'rask.error_kind': 'task_stopped' });
    expect(v.properties['rask.error']).toMatch(/never claimed it: TaskFailedToStart: CannotPullContainerError: pull access denied; dispatched again/);
  });

  it('a pass lists the queues twice however many tasks it starts: once to choose, once to recount its stamps (#34 review)', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    let n = 0;
    ecs.on(RunTaskCommand).callsFake(async () => ({ tasks: [{ taskArn: `arn:task/${++n}` }] }));
    const base = withTier(f.services, clock, ecsRunner(), 50);
    // One listLive call is one page of the queue: a DynamoDB Query on AWS (lib/adapters/aws/dynamo-work-queue.ts).
    const pages: string[] = [];
    const counted = (queue: WorkQueue): WorkQueue =>
      new Proxy(queue, { get: (t, p, r) => (p === 'listLive' ? (o: Parameters<WorkQueue['listLive']>[0]) => (pages.push(String(o.startAfter)), t.listLive(o)) : Reflect.get(t, p, r)) });
    const plain = jobContext(base).queue;
    const s: CatalogServices = { ...base, jobs: { ...base.jobs, queueFor: () => counted(plain) } };
    for (let i = 0; i < 250; i++) await enqueue(jobContext(s), taskJob);
    pages.length = 0;
    const report = await dispatchTasks([{ project: 'default', ctx: jobContext(s) }], jobContext(s).tasks!, 'lambda:count', quiet);
    expect(report.started).toHaveLength(50);
    expect(ecs.commandCalls(RunTaskCommand)).toHaveLength(50);
    // 250 live jobs are 3 pages of 100: 3 to choose and 3 to recount (it was 3 + 3 per stamp, 153).
    expect(pages).toHaveLength(6);
  });

  it('a cancel stops the task', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: 'arn:task/9' }] });
    ecs.on(StopTaskCommand).resolves({});
    const s = withTier(f.services, clock, ecsRunner());
    const job = await enqueue(jobContext(s), taskJob);
    await runJobsOnce(s, { owner: 'lambda:p', tier: 'function', budgetMs: 1000, log: quiet, clock: clock.ms, runners: {} });
    await alterJob(jobContext(s), job.id, parseActions([{ setStatusAction: { status: 'Canceled' } }]));
    expect(ecs.commandCalls(StopTaskCommand).map((c) => c.args[0].input.task)).toEqual(['arn:task/9']);
  });
});

/**
 * A task runner that runs the container's worker in this process (lib/app/job-task.ts) with
 * the given runners: what a Fargate task does, on the test's clock.
 */
function inProcessTasks(services: () => CatalogServices, runners: JobRunners) {
  const runs: Promise<unknown>[] = [];
  let n = 0;
  const runner: TaskRunner = {
    kind: 'test',
    start: async (req) => {
      const id = `t${++n}`;
      runs.push(runJobTask(services(), { jobId: req.jobId, project: req.project, owner: `task:${id}`, limitMs: 3_600_000, runners, log: quiet }));
      return id;
    },
    describe: async () => ({ status: 'stopped', stopReason: 'exit code 0' }),
    stop: async () => undefined,
  };
  return { runner, settled: () => Promise.all(runs), started: () => n };
}

function hanging() {
  const waiting: (() => void)[] = [];
  const leases: string[] = [];
  return {
    runner: async (job: { lease?: { tier?: string } }) => {
      leases.push(job.lease?.tier ?? '?');
      await new Promise<void>((resolve) => waiting.push(resolve));
      return {};
    },
    runs: () => leases.length,
    release: () => {
      for (const r of waiting.splice(0)) r();
    },
  };
}

describe('routing (manual clock)', () => {
  let f: ServicesFixture;
  let h: ReturnType<typeof hanging> | undefined;
  afterEach(async () => {
    h?.release();
    await f?.cleanup();
  });

  it('a runner that outlives its invocation is escalated after one abandoned attempt and succeeds with attempts ≤ 2', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    h = hanging();
    let s!: CatalogServices;
    const tasks = inProcessTasks(() => s, { t: async (job) => ({ ran_on: job.lease!.tier! }) });
    s = withTier(f.services, clock, tasks.runner);
    const job = await enqueue(jobContext(s), { type: 't', params: {} });
    expect((await describeJob(jobContext(s), job.id)).properties['rask.tier']).toBe('function');
    const logs: Record<string, unknown>[] = [];
    const handler = jobsHandler({ services: async () => s, reserveMs: 0, log: (e) => logs.push(e), clock: clock.ms, runners: { t: h.runner } });
    void handler({}, { awsRequestId: 'killed', getRemainingTimeInMillis: () => 900_000 });
    await expect.poll(() => h!.runs()).toBe(1);
    clock.advance(120_001);
    const result = await handler({}, { awsRequestId: 'next', getRemainingTimeInMillis: () => 900_000 });
    // The function ran nothing more: it escalated the job and started its task.
    expect(result.ran).toBe(0);
    expect(h.runs()).toBe(1);
    await tasks.settled();
    const v = await describeJob(jobContext(s), job.id);
    expect(v.status).toBe('Succeeded');
    expect(Number(v.properties['rask.attempts'])).toBeLessThanOrEqual(2);
    expect(v.properties).toMatchObject({ 'rask.tier': 'task', 'rask.ran_on': 'task', 'rask.error_code': '17' });
    expect(v.properties['rask.tier_reason']).toMatch(/^escalated: attempt 1 on the function tier stopped renewing its lease \(worker lambda:killed\)/);
    expect(logs.find((l) => l.message === 'job abandoned')).toMatchObject({ id: job.id, outcome: 'escalated' });
  });

  it('5 hourly passes over a table too big for the function cost at most 1 function attempt', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    h = hanging();
    let s!: CatalogServices;
    const tasks = inProcessTasks(() => s, { maintenance_sweep: async () => ({ swept: 'yes' }) });
    s = withTier(f.services, clock, tasks.runner);
    // The fan-out needs only the table's identity from the walk.
    const unit = { project: s.project, id: ['big'], record: { id: ['big'], uid: 'uid-big' }, services: s } as unknown as TableUnit;
    const handler = jobsHandler({ services: async () => s, reserveMs: 0, log: quiet, clock: clock.ms, runners: { maintenance_sweep: h.runner } });
    const txns: string[] = [];
    for (let hour = 0; hour < 5; hour++) {
      const queued = await queueTableJob(unit, 'sweep', {});
      expect(queued.job).toBe('queued');
      txns.push(queued.transaction_id);
      // The schedule's ticks within the hour: every few minutes, the lease lapses in between.
      for (let tick = 0; tick < 4; tick++) {
        void handler({}, { awsRequestId: `h${hour}-t${tick}`, getRemainingTimeInMillis: () => 900_000 });
        await new Promise((r) => setTimeout(r, 20));
        clock.advance(121_000);
      }
      await tasks.settled();
      expect((await describeJob(jobContext(s), queued.transaction_id)).status).toBe('Succeeded');
      clock.advance(3_600_000);
    }
    expect(h.runs()).toBeLessThanOrEqual(1);
    const later = await Promise.all(txns.slice(1).map((id) => describeJob(jobContext(s), id)));
    for (const v of later) {
      expect(v.properties['rask.tier']).toBe('task');
      expect(v.properties['rask.tier_reason']).toMatch(/^table on the task tier since job/);
      expect(v.properties['rask.attempts']).toBe('1');
    }
  });

  it('routes by estimate at enqueue: above the limit the job is on the task tier, and without a task tier it says so', async () => {
    f = await servicesOver('memory');
    const clock = manualClock();
    const s = withTier(f.services, clock, inProcessTasks(() => s, {}).runner);
    const big = await enqueue(jobContext(s), { type: 'create_index', params: {}, estimate: { costRows: 4_000_000 } });
    const small = await enqueue(jobContext(s), { type: 'create_index', params: {}, estimate: { costRows: 300 } });
    expect((await describeJob(jobContext(s), big.id)).properties).toMatchObject({ 'rask.tier': 'task', 'rask.tier_reason': 'estimate: 4000000 cost-rows > 2000000 (create_index)' });
    expect((await describeJob(jobContext(s), small.id)).properties).toMatchObject({ 'rask.tier': 'function', 'rask.tier_reason': 'estimate: 300 cost-rows ≤ 2000000 (create_index)' });
    const plain = await enqueue(jobContext(f.services), { type: 'create_index', params: {}, estimate: { costRows: 4_000_000 } });
    expect((await describeJob(jobContext(f.services), plain.id)).properties).toMatchObject({ 'rask.tier': 'function', 'rask.tier_reason': 'estimate: 4000000 cost-rows > 2000000 (create_index), but no task tier is configured' });
  });

  it('routes a backfill and a sweep by their own byte budgets, and a type without one not by bytes', () => {
    const { backfillBytes, sweepBytes } = DEFAULT_TIER_LIMITS;
    for (const [type, budget] of [['backfill', backfillBytes], ['maintenance_sweep', sweepBytes]] as const) {
      expect(routeByEstimate(type, { bytes: budget + 1 }, DEFAULT_TIER_LIMITS)).toEqual({ tier: 'task', reason: `estimate: ${budget + 1} bytes > ${budget} (${type})` });
      expect(routeByEstimate(type, { bytes: budget }, DEFAULT_TIER_LIMITS)).toEqual({ tier: 'function', reason: `estimate: ${budget} bytes ≤ ${budget} (${type})` });
    }
    // Each budget is its own: 500 bytes are over a backfill's 100 and under a sweep's 1000.
    const limits = tierLimits({ backfillBytes: 100, sweepBytes: 1000 });
    expect(routeByEstimate('backfill', { bytes: 500 }, limits)?.tier).toBe('task');
    expect(routeByEstimate('maintenance_sweep', { bytes: 500 }, limits)?.tier).toBe('function');
    expect(routeByEstimate('purge_table', { bytes: 10 * Math.max(backfillBytes, sweepBytes) }, DEFAULT_TIER_LIMITS)).toBeUndefined();
    // A deployment's setting replaces one budget and keeps the other.
    expect(tierLimits({ sweepBytes: 5 })).toEqual({ ...DEFAULT_TIER_LIMITS, sweepBytes: 5 });
  });
});
