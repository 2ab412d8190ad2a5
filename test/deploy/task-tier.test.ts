/**
 * The job task tier as deployed (#34; docs/deploy.md, "The job task tier"), offline: an
 * assembly synthesized with `-c rask:jobsTaskTier=on -c rask:jobsTaskIndexCostRows=10000`
 * (RASK_TASK_TIER_CDK_OUT names one; otherwise the suite synthesizes it, ~1–4 min), its
 * functions in Lambda-like sandboxes (./world.ts) and its task definition's image in a
 * container stand-in (./containers.ts) that the AWS fake's RunTask starts.
 *
 * - A data-door index build over the task tier's limit is queued there by the data function,
 *   dispatched by the Jobs function (RunTask, with PassRole of the task's two roles), claimed and
 *   built by the image's entry with the task role's credentials, and succeeds.
 * - A cancel of a dispatched job stops its task (StopTask by the function that serves
 *   AlterTransaction).
 * - Every AWS call of those runs is allowed by the caller's synthesized role (the IAM evaluator),
 *   and the evaluator refuses what the roles do not grant.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiEvent } from './api-events.js';
import { isPart } from './assembly.js';
import { decide, rolePolicies, type Request } from './iam.js';
import { scheduledEvent, startWorld, type World } from './world.js';
import type { EcsTask } from '../support/aws-http-fake.js';
import { ipcRows } from '../data/fixtures.js';

const ADMIN_KEY = 'smoke-admin-key-0123456789';
/** Over the synchronous limit (20,000 cost-rows: lib/config.ts) and the task tier's (10,000, from the context). */
const ROWS = 20_100;

let world: World;
let synthesized: string | undefined;

interface ApiAnswer {
  readonly statusCode: number;
  readonly body: string;
}

async function call(operation: string, p: string, options: Parameters<typeof apiEvent>[2] = {}): Promise<ApiAnswer> {
  const route = world.routes.get(operation);
  if (!route) throw new Error(`the API has no method for ${operation}`);
  const result = await world.invoke(route.fn, apiEvent(route.method as 'GET' | 'POST', p, options));
  if (!result.ok) throw new Error(`${route.fn.logicalId} failed on ${operation}: ${result.error}`);
  return result.value as ApiAnswer;
}

const ok = (answer: ApiAnswer) => {
  expect(answer.statusCode, answer.body).toBe(200);
  return JSON.parse(answer.body || '{}') as Record<string, unknown>;
};
const describeTx = async (id: string) => ok(await call('DescribeTransaction', `/v1/transaction/${id}/describe`, { json: {} })) as { status: string; properties: Record<string, string> };

const jobsFunction = () => {
  const target = world.schedules.find((t) => isPart(t.fn.logicalId, 'FunctionsJobs'));
  if (!target) throw new Error('no schedule targets the Jobs function');
  return target;
};
async function runJobs(): Promise<{ ran: number; outcomes: Record<string, number> }> {
  const jobs = jobsFunction();
  const r = await world.invoke(jobs.fn, jobs.input ?? scheduledEvent(jobs.rule));
  if (!r.ok) throw new Error(r.error);
  return r.value as { ran: number; outcomes: Record<string, number> };
}

async function queueBuild(table: string): Promise<string> {
  ok(await call('CreateTable', `/v1/table/tier%24${table}/create`, { binary: ipcRows(ROWS) }));
  const queued = ok(
    await call('CreateTableIndex', `/v1/table/tier%24${table}/create_index`, { json: { column: 'vec', index_type: 'IVF_PQ', name: 'v', num_partitions: 2, num_sub_vectors: 2 } }),
  );
  return String(queued.transaction_id);
}

const taskOf = (id: string): EcsTask => {
  const found = [...world.fake.ecsTasks.values()].filter((t) => t.environment.RASK_JOB_ID === id);
  expect(found).toHaveLength(1);
  return found[0]!;
};

beforeAll(async () => {
  let cdkOut = process.env.RASK_TASK_TIER_CDK_OUT;
  if (!cdkOut) {
    synthesized = mkdtempSync(path.join(tmpdir(), 'rask-task-tier-cdk-'));
    const synth = spawnSync('npx', ['cdk', 'synth', '-q', '-c', 'rask:jobsTaskTier=on', '-c', 'rask:jobsTaskIndexCostRows=10000', '-o', synthesized], {
      encoding: 'utf8',
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      timeout: 900_000,
    });
    if (synth.status !== 0) throw new Error(`cdk synth failed (${synth.status}):\n${synth.stderr}\n${synth.stdout}`);
    cdkOut = synthesized;
  }
  world = await startWorld({
    cdkOut: path.resolve(cdkOut),
    secrets: (assembly) => Object.fromEntries(assembly.functions.flatMap((f) => (f.environment.RASK_ADMIN_KEY_SECRET_ID ? [[f.environment.RASK_ADMIN_KEY_SECRET_ID, ADMIN_KEY]] : []))),
  });
  ok(await call('CreateNamespace', '/v1/namespace/tier/create', { json: {} }));
}, 960_000);

afterAll(async () => {
  await world?.close();
  if (synthesized) rmSync(synthesized, { recursive: true, force: true });
});

describe('the task tier, synthesized with rask:jobsTaskTier=on', () => {
  it('the assembly has one task definition whose image context holds the bundled entry and the layer lockfile', () => {
    expect(world.taskDefinitions).toHaveLength(1);
    const [definition] = world.taskDefinitions;
    expect(definition!.container.environment).toMatchObject({ RASK_TASK_PLATFORM: 'aws', RASK_WORK_QUEUE_TABLE: expect.any(String) });
    expect(jobsFunction().fn.environment).toMatchObject({ RASK_JOBS_TASK_DEFINITION: definition!.arn, RASK_JOBS_TASK_INDEX_COST_ROWS: '10000' });
  });

  it('a data-door build over the limit is queued on the task tier, dispatched by the Jobs function and built by the task', async () => {
    const id = await queueBuild('big');
    expect((await describeTx(id)).properties).toMatchObject({ 'rask.tier': 'task', 'rask.tier_reason': `estimate: ${ROWS} cost-rows > 10000 (create_index)`, 'rask.attempts': '0' });

    // The Jobs function runs nothing itself: it starts the job's task.
    expect((await runJobs()).ran).toBe(0);
    const task = taskOf(id);
    expect(task.clientToken).toBe(`${id}-1`);
    await task.stopped;
    const container = world.containers.get(task.taskArn)!;
    expect([task.stopCode, task.exitCode], container.output().slice(-4000)).toEqual(['EssentialContainerExited', 0]);
    expect(container.output()).toContain('"message":"job succeeded"');

    const done = await describeTx(id);
    expect(done.status, JSON.stringify(done.properties)).toBe('Succeeded');
    expect(done.properties).toMatchObject({ 'rask.tier': 'task', 'rask.attempts': '1', 'rask.dispatches': '1', 'rask.task': `ecs:${task.taskArn}` });
    expect(done.properties['rask.worker']).toMatch(/^task:/);
    const listed = ok(await call('ListTableIndices', '/v1/table/tier%24big/index/list', { json: {} })) as { indexes: { index_name: string }[] };
    expect(listed.indexes.map((i) => i.index_name)).toEqual(['v']);
    // A second pass finds nothing to start: one task for one dispatch.
    await runJobs();
    expect(world.fake.calls.filter((c) => c.action === 'ecs:RunTask')).toHaveLength(1);
  });

  it('a cancel of a dispatched job stops its task (StopTask by the function serving AlterTransaction)', async () => {
    const id = await queueBuild('canceled');
    // A slow start: the task stays PROVISIONING, so the cancel meets it before any claim.
    world.holdTasks(1);
    await runJobs();
    const task = taskOf(id);
    expect(task.lastStatus).toBe('PROVISIONING');
    expect((await describeTx(id)).properties['rask.task']).toBe(`ecs:${task.taskArn}`);
    const altered = ok(await call('AlterTransaction', `/v1/transaction/${id}/alter`, { json: { actions: [{ setStatusAction: { status: 'Canceled' } }] } }));
    expect(altered.status).toBe('Canceled');
    await task.stopped;
    expect([task.lastStatus, task.stopCode, task.stoppedReason]).toEqual(['STOPPED', 'UserInitiated', `rask job ${id} is Canceled`]);
    const alterFn = world.routes.get('AlterTransaction')!.fn;
    expect(world.fake.calls.filter((c) => c.action === 'ecs:StopTask').map((c) => [c.principal, c.resource, c.status])).toEqual([[alterFn.name, task.taskArn, 200]]);
    expect((await describeTx(id)).status).toBe('Canceled');
  });
});

describe('IAM coverage of the task tier', () => {
  const taskRole = () => world.taskDefinitions[0]!.taskRoleLogicalId;

  it('every recorded call is allowed by its caller role: functions, and the task by its task role', () => {
    const denied: string[] = [];
    const callers = [...world.assembly.functions.map((f) => [f.name, f.roleLogicalId] as const), [taskRole(), taskRole()] as const];
    for (const [principal, role] of callers) {
      const policies = rolePolicies(world.assembly, role);
      for (const c of world.fake.calls.filter((x) => x.principal === principal)) {
        const decision = decide(policies, c);
        if (!decision.allowed) denied.push(`${principal}: ${c.action} on ${c.resource} ${JSON.stringify(c.context)} (${decision.reason})`);
      }
    }
    expect(denied).toEqual([]);
    const jobs = jobsFunction().fn.name;
    const by = (action: string) => world.fake.calls.filter((c) => c.action === action && c.status === 200).map((c) => c.principal);
    // The dispatch passes exactly the task's two roles, once per RunTask.
    expect(new Set(by('ecs:RunTask'))).toEqual(new Set([jobs]));
    expect(world.fake.calls.filter((c) => c.action === 'iam:PassRole').map((c) => c.resource).sort()).toEqual([...world.taskDefinitions[0]!.passRoles, ...world.taskDefinitions[0]!.passRoles].sort());
    expect(by('ecs:StopTask')).toHaveLength(1);
    // The task worked with the task role: storage and queue only, no vending.
    const taskCalls = world.fake.calls.filter((c) => c.principal === taskRole());
    expect(taskCalls.some((c) => c.action === 's3:PutObject')).toBe(true);
    expect(taskCalls.some((c) => c.action.startsWith('dynamodb:'))).toBe(true);
    expect(taskCalls.filter((c) => !/^(s3|dynamodb):/.test(c.action)).map((c) => c.action)).toEqual([]);
  });

  it('the evaluator refuses what the roles do not grant (the check can fail)', () => {
    const jobs = rolePolicies(world.assembly, jobsFunction().fn.roleLogicalId);
    const run = world.fake.calls.find((c) => c.action === 'ecs:RunTask')! as Request;
    expect(decide(jobs, run).allowed).toBe(true);
    expect(decide(jobs, { ...run, resource: run.resource.replace(/task-definition\/[^:]+/, 'task-definition/other') }).allowed).toBe(false);
    expect(decide(jobs, { ...run, context: { 'ecs:cluster': run.context['ecs:cluster']!.replace(/cluster\/.*/, 'cluster/other') } }).allowed).toBe(false);
    const pass = world.fake.calls.find((c) => c.action === 'iam:PassRole')! as Request;
    expect(decide(jobs, { ...pass, resource: pass.resource.replace(/role\/.*/, 'role/Admin') }).allowed).toBe(false);
    // The function serving AlterTransaction may stop tasks but neither start one nor pass a role.
    const canceller = rolePolicies(world.assembly, world.routes.get('AlterTransaction')!.fn.roleLogicalId);
    expect([decide(canceller, run).allowed, decide(canceller, pass).allowed]).toEqual([false, false]);
    // The task role may not start tasks or vend.
    const task = rolePolicies(world.assembly, taskRole());
    expect([decide(task, run).allowed, decide(task, { action: 'sts:AssumeRole', resource: '*', context: {} }).allowed]).toEqual([false, false]);
  });
});
