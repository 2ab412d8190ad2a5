/**
 * The task tier's runners behind the TaskRunner port (lib/ports/task-runner.ts): ECS Fargate
 * (RunTask with the dispatch token as clientToken, DescribeTasks, StopTask; the official client
 * mocked with aws-sdk-client-mock) and the local child process. And the worker's limit: a job
 * that outlives the task's maximum duration is stopped and failed with the timeout code.
 */
import { DescribeTasksCommand, ECSClient, RunTaskCommand, StopTaskCommand } from '@aws-sdk/client-ecs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { EcsTaskRunner } from '../../lib/adapters/aws/ecs-task-runner.js';
import { ChildTaskRunner } from '../../lib/adapters/local/child-task-runner.js';
import { TaskRefusedError } from '../../lib/ports/task-runner.js';
import { runJobsOnce } from '../../lib/jobs/worker.js';
import { jobContext } from '../../lib/queue/context.js';
import { describeJob, enqueue } from '../../lib/queue/jobs.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

const ecs = mockClient(ECSClient);
const settings = { cluster: 'c', taskDefinition: 'arn:aws:ecs:eu-west-1:1:task-definition/rask-jobs:3', container: 'worker', subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-1'], assignPublicIp: true };

describe('EcsTaskRunner', () => {
  afterEach(() => ecs.reset());

  it('starts one Fargate task with the token as clientToken and the job in its environment', async () => {
    ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: 'arn:task/1' }] });
    const runner = new EcsTaskRunner(new ECSClient({ region: 'eu-west-1' }), settings);
    expect(await runner.start({ jobId: 'a'.repeat(32), project: 'acme', token: `${'a'.repeat(32)}-1` })).toBe('arn:task/1');
    const input = ecs.commandCalls(RunTaskCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      cluster: 'c',
      taskDefinition: settings.taskDefinition,
      launchType: 'FARGATE',
      count: 1,
      clientToken: `${'a'.repeat(32)}-1`,
      networkConfiguration: { awsvpcConfiguration: { subnets: ['subnet-a', 'subnet-b'], securityGroups: ['sg-1'], assignPublicIp: 'ENABLED' } },
    });
    expect(input.overrides?.containerOverrides?.[0]).toEqual({
      name: 'worker',
      environment: [
        { name: 'RASK_JOB_ID', value: 'a'.repeat(32) },
        { name: 'RASK_JOB_PROJECT', value: 'acme' },
      ],
    });
  });

  it('a throttled call or an answer with failures is a refusal, naming the reason', async () => {
    const runner = new EcsTaskRunner(new ECSClient({ region: 'eu-west-1' }), settings);
    ecs.on(RunTaskCommand).rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    await expect(runner.start({ jobId: 'b'.repeat(32), project: 'p', token: 't' })).rejects.toThrow(TaskRefusedError);
    ecs.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: 'RESOURCE:ENI', detail: 'no ENI capacity' }] });
    await expect(runner.start({ jobId: 'b'.repeat(32), project: 'p', token: 't' })).rejects.toThrow(/RESOURCE:ENI \(no ENI capacity\)/);
  });

  it("describes a stopped task with its stop code, reason and the container's exit code, and stops tasks", async () => {
    ecs.on(DescribeTasksCommand).resolves({
      tasks: [{ lastStatus: 'STOPPED', stopCode: 'EssentialContainerExited', stoppedReason: 'Essential container in task exited', containers: [{ name: 'worker', exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' }] }],
    });
    const runner = new EcsTaskRunner(new ECSClient({ region: 'eu-west-1' }), settings);
    const state = await runner.describe('arn:task/1');
    expect(state.status).toBe('stopped');
    expect(state.stopReason).toBe('EssentialContainerExited: Essential container in task exited: exit code 137: OutOfMemoryError: Container killed due to memory usage');
    ecs.on(DescribeTasksCommand).resolves({ tasks: [], failures: [{ arn: 'arn:task/2', reason: 'MISSING' }] });
    expect(await runner.describe('arn:task/2')).toEqual({ status: 'missing', stopReason: 'MISSING' });
    ecs.on(StopTaskCommand).resolves({});
    await runner.stop('arn:task/1', 'canceled by AlterTransaction');
    expect(ecs.commandCalls(StopTaskCommand)[0]!.args[0].input).toEqual({ cluster: 'c', task: 'arn:task/1', reason: 'canceled by AlterTransaction' });
  });
});

describe('ChildTaskRunner', () => {
  it('runs the command with the job in its environment, once per token, and reports how it ended', async () => {
    const lines: string[] = [];
    const runner = new ChildTaskRunner({
      command: [process.execPath, '-e', 'console.log(process.env.RASK_JOB_ID + "/" + process.env.RASK_JOB_PROJECT); process.exit(3)'],
      output: (l) => lines.push(l),
    });
    const task = await runner.start({ jobId: 'c'.repeat(32), project: 'acme', token: 'tok-1' });
    expect(await runner.start({ jobId: 'c'.repeat(32), project: 'acme', token: 'tok-1' })).toBe(task);
    await runner.settled();
    expect(lines).toEqual([`${'c'.repeat(32)}/acme`]);
    expect(await runner.describe(task)).toEqual({ status: 'stopped', stopReason: 'exit code 3' });
    expect(await runner.describe('pid:1')).toEqual({ status: 'missing' });
  });

  it('stops a running child with SIGTERM', async () => {
    const runner = new ChildTaskRunner({ command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] });
    const task = await runner.start({ jobId: 'd'.repeat(32), project: 'p', token: 'tok-2' });
    expect((await runner.describe(task)).status).toBe('running');
    await runner.stop(task, 'cancel');
    await runner.settled();
    expect(await runner.describe(task)).toEqual({ status: 'stopped', stopReason: 'killed by SIGTERM' });
  });

  it('kills a child that outlives its SIGTERM (a step inside LanceDB) after the grace, and it is reaped', async () => {
    const lines: string[] = [];
    // Ignores SIGTERM and keeps running, as the entry does while LanceDB holds the job.
    const runner = new ChildTaskRunner({
      command: [process.execPath, '-e', 'process.on("SIGTERM", () => console.log("term")); console.log("up"); setInterval(() => {}, 1000)'],
      output: (l) => lines.push(l),
      killAfterMs: 300,
    });
    const task = await runner.start({ jobId: 'e'.repeat(32), project: 'p', token: 'tok-3' });
    const pid = Number(task.slice('pid:'.length));
    for (let i = 0; i < 100 && !lines.includes('up'); i++) await new Promise((r) => setTimeout(r, 50));
    await runner.stop(task, 'cancel');
    // Still there just after the SIGTERM: it chose to run on.
    await new Promise((r) => setTimeout(r, 100));
    expect((await runner.describe(task)).status).toBe('running');
    await runner.settled();
    expect(lines).toContain('term');
    expect(await runner.describe(task)).toEqual({ status: 'stopped', stopReason: 'killed by SIGKILL' });
    // Reaped: no process, not even a zombie, has its pid.
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  });
});

describe("a task's maximum duration", () => {
  let f: ServicesFixture;
  afterEach(() => f?.cleanup());

  it('stops the job through its signal and fails it with the timeout code, naming the tier, the limit and the remedy', async () => {
    f = await servicesOver('memory');
    const job = await enqueue(jobContext(f.services), { type: 'long', params: {} });
    let aborted: unknown;
    const report = await runJobsOnce(f.services, {
      owner: 'task:t1',
      budgetMs: 10_000,
      only: job.id,
      tier: 'task',
      limitMs: 50,
      enforceLimit: true,
      log: () => undefined,
      // Ignores its signal like a step inside LanceDB: the worker must not wait for it.
      runners: { long: (_j, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => ((aborted = signal.reason), setTimeout(() => resolve({}), 10_000)))) },
    });
    expect(report.ran).toMatchObject([{ id: job.id, outcome: 'failed', code: 17 }]);
    expect(aborted).toBeInstanceOf(Error);
    const view = await describeJob(jobContext(f.services), job.id);
    expect(view.status).toBe('Failed');
    expect(view.properties).toMatchObject({ 'rask.error_code': '17', 'rask.error_kind': 'timeout', 'rask.attempts': '1' });
    expect(view.properties['rask.error']).toMatch(/ran past the task tier's limit of 50 ms and was stopped; give the task more CPU or a longer maximum duration/);
  });
});
