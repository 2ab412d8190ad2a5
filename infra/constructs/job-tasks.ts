/**
 * The job task tier on ECS Fargate (docs/jobs.md, "Tiers"; docs/deploy.md, "The job task
 * tier"): one task per task-tier job, running functions/job-task.ts with the Jobs function's
 * worker and runners. Built only with `-c rask:jobsTaskTier=on`.
 *
 * - Network: a VPC of public subnets in two AZs with no NAT gateway (tasks get a public IP to
 *   reach ECR, CloudWatch Logs and STS), and S3 / DynamoDB gateway endpoints (free) so table
 *   data and queue traffic stay off the internet. No ingress at all.
 * - The task role gets exactly the grants the Jobs function's role has (registry and warehouse
 *   prefixes, the work-queue table) and nothing else: no vending. The execution role pulls the
 *   image and writes the log group.
 * - The Jobs function may RunTask only this task definition (on this cluster), PassRole only
 *   these two roles, and Describe/Stop only this cluster's tasks.
 */
import { Duration, Intrinsic, type RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type Node } from 'constructs';
import { NATIVE_ALLOCATOR_ENV } from '../../lib/config.js';
import { jobTaskImageContext } from '../asset-source.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
import type { RaskFunction } from './rask-function.js';

export interface JobTaskSettings {
  /** vCPU of one task: 8 by default, up to 16 (Fargate's largest). */
  readonly cpu: number;
  /** Memory of one task in MB: 32 GB by default, up to 120 GB. */
  readonly memoryMb: number;
  /** The task's maximum duration (the worker stops its job there: RASK_JOB_TASK_MAX_MS). */
  readonly maxMinutes: number;
  /** At most this many task-tier jobs at once (RASK_JOBS_TASK_CONCURRENCY). */
  readonly concurrency: number;
  /**
   * Routing by estimate (docs/jobs.md, "Routing"): an index build above this many cost-rows
   * starts on the task tier (RASK_JOBS_TASK_INDEX_COST_ROWS); absent: the measured default
   * (lib/queue/tiers.ts).
   */
  readonly indexCostRows?: number;
  /** A backfill estimated to read more bytes than this starts on the task tier (RASK_JOBS_TASK_BACKFILL_BYTES). */
  readonly backfillBytes?: number;
  /** A sweep estimated to compact more bytes than this starts on the task tier (RASK_JOBS_TASK_SWEEP_BYTES). */
  readonly sweepBytes?: number;
}

/** The routing limits a deployment set, as the environment of every function that queues jobs (absent: lib/queue/tiers.ts's defaults). */
function routingEnvironment(settings: Pick<JobTaskSettings, 'indexCostRows' | 'backfillBytes' | 'sweepBytes'>): [string, string][] {
  const set: [string, number | undefined][] = [
    ['RASK_JOBS_TASK_INDEX_COST_ROWS', settings.indexCostRows],
    ['RASK_JOBS_TASK_BACKFILL_BYTES', settings.backfillBytes],
    ['RASK_JOBS_TASK_SWEEP_BYTES', settings.sweepBytes],
  ];
  return set.filter((e): e is [string, number] => e[1] !== undefined).map(([k, v]) => [k, String(v)]);
}

export const DEFAULT_JOB_TASK: JobTaskSettings = { cpu: 8, memoryMb: 32_768, maxMinutes: 480, concurrency: 4 };

/** Fargate's memory range per vCPU count (MB). */
const FARGATE_MEMORY: Readonly<Record<number, readonly [number, number]>> = {
  1: [2048, 8192],
  2: [4096, 16_384],
  4: [8192, 30_720],
  8: [16_384, 61_440],
  16: [32_768, 122_880],
};

/** `rask:jobsTaskTier=on` builds the tier; `rask:jobsTaskCpu`, `…MemoryMb`, `…MaxMinutes`, `…Concurrency` size it; `…IndexCostRows`, `…BackfillBytes`, `…SweepBytes` route to it. */
export function jobTaskSettingsFromContext(node: Node): JobTaskSettings | undefined {
  const tier = node.tryGetContext('rask:jobsTaskTier');
  if (tier === undefined || tier === 'off' || tier === false || tier === 'false') return undefined;
  if (tier !== 'on' && tier !== true && tier !== 'true') throw new Error(`rask:jobsTaskTier must be on or off; got ${JSON.stringify(tier)}`);
  const whole = (key: string, fallback: number): number => {
    const raw = node.tryGetContext(key);
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${key} must be a positive whole number; got ${JSON.stringify(raw)}`);
    return n;
  };
  const cpu = whole('rask:jobsTaskCpu', DEFAULT_JOB_TASK.cpu);
  const range = FARGATE_MEMORY[cpu];
  if (!range) throw new Error(`rask:jobsTaskCpu must be one of ${Object.keys(FARGATE_MEMORY).join(', ')} (Fargate's sizes); got ${cpu}`);
  const memoryMb = whole('rask:jobsTaskMemoryMb', Math.min(Math.max(DEFAULT_JOB_TASK.memoryMb, range[0]), range[1]));
  if (memoryMb < range[0] || memoryMb > range[1] || memoryMb % 1024 !== 0) {
    throw new Error(`rask:jobsTaskMemoryMb must be a multiple of 1024 from ${range[0]} to ${range[1]} for ${cpu} vCPU; got ${memoryMb}`);
  }
  const optional = (key: string) => (node.tryGetContext(key) === undefined ? undefined : whole(key, 0));
  const indexCostRows = optional('rask:jobsTaskIndexCostRows');
  const backfillBytes = optional('rask:jobsTaskBackfillBytes');
  const sweepBytes = optional('rask:jobsTaskSweepBytes');
  return {
    cpu,
    memoryMb,
    maxMinutes: whole('rask:jobsTaskMaxMinutes', DEFAULT_JOB_TASK.maxMinutes),
    concurrency: whole('rask:jobsTaskConcurrency', DEFAULT_JOB_TASK.concurrency),
    ...(indexCostRows === undefined ? {} : { indexCostRows }),
    ...(backfillBytes === undefined ? {} : { backfillBytes }),
    ...(sweepBytes === undefined ? {} : { sweepBytes }),
  };
}

export interface JobTasksProps {
  readonly settings: JobTaskSettings;
  /** The Jobs function: its role's grants are copied to the task role, and it dispatches. */
  readonly jobs: RaskFunction;
  /**
   * The functions whose AlterTransaction cancels jobs (metadata and data): a cancel of a
   * task-tier job stops its task (lib/queue/dispatch.ts, stopTaskOf), so they may StopTask on
   * this cluster, and nothing else here.
   */
  readonly cancellers?: readonly RaskFunction[];
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

export class JobTasks extends Construct {
  readonly vpc: ec2.Vpc;
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly taskRole: iam.Role;
  readonly executionRole: iam.Role;
  readonly securityGroup: ec2.SecurityGroup;
  private readonly routing: readonly [string, string][];
  private readonly tasksArn: string;

  constructor(scope: Construct, id: string, props: JobTasksProps) {
    super(scope, id);
    const { settings } = props;

    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'tasks', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }],
      gatewayEndpoints: {
        S3: { service: ec2.GatewayVpcEndpointAwsService.S3 },
        DynamoDB: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB },
      },
    });
    const flowLogs = new logs.LogGroup(this, 'FlowLogs', { retention: props.logRetentionDays as logs.RetentionDays, removalPolicy: props.removalPolicy });
    this.vpc.addFlowLog('FlowLog', { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs), trafficType: ec2.FlowLogTrafficType.REJECT });
    this.securityGroup = new ec2.SecurityGroup(this, 'Tasks', { vpc: this.vpc, description: 'rask job tasks: no ingress; egress to AWS APIs', allowAllOutbound: true });

    this.cluster = new ecs.Cluster(this, 'Cluster', { vpc: this.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });

    this.taskRole = new iam.Role(this, 'TaskRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'rask job task: the Jobs function grants (registry, warehouse, work queue), no vending',
    });
    this.executionRole = new iam.Role(this, 'ExecutionRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'rask job task execution: image pull and logs',
    });
    copyGrants(props.jobs.role, this.taskRole);

    const logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays as logs.RetentionDays, removalPolicy: props.removalPolicy });
    this.taskDefinition = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: settings.cpu * 1024,
      memoryLimitMiB: settings.memoryMb,
      taskRole: this.taskRole,
      executionRole: this.executionRole,
      runtimePlatform: { cpuArchitecture: ecs.CpuArchitecture.X86_64, operatingSystemFamily: ecs.OperatingSystemFamily.LINUX },
    });
    this.taskDefinition.addContainer('worker', {
      containerName: 'worker',
      image: ecs.ContainerImage.fromAsset(imageContext(this)),
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'job' }),
      environment: {
        ...jobsEnvironment(props.jobs),
        RASK_TASK_PLATFORM: 'aws',
        RASK_JOB_TASK_MAX_MS: String(settings.maxMinutes * 60_000),
      },
      stopTimeout: Duration.seconds(30),
    });
    // ECR's GetAuthorizationToken has no resource: the pull itself is granted on the image's repository only.
    acknowledge(this.executionRole, 'AwsSolutions-IAM5[Resource::*]', 'ecr:GetAuthorizationToken cannot be scoped to a resource; the image pull (BatchGetImage, GetDownloadUrlForLayer) is granted on the asset repository only.');
    acknowledge(this.taskDefinition, 'AwsSolutions-ECS2', 'The environment holds the same bucket, prefix and table names the Jobs function receives; no secret is passed.');

    // The Jobs function dispatches: RunTask of this definition only, PassRole of its two roles only.
    const jobsRole = props.jobs.role;
    jobsRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:RunTask'],
        resources: [this.taskDefinition.taskDefinitionArn],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    jobsRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['iam:PassRole'], resources: [this.taskRole.roleArn, this.executionRole.roleArn] }));
    const tasksArn = Stack.of(this).formatArn({ service: 'ecs', resource: 'task', resourceName: `${this.cluster.clusterName}/*` });
    jobsRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecs:DescribeTasks', 'ecs:StopTask'], resources: [tasksArn] }));
    acknowledgeWildcardResource(jobsRole, tasksArn, "Task ids are made by ECS at RunTask; the resource is this cluster's tasks only.");
    this.tasksArn = tasksArn;
    this.routing = routingEnvironment(settings);
    this.cancelledBy(props.cancellers ?? []);
    // The Jobs function queues too (it escalates): it routes like the others.
    for (const [k, v] of this.routing) props.jobs.fn.addEnvironment(k, v);
    const fn = props.jobs.fn;
    fn.addEnvironment('RASK_JOBS_TASK_CLUSTER', this.cluster.clusterName);
    fn.addEnvironment('RASK_JOBS_TASK_DEFINITION', this.taskDefinition.taskDefinitionArn);
    fn.addEnvironment('RASK_JOBS_TASK_CONTAINER', 'worker');
    fn.addEnvironment('RASK_JOBS_TASK_SUBNETS', this.vpc.publicSubnets.map((s) => s.subnetId).join(','));
    fn.addEnvironment('RASK_JOBS_TASK_SECURITY_GROUPS', this.securityGroup.securityGroupId);
    fn.addEnvironment('RASK_JOBS_TASK_PUBLIC_IP', 'true');
    fn.addEnvironment('RASK_JOBS_TASK_CONCURRENCY', String(settings.concurrency));
  }

  /**
   * Functions whose AlterTransaction cancels jobs (the grouped metadata and data functions, or
   * per-operation mode's AlterTransaction function): StopTask on this cluster's tasks, so that a
   * cancel of a task-tier job stops its task (lib/queue/dispatch.ts, stopTaskOf), and the
   * runner's address (lib/app/aws-jobs.ts builds the runner only when both names are set). They
   * neither start tasks nor pass roles. They may queue jobs too, so they route like
   * `routeJobsOf`.
   */
  cancelledBy(functions: readonly RaskFunction[]): void {
    for (const canceller of functions) {
      canceller.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecs:StopTask'], resources: [this.tasksArn] }));
      acknowledgeWildcardResource(canceller.role, this.tasksArn, "Task ids are made by ECS at RunTask; the resource is this cluster's tasks only.");
    }
    this.routeJobsOf(functions);
  }

  /**
   * Functions that queue jobs but neither dispatch nor cancel (the maintenance passes, and
   * per-operation mode's other write operations: CreateTableIndex, a backfill, DropTable's purge): told the
   * tier exists, so that a table's sticky route or an estimate puts the job on it. Without this a
   * sweep of a table escalated before queued its next job on the function tier ("…, but no task
   * tier is configured"). No grant: they call no ECS API.
   */
  routeJobsOf(functions: readonly RaskFunction[]): void {
    for (const f of functions) {
      f.fn.addEnvironment('RASK_JOBS_TASK_CLUSTER', this.cluster.clusterName);
      f.fn.addEnvironment('RASK_JOBS_TASK_DEFINITION', this.taskDefinition.taskDefinitionArn);
      for (const [k, v] of this.routing) f.fn.addEnvironment(k, v);
    }
  }
}

/**
 * The Jobs function's environment (bucket names, prefixes, queue table) as it stands now. The
 * L1 function's `environment` is a lazy value: read as a plain object it is empty (the task got
 * none of it, and its entry refused to start: the deploy suite's RunTask caught it), so it is
 * resolved here, and each value that is a CloudFormation expression (a bucket name read from an
 * SSM parameter) goes back in as that expression.
 */
function jobsEnvironment(jobs: RaskFunction): Record<string, string> {
  const cfn = jobs.fn.node.defaultChild as lambda.CfnFunction;
  const resolved = Stack.of(jobs.fn).resolve(cfn.environment) as { Variables?: Record<string, unknown>; variables?: Record<string, unknown> } | undefined;
  const vars = resolved?.Variables ?? resolved?.variables ?? {};
  return Object.fromEntries(
    Object.entries(vars)
      .filter(([k]) => k.startsWith('RASK_') || k === 'NODE_OPTIONS' || k in NATIVE_ALLOCATOR_ENV)
      .map(([k, v]) => [k, typeof v === 'string' ? v : Token.asString(new Intrinsic(v))]),
  );
}

/**
 * The task role gets the statements the Jobs function's role has for storage and the queue
 * (CatalogFunctions adds them in its constructor, before this construct exists): the same
 * grants. Not the dispatch grants below, nor event publishing.
 */
function copyGrants(from: iam.Role, to: iam.Role): void {
  const policy = from.node.tryFindChild('DefaultPolicy') as iam.Policy | undefined;
  if (!policy) throw new Error('the Jobs role has no policy to copy');
  const copied = new iam.Policy(to, 'JobsGrants', { roles: [to] });
  for (const statement of policy.document.toJSON()?.Statement ?? []) {
    const actions = ([] as string[]).concat((statement as { Action: string | string[] }).Action);
    if (!actions.every((a) => a.startsWith('s3:') || a.startsWith('dynamodb:'))) continue;
    copied.addStatements(iam.PolicyStatement.fromJson(statement));
    for (const resource of ([] as string[]).concat((statement as { Resource: string | string[] }).Resource)) {
      acknowledgeWildcardResource(to, resource, "The same prefix-scoped grant as the Jobs function's (infra/constructs/permissions.ts): the * stands for the object keys under the catalog's prefix.");
    }
  }
}

/** The image's build context: the bundled entry, the LanceDB layer's lockfile, a Dockerfile. */
function imageContext(scope: Construct): string {
  return jobTaskImageContext(Stack.of(scope).bundlingRequired);
}
