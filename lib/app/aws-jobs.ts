import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoWorkQueue } from '../adapters/aws/dynamo-work-queue.js';
import type { AwsConfig } from '../config.js';
import type { JobSettings } from '../jobs/context.js';

/**
 * Jobs on the stack's DynamoDB table when RASK_WORK_QUEUE_TABLE is set (the stack sets it on
 * every function that enqueues, describes or runs jobs), else in the registry. Every function of
 * one deployment must agree, or a job enqueued by one is invisible to the others.
 *
 * One queue per project (the table's keys carry the project), made on first use and kept with
 * one shared client: a request through `/projects/acme` reaches acme's jobs, never the default
 * project's (lib/jobs/context.ts).
 */
export function awsJobSettings(config: AwsConfig): JobSettings | undefined {
  const tableName = config.RASK_WORK_QUEUE_TABLE;
  if (!tableName) return undefined;
  let client: DynamoDBClient | undefined;
  const queues = new Map<string, DynamoWorkQueue>();
  return {
    queueFor: (project) => {
      let queue = queues.get(project);
      if (!queue) {
        client ??= new DynamoDBClient({ region: config.AWS_REGION });
        queues.set(project, (queue = new DynamoWorkQueue({ client, tableName, project })));
      }
      return queue;
    },
  };
}
