import type { AwsConfig } from '../config.js';
import type { JobSettings } from '../queue/context.js';
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
  const tableName = config.RASK_WORK_QUEUE_TABLE;
  if (!tableName) return undefined;
  let adapter: Promise<typeof import('../adapters/aws/dynamo-work-queue.js')> | undefined;
  let client: import('../adapters/aws/dynamo-work-queue.js').DynamoDBClient | undefined;
  const queues = new Map<string, WorkQueue>();
  return {
    queueFor: (project) => {
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
    },
  };
}
