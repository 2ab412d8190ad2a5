/**
 * The job task tier's infrastructure (infra/constructs/job-tasks.ts, #34 item 1), synthesized
 * with `-c rask:jobsTaskTier=on`: task sizes follow the context; the task role's grants equal
 * the Jobs function's; the function may RunTask only that task definition and PassRole only its
 * two roles (the deploy suite's IAM evaluator on the resolved policies); no NAT; cdk-nag clean.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRaskApp } from '../../infra/rask-app.js';
import { readAssembly } from '../deploy/assembly.js';
import { evaluate, rolePolicies, type Statement } from '../deploy/iam.js';
import { logicalId, resourcesOfType } from './helpers.js';

function synth(context: Record<string, string>, config: NonNullable<Parameters<typeof createRaskApp>[0]>['config'] = {}) {
  const { app, stack } = createRaskApp({
    // Asset metadata on: the assembly reader follows it to the functions and nested stacks.
    context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-asset-metadata': true, 'rask:jobsTaskTier': 'on', ...context },
    config,
    nag: false,
    outdir: mkdtempSync(path.join(tmpdir(), 'rask-cdk-')),
  });
  const template = Template.fromStack(stack);
  app.synth();
  return { app, stack, template, assembly: readAssembly(app.outdir) };
}

const keyOf = (s: Statement) => JSON.stringify({ a: ([] as string[]).concat(s.Action ?? []).sort(), r: ([] as string[]).concat(s.Resource ?? []).sort(), c: s.Condition ?? {} });

describe('the job task tier (rask:jobsTaskTier=on)', () => {
  let built: ReturnType<typeof synth>;
  beforeAll(() => {
    built = synth({});
  }, 120_000);

  it('sizes the task from the context: 8 vCPU / 32 GB by default, 16 / 120 when asked; bad sizes fail the synth', () => {
    built.template.hasResourceProperties('AWS::ECS::TaskDefinition', { Cpu: '8192', Memory: '32768', RequiresCompatibilities: ['FARGATE'] });
    const big = synth({ 'rask:jobsTaskCpu': '16', 'rask:jobsTaskMemoryMb': '122880' });
    big.template.hasResourceProperties('AWS::ECS::TaskDefinition', { Cpu: '16384', Memory: '122880' });
    expect(() => synth({ 'rask:jobsTaskCpu': '8', 'rask:jobsTaskMemoryMb': '122880' })).toThrow(/rask:jobsTaskMemoryMb must be a multiple of 1024 from 16384 to 61440 for 8 vCPU/);
    expect(() => synth({ 'rask:jobsTaskCpu': '3' })).toThrow(/rask:jobsTaskCpu must be one of/);
  }, 240_000);

  it("gives the task role exactly the Jobs function's storage and queue grants, and no vending", () => {
    const jobsRole = logicalId(built.template, 'AWS::IAM::Role', 'FunctionsJobsRole');
    const taskRole = logicalId(built.template, 'AWS::IAM::Role', 'JobTasksTaskRole');
    const jobs = rolePolicies(built.assembly, jobsRole).identity.filter((s) => ([] as string[]).concat(s.Action ?? []).every((a) => /^(s3|dynamodb):/.test(a)));
    const task = rolePolicies(built.assembly, taskRole).identity;
    expect(jobs.length).toBeGreaterThan(0);
    expect(task.map(keyOf).sort()).toEqual(jobs.map(keyOf).sort());
    expect(JSON.stringify(task)).not.toMatch(/sts:|ecs:|iam:PassRole/);
  });

  it("gives the container the Jobs function's catalog environment (buckets, prefixes, queue table), as the template resolves it", () => {
    const td = Object.values(resourcesOfType(built.template, 'AWS::ECS::TaskDefinition'))[0]!;
    const container = (td.Properties as { ContainerDefinitions: { Environment: { Name: string; Value: unknown }[] }[] }).ContainerDefinitions[0]!;
    const env = Object.fromEntries(container.Environment.map((e) => [e.Name, e.Value]));
    const jobs = Object.values(built.template.findResources('AWS::Lambda::Function')).find((r) =>
      JSON.stringify(r).includes('RASK_JOBS_TASK_DEFINITION'),
    ) as { Properties: { Environment: { Variables: Record<string, unknown> } } };
    const jobsEnv = jobs.Properties.Environment.Variables;
    for (const key of ['RASK_REGISTRY_BUCKET', 'RASK_REGISTRY_PREFIX', 'RASK_WAREHOUSE_BUCKET', 'RASK_WAREHOUSE_PREFIX', 'RASK_WORK_QUEUE_TABLE', 'RASK_PROJECT', 'MALLOC_ARENA_MAX', 'GLIBC_TUNABLES']) {
      expect(env[key], key).toEqual(jobsEnv[key]);
    }
    expect(env).toMatchObject({ RASK_TASK_PLATFORM: 'aws', RASK_JOB_TASK_MAX_MS: String(480 * 60_000) });
  });

  it('tells the maintenance passes the tier exists (their queued jobs route to it) and grants them no ECS action', () => {
    const passes = Object.entries(built.template.findResources('AWS::Lambda::Function')).filter(([id]) => id.startsWith('Maintenance'));
    expect(passes.length).toBeGreaterThan(0);
    for (const [id, r] of passes) {
      const vars = (r.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;
      expect(Object.keys(vars), id).toEqual(expect.arrayContaining(['RASK_JOBS_TASK_CLUSTER', 'RASK_JOBS_TASK_DEFINITION']));
      const role = ((r.Properties as { Role: { 'Fn::GetAtt': [string, string] } }).Role)['Fn::GetAtt'][0];
      expect(JSON.stringify(rolePolicies(built.assembly, role).identity), id).not.toMatch(/ecs:|iam:PassRole/);
    }
  });

  it('lets the Jobs function RunTask only this task definition on this cluster and PassRole only its two roles', () => {
    const jobsRole = logicalId(built.template, 'AWS::IAM::Role', 'FunctionsJobsRole');
    const statements = rolePolicies(built.assembly, jobsRole).identity;
    const stackName = built.stack.stackName;
    const tdId = logicalId(built.template, 'AWS::ECS::TaskDefinition', 'JobTasksTask');
    const clusterId = logicalId(built.template, 'AWS::ECS::Cluster', 'JobTasksCluster');
    const td = built.assembly.resolve(stackName, { Ref: tdId }) as string;
    const cluster = built.assembly.resolve(stackName, { 'Fn::GetAtt': [clusterId, 'Arn'] }) as string;
    const run = (resource: string, c = cluster) => evaluate(statements, { action: 'ecs:RunTask', resource, context: { 'ecs:cluster': c } }).allowed;
    expect(run(td)).toBe(true);
    expect(run(`${td.replace(/:\d+$/, '')}:999`.replace(/task-definition\/[^:]+/, 'task-definition/other'))).toBe(false);
    expect(run(td, `${cluster}-other`)).toBe(false);
    const pass = (roleId: string) => evaluate(statements, { action: 'iam:PassRole', resource: rolePolicies(built.assembly, roleId).roleArn, context: {} }).allowed;
    expect(pass(logicalId(built.template, 'AWS::IAM::Role', 'JobTasksTaskRole'))).toBe(true);
    expect(pass(logicalId(built.template, 'AWS::IAM::Role', 'JobTasksExecutionRole'))).toBe(true);
    expect(pass(logicalId(built.template, 'AWS::IAM::Role', 'FunctionsVendingRole'))).toBe(false);
    expect(pass(jobsRole)).toBe(false);
  });

  it('lets the metadata and data functions (AlterTransaction cancels) StopTask on this cluster only, and neither RunTask nor PassRole', () => {
    const stackName = built.stack.stackName;
    const clusterId = logicalId(built.template, 'AWS::ECS::Cluster', 'JobTasksCluster');
    const clusterName = built.assembly.resolve(stackName, { Ref: clusterId }) as string;
    const clusterArn = built.assembly.resolve(stackName, { 'Fn::GetAtt': [clusterId, 'Arn'] }) as string;
    const tdId = logicalId(built.template, 'AWS::ECS::TaskDefinition', 'JobTasksTask');
    const td = built.assembly.resolve(stackName, { Ref: tdId }) as string;
    // A task's ARN as ECS makes it: the stack's region and account, the cluster's name, an id.
    const ecsArn = built.assembly.resolve(stackName, { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }]] }) as string;
    const taskArn = `${ecsArn}:task/${clusterName}/0123456789abcdef`;
    const fns = resourcesOfType(built.template, 'AWS::Lambda::Function');
    for (const name of ['Meta', 'Data']) {
      const statements = rolePolicies(built.assembly, logicalId(built.template, 'AWS::IAM::Role', `Functions${name}Role`)).identity;
      expect(evaluate(statements, { action: 'ecs:StopTask', resource: taskArn, context: {} }).allowed, name).toBe(true);
      expect(evaluate(statements, { action: 'ecs:StopTask', resource: taskArn.replace(`/${clusterName}/`, '/other-cluster/'), context: {} }).allowed, name).toBe(false);
      expect(evaluate(statements, { action: 'ecs:RunTask', resource: td, context: { 'ecs:cluster': clusterArn } }).allowed, name).toBe(false);
      expect(evaluate(statements, { action: 'iam:PassRole', resource: rolePolicies(built.assembly, logicalId(built.template, 'AWS::IAM::Role', 'JobTasksTaskRole')).roleArn, context: {} }).allowed, name).toBe(false);
      // The runner is built only when both are set (lib/app/aws-jobs.ts): without them a cancel could not stop the task.
      const env = fns[logicalId(built.template, 'AWS::Lambda::Function', `Functions${name}`)]!.Properties!.Environment.Variables;
      expect(Object.keys(env), name).toEqual(expect.arrayContaining(['RASK_JOBS_TASK_CLUSTER', 'RASK_JOBS_TASK_DEFINITION']));
    }
  });

  it('has no NAT gateway: public subnets, S3 and DynamoDB gateway endpoints, and the Jobs function knows the task', () => {
    expect(Object.keys(resourcesOfType(built.template, 'AWS::EC2::NatGateway'))).toEqual([]);
    const endpoints = Object.values(resourcesOfType(built.template, 'AWS::EC2::VPCEndpoint')).map((e) => e.Properties?.VpcEndpointType ?? 'Gateway');
    expect(endpoints).toEqual(['Gateway', 'Gateway']);
    const fnId = logicalId(built.template, 'AWS::Lambda::Function', 'FunctionsJobs');
    const env = resourcesOfType(built.template, 'AWS::Lambda::Function')[fnId]!.Properties!.Environment.Variables;
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['RASK_JOBS_TASK_CLUSTER', 'RASK_JOBS_TASK_DEFINITION', 'RASK_JOBS_TASK_SUBNETS', 'RASK_JOBS_TASK_SECURITY_GROUPS', 'RASK_JOBS_TASK_CONCURRENCY']));
  });

  it('is cdk-nag clean', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(report.violations.map((v: { ruleName: string; violatingResources: { constructPath?: string }[] }) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});

describe('the job task tier with rask:functionMode=per-operation', () => {
  let built: ReturnType<typeof synth>;
  beforeAll(() => {
    built = synth({ 'rask:jobsTaskIndexCostRows': '3000000', 'rask:jobsTaskBackfillBytes': '1000000', 'rask:jobsTaskSweepBytes': '2000000' }, { functionMode: 'per-operation' });
  }, 180_000);

  const opFunction = (op: string) => {
    const found = built.assembly.functions.filter((f) => f.stack.includes('/') && f.logicalId.startsWith(op) && f.logicalId.slice(op.length).startsWith('Function'));
    expect(found.map((f) => f.logicalId), op).toHaveLength(1);
    return found[0]!;
  };
  const tier = () => {
    const stackName = built.stack.stackName;
    const clusterId = logicalId(built.template, 'AWS::ECS::Cluster', 'JobTasksCluster');
    const clusterName = built.assembly.resolve(stackName, { Ref: clusterId }) as string;
    const ecsArn = built.assembly.resolve(stackName, { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }]] }) as string;
    return {
      clusterName,
      clusterArn: built.assembly.resolve(stackName, { 'Fn::GetAtt': [clusterId, 'Arn'] }) as string,
      td: built.assembly.resolve(stackName, { Ref: logicalId(built.template, 'AWS::ECS::TaskDefinition', 'JobTasksTask') }) as string,
      taskArn: `${ecsArn}:task/${clusterName}/0123456789abcdef`,
      taskRoleArn: rolePolicies(built.assembly, logicalId(built.template, 'AWS::IAM::Role', 'JobTasksTaskRole')).roleArn,
    };
  };

  it("lets AlterTransaction's function (a cancel) StopTask on this cluster only, neither RunTask nor PassRole, and gives it the runner's address", () => {
    const t = tier();
    const f = opFunction('AlterTransaction');
    const statements = rolePolicies(built.assembly, f.roleLogicalId).identity;
    expect(evaluate(statements, { action: 'ecs:StopTask', resource: t.taskArn, context: {} }).allowed).toBe(true);
    expect(evaluate(statements, { action: 'ecs:StopTask', resource: t.taskArn.replace(`/${t.clusterName}/`, '/other-cluster/'), context: {} }).allowed).toBe(false);
    expect(evaluate(statements, { action: 'ecs:RunTask', resource: t.td, context: { 'ecs:cluster': t.clusterArn } }).allowed).toBe(false);
    expect(evaluate(statements, { action: 'iam:PassRole', resource: t.taskRoleArn, context: {} }).allowed).toBe(false);
    // The same names the Jobs function dispatches with, resolved through the nested stack's parameters.
    expect(f.environment).toMatchObject({ RASK_JOBS_TASK_CLUSTER: t.clusterName, RASK_JOBS_TASK_DEFINITION: t.td });
  });

  const routing = { RASK_JOBS_TASK_INDEX_COST_ROWS: '3000000', RASK_JOBS_TASK_BACKFILL_BYTES: '1000000', RASK_JOBS_TASK_SWEEP_BYTES: '2000000' };

  it('routes the jobs a write operation queues (CreateTableIndex, a backfill, a sweep, DropTable) as the grouped functions do, with no ECS grant', () => {
    const t = tier();
    for (const op of ['CreateTableIndex', 'AlterTableBackfillColumns', 'SweepTable', 'DropTable']) {
      const f = opFunction(op);
      expect(f.environment, op).toMatchObject({ RASK_JOBS_TASK_CLUSTER: t.clusterName, RASK_JOBS_TASK_DEFINITION: t.td, ...routing });
      const statements = rolePolicies(built.assembly, f.roleLogicalId).identity;
      expect(JSON.stringify(statements), op).not.toMatch(/ecs:|iam:PassRole/);
    }
    // The grouped functions route with the same limit (the Jobs function escalates, the data function queues builds).
    for (const name of ['FunctionsJobs', 'FunctionsData']) {
      const f = built.assembly.functions.find((x) => x.logicalId.startsWith(name) && !x.stack.includes('/'));
      expect(f?.environment, name).toMatchObject(routing);
    }
    // The scheduled sweep queues its tables' jobs with their estimates: it routes by the same budgets.
    const sweepPass = built.assembly.functions.filter((x) => /Sweep/.test(x.logicalId) && !x.stack.includes('/'));
    expect(sweepPass.length).toBeGreaterThan(0);
    for (const f of sweepPass) expect(f.environment, f.logicalId).toMatchObject(routing);
  });

  it('leaves the read operations without the tier: no ECS environment or grant', () => {
    for (const op of ['DescribeTransaction', 'ListTables', 'DescribeTable']) {
      const f = opFunction(op);
      expect(Object.keys(f.environment).filter((k) => k.startsWith('RASK_JOBS_TASK_')), op).toEqual([]);
      expect(JSON.stringify(rolePolicies(built.assembly, f.roleLogicalId).identity), op).not.toMatch(/ecs:/);
    }
  });

  it('is cdk-nag clean', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(report.violations.map((v: { ruleName: string; violatingResources: { constructPath?: string }[] }) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});
