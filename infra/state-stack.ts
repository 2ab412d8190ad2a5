import { Stack, Token, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
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
 * schedules, alarms, the bus's example rule) reads their names and ARNs from SSM parameters this
 * stack writes (see `importState`), so it can be destroyed and redeployed without touching data
 * or the bus consumers subscribe to, and a changed value never blocks an update.
 */
export class RaskStateStack extends Stack {
  readonly storage: Storage;
  readonly queue: WorkQueue;
  readonly adminKey: AdminKeySecret;
  readonly changeEvents: ChangeEventBus;
  readonly config: RaskConfig;

  constructor(scope: Construct, id: string, props: RaskStateStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.config = config;
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

/** The SSM parameter under which the stateful stack `stateStackName` publishes `name`. */
export function stateParameterName(stateStackName: string, name: string): string {
  return `/${stateStackName}/state/${name}`;
}

/**
 * The stateful stack's resources as seen from `scope` (in the stateless stack). Each value the
 * stateless stack needs is written by the stateful stack as an SSM String parameter with a fixed
 * name (`/<state stack>/state/<Name>`) and read back here as a CloudFormation parameter resolved
 * at deploy time (`valueForStringParameter`). Unlike a CloudFormation export, an SSM parameter in
 * use can change — e.g. when `rask:warehouseBucketName` adopts an existing bucket — without
 * CloudFormation refusing the stateful stack's update, so neither stack ever has to be destroyed.
 * Values known at synth time (an adopted bucket's name) are used directly.
 *
 * With `rask:legacyExports` the stateful stack also keeps the named exports an older deployment
 * imports (`<state stack>-RegistryBucketArn`, …), for the one deploy that moves the stateless
 * stack off them.
 */
export function importState(scope: Construct, state: RaskStateStack): StateRefs {
  const published = new Construct(state, 'StateParameters');
  const exported = (name: string, value: string): string => {
    if (!Token.isUnresolved(value)) return value;
    if (state.config.legacyExports) state.exportValue(value, { name: `${state.stackName}-${name}` });
    const parameterName = stateParameterName(state.stackName, name);
    new ssm.StringParameter(published, name, { parameterName, stringValue: value, description: `rask: ${name} of ${state.stackName}, read by the stateless stack at deploy time` });
    return ssm.StringParameter.valueForStringParameter(scope, parameterName);
  };
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
