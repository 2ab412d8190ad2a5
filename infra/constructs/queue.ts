import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';

export interface WorkQueueProps {
  readonly removalPolicy: RemovalPolicy;
}

/** Attribute names of the work-queue table (shared with the queue adapter through env vars and docs). */
export const WORK_QUEUE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB deletes expired items eventually (within days), so readers still filter. */
  ttl: 'ttl',
  /** A generic index (e.g. status -> not-before time) so the queue can find due tasks without a scan. */
  index: { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  /** Partition keys of the shared rate buckets (lib/adapters/aws/dynamo-rate-buckets.ts); IAM confines read-only functions to them. */
  rateBucketPrefix: 'rate/',
} as const;

/**
 * The table for the work queue's DynamoDB adapter (lib/ports/work-queue.ts). Queued jobs are
 * registry records today (lib/queue/store.ts); this table is where they move when the live set
 * outgrows one LIST per claim: leases, heartbeats and not-before times are conditional writes on
 * single items, which DynamoDB does well. Generic key names keep the table stable while the
 * queue's item shapes evolve.
 */
export class WorkQueue extends Construct {
  readonly table: dynamodb.TableV2;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    const s = WORK_QUEUE_SCHEMA;
    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: { name: s.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: s.sortKey, type: dynamodb.AttributeType.STRING },
      // Queue traffic is bursty and mostly idle: on-demand costs nothing at rest.
      billing: dynamodb.Billing.onDemand(),
      timeToLiveAttribute: s.ttl,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // SSE with an AWS owned key is DynamoDB's default; a customer key adds cost and a key policy to manage.
      encryption: dynamodb.TableEncryptionV2.dynamoOwnedKey(),
      globalSecondaryIndexes: [
        {
          indexName: s.index.name,
          partitionKey: { name: s.index.partitionKey, type: dynamodb.AttributeType.STRING },
          sortKey: { name: s.index.sortKey, type: dynamodb.AttributeType.STRING },
        },
      ],
      removalPolicy: props.removalPolicy,
      deletionProtection: props.removalPolicy === RemovalPolicy.RETAIN,
    });
  }
}
