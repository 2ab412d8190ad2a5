import { Stack, Token, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { RaskConfig } from './config.js';
import { AdminKeySecret } from './constructs/auth.js';
import { ChangeEventBus } from './constructs/change-events.js';
import { expireChangeLog } from './constructs/change-relay.js';
import { WorkQueue } from './constructs/queue.js';
import { Storage } from './constructs/storage.js';
import { RegistryBackup } from './constructs/registry-backup.js';

export interface RaskStateStackProps extends StackProps {
  readonly config: RaskConfig;
}

/**
 * Everything that holds state, and nothing else: the registry, warehouse and access-log buckets,
 * the work-queue table, the admin key secret and the change-event bus with its archive, all with
 * `rask:removalPolicy` (RETAIN by default). The stateless stack (rask-stack.ts: functions, API,
 * schedules, alarms, the bus's example rule) references them through CloudFormation exports, so
 * it can be destroyed and redeployed without touching data or the bus consumers subscribe to.
 */
export class RaskStateStack extends Stack {
  readonly storage: Storage;
  readonly queue: WorkQueue;
  readonly adminKey: AdminKeySecret;
  readonly changeEvents: ChangeEventBus;

  constructor(scope: Construct, id: string, props: RaskStateStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.storage = new Storage(this, 'Storage', { config });
    if (config.registryReplicaBucketArn) {
      new RegistryBackup(this, 'RegistryBackup', { registryBucket: this.storage.registryBucket, registryPrefix: config.registryPrefix, replicaBucketArn: config.registryReplicaBucketArn });
    }
    expireChangeLog(this.storage.registryBucket, this.storage.registryPrefix);
    this.queue = new WorkQueue(this, 'WorkQueue', { removalPolicy: config.removalPolicy });
    // Same construct path as before the split ("Auth/AdminKey"), so the logical id is unchanged.
    this.adminKey = new AdminKeySecret(this, 'Auth', { removalPolicy: config.removalPolicy });
    this.changeEvents = new ChangeEventBus(this, 'ChangeEvents', { logRetentionDays: config.logRetentionDays, removalPolicy: config.removalPolicy });
  }
}

/** What the stateless stack uses of the stateful one: references through named exports. */
export interface StorageRefs {
  readonly registryBucket: s3.IBucket;
  readonly registryPrefix: string;
  readonly warehouseBucket: s3.IBucket;
  readonly warehousePrefix: string;
  /** An explicit Deny of the registry bucket, for the vending roles' policies. */
  registryDenial(): iam.PolicyStatement;
}

export interface StateRefs {
  readonly storage: StorageRefs;
  readonly queue: { readonly table: dynamodb.ITableV2; readonly tableName: string };
  readonly adminKey: secretsmanager.ISecret;
  readonly eventBus: events.IEventBus;
}

/**
 * The stateful stack's resources as seen from `scope` (in the stateless stack), imported by
 * **named** exports (`<state stack>-RegistryBucketArn`, …). Named exports keep their names when
 * the stateful stack changes, so a later deploy never trips over a renamed automatic export,
 * and the names are what IAM resources and cdk-nag findings show.
 */
export function importState(scope: Construct, state: RaskStateStack): StateRefs {
  const exported = (name: string, value: string): string =>
    Token.isUnresolved(value) ? state.exportValue(value, { name: `${state.stackName}-${name}` }) : value;
  const bucket = (id: string, b: s3.IBucket) =>
    s3.Bucket.fromBucketAttributes(scope, id, {
      bucketArn: exported(`${id}Arn`, b.bucketArn),
      bucketName: exported(`${id}Name`, b.bucketName),
    });
  const registryBucket = bucket('RegistryBucket', state.storage.registryBucket);
  const warehouseBucket = bucket('WarehouseBucket', state.storage.warehouseBucket);
  // CDK takes the ARN or the name, not both; the name travels separately for the environment.
  const table = dynamodb.TableV2.fromTableAttributes(scope, 'WorkQueueTable', {
    tableArn: exported('WorkQueueTableArn', state.queue.table.tableArn),
  });
  const tableName = exported('WorkQueueTableName', state.queue.table.tableName);
  const adminKey = secretsmanager.Secret.fromSecretCompleteArn(scope, 'AdminKeySecret', exported('AdminKeySecretArn', state.adminKey.secret.secretArn));
  const eventBus = events.EventBus.fromEventBusAttributes(scope, 'ChangeEventBus', {
    eventBusArn: exported('EventBusArn', state.changeEvents.bus.eventBusArn),
    eventBusName: exported('EventBusName', state.changeEvents.bus.eventBusName),
    // Only used by CDK for bus policies, which the stateless stack does not add.
    eventBusPolicy: '',
  });
  return {
    storage: {
      registryBucket,
      registryPrefix: state.storage.registryPrefix,
      warehouseBucket,
      warehousePrefix: state.storage.warehousePrefix,
      registryDenial: () =>
        new iam.PolicyStatement({
          sid: 'DenyRegistry',
          effect: iam.Effect.DENY,
          actions: ['s3:*'],
          resources: [registryBucket.bucketArn, registryBucket.arnForObjects('*')],
        }),
    },
    queue: { table, tableName },
    adminKey,
    eventBus,
  };
}
