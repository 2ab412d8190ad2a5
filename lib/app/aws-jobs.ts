import type { AwsConfig } from '../config.js';
import type { JobSettings, TaskTier } from '../queue/context.js';
import type { TaskRunner } from '../ports/task-runner.js';
import { DEFAULT_TASK_GRACE_MS, tierLimits } from '../queue/tiers.js';
import { lazyPort } from '../ports/lazy.js';
import type { WorkQueue } from '../ports/work-queue.js';

const WORK_QUEUE_METHODS = { insert: true, read: true, replace: true, listLive: true, listDue: true, retire: true, listRetired: true, remove: true } as const;

/**
 * Jobs on the stack's DynamoDB table when RASK_WORK_QUEUE_TABLE is set (the stack sets it on
 * every function that enqueues, describes or runs jobs), else in the registry. Every function of
 * one deployment must agree, or a job enqueued by one is invisible to the others.
 *
 * One queue per project (the table's keys carry the project), made on first use and kept with
 * one shared client: a request through `/projects/acme` reaches acme's jobs, never the default
 * project's (lib/queue/context.ts). The DynamoDB client is loaded by the first job operation, not
 * by every cold start (lib/ports/lazy.ts).
 */
export function awsJobSettings(config: AwsConfig): JobSettings | undefined {
  const tasks = ecsTaskTier(config);
  const queues = dynamoQueues(config);
  if (!tasks && !queues) return undefined;
  return { ...(queues ? { queueFor: queues } : {}), ...(tasks ? { tasks } : {}) };
}

const TASK_RUNNER_METHODS = { kind: true, start: true, describe: true, stop: true } as const;

/**
 * The Fargate task tier when RASK_JOBS_TASK_CLUSTER is set (infra/constructs/job-tasks.ts sets
 * it on the jobs function, which dispatches, and on the metadata and data functions, whose
 * AlterTransaction stops a canceled job's task). The ECS client loads on first use.
 */
function ecsTaskTier(config: AwsConfig): TaskTier | undefined {
  const cluster = config.RASK_JOBS_TASK_CLUSTER;
  const taskDefinition = config.RASK_JOBS_TASK_DEFINITION;
  if (!cluster || !taskDefinition) return undefined;
  const runner = lazyPort<TaskRunner>(async () => {
    const { ECSClient, EcsTaskRunner } = await import('../adapters/aws/ecs-task-runner.js');
    return new EcsTaskRunner(new ECSClient({ region: config.AWS_REGION }), {
      cluster,
      taskDefinition,
      container: config.RASK_JOBS_TASK_CONTAINER,
      subnets: config.RASK_JOBS_TASK_SUBNETS,
      securityGroups: config.RASK_JOBS_TASK_SECURITY_GROUPS,
      assignPublicIp: config.RASK_JOBS_TASK_PUBLIC_IP,
    });
  }, TASK_RUNNER_METHODS);
  return {
    runner: { ...runner, kind: 'ecs' },
    concurrency: config.RASK_JOBS_TASK_CONCURRENCY,
    graceMs: DEFAULT_TASK_GRACE_MS,
    limits: tierLimits({ createIndexCostRows: config.RASK_JOBS_TASK_INDEX_COST_ROWS, backfillBytes: config.RASK_JOBS_TASK_BACKFILL_BYTES, sweepBytes: config.RASK_JOBS_TASK_SWEEP_BYTES }),
  };
}

function dynamoQueues(config: AwsConfig): JobSettings['queueFor'] {
  const tableName = config.RASK_WORK_QUEUE_TABLE;
  if (!tableName) return undefined;
  let adapter: Promise<typeof import('../adapters/aws/dynamo-work-queue.js')> | undefined;
  let client: import('../adapters/aws/dynamo-work-queue.js').DynamoDBClient | undefined;
  const queues = new Map<string, WorkQueue>();
  return (project) => {
    let queue = queues.get(project);
    if (!queue) {
      queue = lazyPort<WorkQueue>(async () => {
        adapter ??= import('../adapters/aws/dynamo-work-queue.js');
        const { DynamoDBClient, DynamoWorkQueue } = await adapter;
        client ??= new DynamoDBClient({ region: config.AWS_REGION });
        return new DynamoWorkQueue({ client, tableName, project });
      }, WORK_QUEUE_METHODS);
      queues.set(project, queue);
    }
    return queue;
  };
}
