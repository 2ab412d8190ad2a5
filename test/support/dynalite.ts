import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { WORK_QUEUE_SCHEMA } from '../../infra/constructs/queue.js';

export interface Dynalite {
  readonly client: DynamoDBClient;
  /** A fresh, empty table shaped like the stack's work queue (infra/constructs/queue.ts). */
  newQueueTable(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * DynamoDB served in-process by dynalite (a DynamoDB implementation on LevelDB) on a free
 * local port: real conditional writes, queries and secondary indexes, over real HTTP.
 */
export async function startDynalite(): Promise<Dynalite> {
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const a = WORK_QUEUE_SCHEMA;
  return {
    client,
    async newQueueTable() {
      const name = `queue-${randomBytes(6).toString('hex')}`;
      await client.send(
        new CreateTableCommand({
          TableName: name,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [a.partitionKey, a.sortKey, a.index.partitionKey, a.index.sortKey].map((n) => ({
            AttributeName: n,
            AttributeType: 'S',
          })),
          KeySchema: [
            { AttributeName: a.partitionKey, KeyType: 'HASH' },
            { AttributeName: a.sortKey, KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: [
            {
              IndexName: a.index.name,
              KeySchema: [
                { AttributeName: a.index.partitionKey, KeyType: 'HASH' },
                { AttributeName: a.index.sortKey, KeyType: 'RANGE' },
              ],
              // The stack's index projects everything (CDK's default): a claim reads the job from the index.
              Projection: { ProjectionType: 'ALL' },
            },
          ],
        }),
      );
      // dynalite answers CreateTable with the table still CREATING and flips it to ACTIVE on a
      // timer; a write that arrives first (a busy machine) gets ResourceNotFoundException.
      await waitUntilTableExists({ client, minDelay: 0.01, maxDelay: 0.05, maxWaitTime: 10 }, { TableName: name });
      return name;
    },
    async stop() {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
