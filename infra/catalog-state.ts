import { Stack, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { RaskConfigError, resolveConfig, type RaskConfig } from './config.js';
import { useFeatureFlags } from './feature-flags.js';
import { AdminKeySecret } from './constructs/auth.js';
import { ChangeEventBus } from './constructs/change-events.js';
import { expireChangeLog, notifyEventBridge } from './constructs/change-relay.js';
import { WorkQueue } from './constructs/queue.js';
import { RegistryBackup } from './constructs/registry-backup.js';
import { Storage } from './constructs/storage.js';

/**
 * The settings (infra/config.ts, `rask:*` context) that belong to the stateful part. `RaskCatalog`
 * takes them from its state, so the two never disagree about prefixes or the trash grace.
 * `removalPolicy` and `logRetentionDays` apply to both parts and are set on each.
 */
export const STATE_SETTING_KEYS = [
  'warehouseBucketName',
  'warehousePrefix',
  'registryPrefix',
  'warehouseVersioning',
  'trashGraceDays',
  'registryNoncurrentDays',
  'registryReplicaBucketArn',
  'legacyExports',
] as const satisfies readonly (keyof RaskConfig)[];

/** Settings both parts take, each for its own resources. */
export const SHARED_SETTING_KEYS = ['removalPolicy', 'logRetentionDays'] as const satisfies readonly (keyof RaskConfig)[];

export type RaskStateSettings = Pick<RaskConfig, (typeof STATE_SETTING_KEYS)[number] | (typeof SHARED_SETTING_KEYS)[number]>;

/**
 * Props of `RaskCatalogState`; every one optional, with the defaults of infra/config.ts
 * (docs/deploy.md, "Props"). Validated at synth like `rask:*` context: a bad value throws a
 * `RaskConfigError` naming the setting.
 */
export interface RaskCatalogStateProps extends Partial<RaskStateSettings> {
  /**
   * Path prefix of the SSM parameters the state publishes for a `RaskCatalog` in another stack
   * (`<prefix>/RegistryBucketArn`, …). Default `/<this stack's name>/state`.
   */
  readonly parameterPrefix?: string;
}

/** What the stateless part uses of the stateful one. */
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

/** The SSM parameter under which the stateful stack `stateStackName` publishes `name` (the default prefix). */
export function stateParameterName(stateStackName: string, name: string): string {
  return `${defaultParameterPrefix(stateStackName)}/${name}`;
}

const defaultParameterPrefix = (stackName: string) => `/${stackName}/state`;

/**
 * Everything of rask that holds state, and nothing else: the registry, warehouse and access-log
 * buckets, the work-queue table, the admin key secret and the change-event bus with its archive,
 * all with `removalPolicy` (RETAIN by default). A `RaskCatalog` (infra/catalog.ts: functions, API,
 * schedules, alarms) uses it directly when both are in one stack; from another stack it reads
 * the names and ARNs from SSM parameters this construct writes (`refsFor`), so the stateless
 * stack can be destroyed and redeployed without touching data, and a changed value never blocks
 * an update (an export in use would).
 */
export class RaskCatalogState extends Construct {
  readonly storage: Storage;
  readonly queue: WorkQueue;
  readonly adminKey: AdminKeySecret;
  readonly changeEvents: ChangeEventBus;
  /** The registry bucket (always created here). */
  readonly registryBucket: s3.Bucket;
  /** The default warehouse's bucket: created here, or the adopted `warehouseBucketName`. */
  readonly warehouseBucket: s3.IBucket;
  /** The EventBridge bus every change event goes to (docs/events.md). */
  readonly eventBus: events.EventBus;
  /** The Secrets Manager secret holding the bootstrap admin key. */
  readonly adminKeySecret: secretsmanager.Secret;
  /** The work-queue table. */
  readonly workQueueTable: dynamodb.TableV2;
  /** Where the SSM parameters for a catalog in another stack go. */
  readonly parameterPrefix: string;
  /** The validated settings (infra/config.ts); only the state's keys and the shared ones are read. */
  readonly config: RaskConfig;
  private published?: Construct;

  constructor(scope: Construct, id: string, props: RaskCatalogStateProps = {}) {
    super(scope, id);
    useFeatureFlags(this);
    const { parameterPrefix, ...settings } = props;
    const config = resolveConfig(settings);
    this.config = config;
    if (parameterPrefix !== undefined && !/^\/[A-Za-z0-9_.\-/]*[A-Za-z0-9_.-]$/.test(parameterPrefix)) {
      throw new RaskConfigError(`parameterPrefix must be an SSM parameter path such as "/rask/state" (leading "/", no trailing "/"); got ${JSON.stringify(parameterPrefix)}`);
    }
    this.parameterPrefix = parameterPrefix ?? defaultParameterPrefix(Stack.of(this).stackName);
    this.storage = new Storage(this, 'Storage', { config });
    if (config.registryReplicaBucketArn) {
      new RegistryBackup(this, 'RegistryBackup', { registryBucket: this.storage.registryBucket, registryPrefix: config.registryPrefix, replicaBucketArn: config.registryReplicaBucketArn });
    }
    expireChangeLog(this.storage.registryBucket, this.storage.registryPrefix);
    // The change relay's notifications (infra/constructs/change-relay.ts). A warehouse bucket the
    // stack does not own (rask:warehouseBucketName) gets them only if its owner enables them; the
    // relay's scan finds its commits either way.
    notifyEventBridge(this.storage.registryBucket);
    if (this.storage.ownedWarehouseBucket) notifyEventBridge(this.storage.ownedWarehouseBucket);
    this.queue = new WorkQueue(this, 'WorkQueue', { removalPolicy: config.removalPolicy });
    // Construct id "Auth" (path "Auth/AdminKey") as before the split into two stacks, so the logical id is unchanged.
    this.adminKey = new AdminKeySecret(this, 'Auth', { removalPolicy: config.removalPolicy });
    this.changeEvents = new ChangeEventBus(this, 'ChangeEvents', { logRetentionDays: config.logRetentionDays, removalPolicy: config.removalPolicy });
    this.registryBucket = this.storage.registryBucket;
    this.warehouseBucket = this.storage.warehouseBucket;
    this.eventBus = this.changeEvents.bus;
    this.adminKeySecret = this.adminKey.secret;
    this.workQueueTable = this.queue.table;
  }

  /**
   * The state as seen from `scope`. In this construct's own stack: the resources themselves. In
   * another stack: each value is written here as an SSM String parameter with a fixed name
   * (`<parameterPrefix>/<Name>`) and read back in `scope`'s stack as a CloudFormation parameter
   * resolved at deploy time (`valueForStringParameter`). Unlike a CloudFormation export, an SSM
   * parameter in use can change — e.g. when `warehouseBucketName` adopts an existing bucket —
   * without CloudFormation refusing the stateful stack's update. Values known at synth time (an
   * adopted bucket's name) are used directly.
   *
   * With `legacyExports` the stateful stack also keeps the named exports an older deployment
   * imports (`<state stack>-RegistryBucketArn`, …), for the one deploy that moves the stateless
   * stack off them.
   */
  refsFor(scope: Construct): StateRefs {
    if (Stack.of(scope) === Stack.of(this)) {
      return refs(this.storage.registryBucket, this.storage.warehouseBucket, this.queue.table, this.queue.table.tableName, this.adminKey.secret, this.changeEvents.bus, this.config);
    }
    const state = Stack.of(this);
    this.published ??= new Construct(this, 'StateParameters');
    const published = this.published;
    const exported = (name: string, value: string): string => {
      if (!Token.isUnresolved(value)) return value;
      if (this.config.legacyExports) state.exportValue(value, { name: `${state.stackName}-${name}` });
      const parameterName = `${this.parameterPrefix}/${name}`;
      if (!published.node.tryFindChild(name)) {
        new ssm.StringParameter(published, name, { parameterName, stringValue: value, description: `rask: ${name} of ${state.stackName}, read by the stateless stack at deploy time` });
      }
      return ssm.StringParameter.valueForStringParameter(scope, parameterName);
    };
    const bucket = (id: string, b: s3.IBucket) =>
      s3.Bucket.fromBucketAttributes(scope, id, {
        bucketArn: exported(`${id}Arn`, b.bucketArn),
        bucketName: exported(`${id}Name`, b.bucketName),
      });
    const registryBucket = bucket('RegistryBucket', this.storage.registryBucket);
    const warehouseBucket = bucket('WarehouseBucket', this.storage.warehouseBucket);
    // CDK takes the ARN or the name, not both; the name travels separately for the environment.
    const table = dynamodb.TableV2.fromTableAttributes(scope, 'WorkQueueTable', {
      tableArn: exported('WorkQueueTableArn', this.queue.table.tableArn),
    });
    const tableName = exported('WorkQueueTableName', this.queue.table.tableName);
    const adminKey = secretsmanager.Secret.fromSecretCompleteArn(scope, 'AdminKeySecret', exported('AdminKeySecretArn', this.adminKey.secret.secretArn));
    const eventBus = events.EventBus.fromEventBusAttributes(scope, 'ChangeEventBus', {
      eventBusArn: exported('EventBusArn', this.changeEvents.bus.eventBusArn),
      eventBusName: exported('EventBusName', this.changeEvents.bus.eventBusName),
      // Only used by CDK for bus policies, which the stateless part does not add.
      eventBusPolicy: '',
    });
    return refs(registryBucket, warehouseBucket, table, tableName, adminKey, eventBus, this.config);
  }
}

function refs(
  registryBucket: s3.IBucket,
  warehouseBucket: s3.IBucket,
  table: dynamodb.ITableV2,
  tableName: string,
  adminKey: secretsmanager.ISecret,
  eventBus: events.IEventBus,
  config: Pick<RaskConfig, 'registryPrefix' | 'warehousePrefix'>,
): StateRefs {
  return {
    storage: {
      registryBucket,
      registryPrefix: config.registryPrefix,
      warehouseBucket,
      warehousePrefix: config.warehousePrefix,
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
