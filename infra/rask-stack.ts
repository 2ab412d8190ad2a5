import { AspectPriority, Aspects, CfnOutput, type IAspect, Stack, type StackProps, TagManager } from 'aws-cdk-lib';
import type { Construct, IConstruct } from 'constructs';
import { RaskCatalog, type RaskCatalogSettings, type RaskScheduleSettings, SCHEDULE_SETTING_KEYS } from './catalog.js';
import { STATE_SETTING_KEYS } from './catalog-state.js';
import type { RaskConfig } from './config.js';
import type { RaskStateStack, StateRefs, StorageRefs } from './state-stack.js';

export interface RaskStackProps extends StackProps {
  readonly config: RaskConfig;
  /** The stateful stack whose buckets, table and secret this one uses. */
  readonly state: RaskStateStack;
}

/**
 * The standalone app's stateless stack: one `RaskCatalog` (infra/catalog.ts) reading the stateful
 * stack through SSM parameters, and the stack outputs. The catalog's id is `Default`, which CDK
 * leaves out of logical ids, so every resource keeps the logical id it had before the construct
 * existed. The maintenance and job-task settings come from this stack's `rask:*` context.
 */
export class RaskStack extends Stack {
  readonly catalog: RaskCatalog;
  readonly storage: StorageRefs;
  readonly queue: StateRefs['queue'];
  readonly functions: RaskCatalog['functions'];
  readonly auth: RaskCatalog['auth'];
  readonly api: RaskCatalog['api'];
  readonly monitoring: RaskCatalog['monitoring'];
  readonly jobsFailures: RaskCatalog['jobsFailures'];
  readonly jobsSchedule: RaskCatalog['jobsSchedule'];
  readonly changeEvents: RaskCatalog['changeEvents'];
  readonly maintenance: RaskCatalog['maintenance'];
  readonly changeRelay: RaskCatalog['changeRelay'];
  /** `rask:functionMode=per-operation` only. */
  readonly operations?: RaskCatalog['operations'];
  /** `rask:jobsTaskTier=on` only. */
  readonly jobTasks?: RaskCatalog['jobTasks'];

  constructor(scope: Construct, id: string, props: RaskStackProps) {
    super(scope, id, props);
    const { config } = props;
    const catalog = new RaskCatalog(this, 'Default', {
      ...catalogSettings(config),
      ...scheduleSettingsFromContext(this),
      name: config.stackName,
      state: props.state.state,
    });
    this.catalog = catalog;
    Aspects.of(catalog).add(new NameTagsWithoutDefault(this), { priority: AspectPriority.DEFAULT + 1 });
    this.storage = catalog.storage;
    this.queue = catalog.queue;
    this.functions = catalog.functions;
    this.auth = catalog.auth;
    this.api = catalog.api;
    this.monitoring = catalog.monitoring;
    this.jobsFailures = catalog.jobsFailures;
    this.jobsSchedule = catalog.jobsSchedule;
    this.changeEvents = catalog.changeEvents;
    this.maintenance = catalog.maintenance;
    this.changeRelay = catalog.changeRelay;
    this.operations = catalog.operations;
    this.jobTasks = catalog.jobTasks;

    new CfnOutput(this, 'Endpoint', {
      description: "Catalog URI for clients: connectNamespace('rest', { uri: <this>, headers: { 'x-api-key': <key> } })",
      value: catalog.endpoint,
    });
    new CfnOutput(this, 'AdminKeySecretName', {
      description: 'Secrets Manager secret holding the bootstrap admin key',
      value: catalog.adminKeySecret.secretName,
    });
    new CfnOutput(this, 'AdminKeySecretArn', { value: catalog.adminKeySecret.secretArn });
    new CfnOutput(this, 'ReadAdminKeyCommand', {
      description: 'Prints the admin key',
      value: `aws secretsmanager get-secret-value --secret-id ${catalog.adminKeySecret.secretArn} --query SecretString --output text --region ${this.region}`,
    });
    new CfnOutput(this, 'RegistryBucketName', { value: catalog.registryBucket.bucketName });
    new CfnOutput(this, 'WarehouseBucketName', { value: catalog.warehouseBucket.bucketName });
    new CfnOutput(this, 'WarehouseRoot', {
      description: 'Storage root of the default warehouse',
      value: `s3://${catalog.warehouseBucket.bucketName}/${catalog.storage.warehousePrefix}`,
    });
    new CfnOutput(this, 'EventBusName', {
      description: 'EventBridge bus with every change event (docs/events.md)',
      value: catalog.eventBus.eventBusName,
    });
    new CfnOutput(this, 'WorkQueueTableName', { value: catalog.queue.tableName });
    new CfnOutput(this, 'VendingRoleArn', { value: catalog.vendingRole.roleArn });
    new CfnOutput(this, 'JobsFunctionName', {
      description: 'Runs queued jobs now: aws lambda invoke --function-name <this> --invocation-type Event /dev/null',
      value: catalog.jobsFunction.functionName,
    });
    if (catalog.jobTasks) {
      new CfnOutput(this, 'JobTasksClusterName', {
        description: 'ECS cluster of the job task tier (scripts/post-deploy.ts measures its start latency)',
        value: catalog.jobTasks.cluster.clusterName,
      });
    }
    new CfnOutput(this, 'AlarmTopicArn', { description: 'SNS topic every alarm notifies', value: catalog.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: catalog.monitoring.dashboard.dashboardName });
  }
}

/**
 * CDK gives a VPC and its subnets (the job task tier's) a `Name` tag of their construct path, which
 * unlike the logical id includes the `Default` id: tag them with the path they had before the
 * catalog was a construct, so the template stays the same. Runs just after the tag aspects (their
 * priority is the default one).
 */
class NameTagsWithoutDefault implements IAspect {
  private readonly inside: string;
  constructor(private readonly stack: Stack) {
    this.inside = `${stack.node.path}/Default/`;
  }
  visit(node: IConstruct): void {
    const tags = TagManager.isTaggable(node) ? node.tags : TagManager.isTaggableV2(node) ? node.cdkTagManager : undefined;
    const name = tags?.tagValues().Name;
    if (name?.startsWith(this.inside)) tags?.setTag('Name', `${this.stack.node.path}/${name.slice(this.inside.length)}`, 1000);
  }
}

/** The catalog's share of the app's settings (the state's come from the state construct). */
function catalogSettings(config: RaskConfig): RaskCatalogSettings {
  const skip: readonly string[] = ['stackName', ...STATE_SETTING_KEYS];
  return Object.fromEntries(Object.entries(config).filter(([k, v]) => !skip.includes(k) && v !== undefined));
}

/**
 * The maintenance and job-task settings as given on the command line or in cdk.json; passed to
 * the catalog as they are (strings included), which validates them.
 */
function scheduleSettingsFromContext(scope: Construct): RaskScheduleSettings {
  const settings: Record<string, unknown> = {};
  for (const key of SCHEDULE_SETTING_KEYS) {
    const value = scope.node.tryGetContext(`rask:${key}`);
    if (value !== undefined && value !== null && value !== '') settings[key] = value;
  }
  return settings as RaskScheduleSettings;
}
