import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { JOB_OUTCOMES, jobMetricName } from '../lib/observability/jobs-metrics.js';
import type { Construct } from 'constructs';
import type { RaskConfig } from './config.js';
import { CatalogApi } from './constructs/api.js';
import { ChangeEvents } from './constructs/change-events.js';
import { ChangeRelay } from './constructs/change-relay.js';
import { AdminKeyAuth } from './constructs/auth.js';
import { CatalogFunctions } from './constructs/functions.js';
import { JobsSchedule } from './constructs/jobs-schedule.js';
import { JobTasks, jobTaskSettingsFromContext } from './constructs/job-tasks.js';
import { Maintenance, maintenanceSettingsFromContext } from './constructs/maintenance.js';
import { Monitoring, raskMetric } from './constructs/monitoring.js';
import { OperationFunctions } from './constructs/operation-functions.js';
import { acknowledge } from './nag.js';
import { importState, type RaskStateStack, type StateRefs, type StorageRefs } from './state-stack.js';

export interface RaskStackProps extends StackProps {
  readonly config: RaskConfig;
  /** The stateful stack whose buckets, table and secret this one uses. */
  readonly state: RaskStateStack;
}

/**
 * The stateless half of the catalog: the four functions (meta, data, jobs, authorizer) with
 * their layer and the vending role, the jobs schedule and its failure queue, the authorizer,
 * the API and the monitoring. Everything that holds data is in the stateful stack
 * (state-stack.ts) and reaches this one through SSM parameters (no exports), so this stack can be
 * destroyed and redeployed without touching data. `storage`, `queue` and `auth.secret` are the
 * stateful stack's constructs.
 */
export class RaskStack extends Stack {
  readonly storage: StorageRefs;
  readonly queue: StateRefs['queue'];
  readonly functions: CatalogFunctions;
  readonly auth: AdminKeyAuth;
  readonly api: CatalogApi;
  readonly monitoring: Monitoring;
  readonly jobsFailures: sqs.Queue;
  readonly jobsSchedule: JobsSchedule;
  readonly changeEvents: ChangeEvents;
  readonly maintenance: Maintenance;
  readonly changeRelay: ChangeRelay;
  /** `rask:functionMode=per-operation` only. */
  readonly operations?: OperationFunctions;
  /** `rask:jobsTaskTier=on` only. */
  readonly jobTasks?: JobTasks;

  constructor(scope: Construct, id: string, props: RaskStackProps) {
    super(scope, id, props);
    const { config } = props;

    const state = importState(this, props.state);
    this.storage = state.storage;
    this.queue = state.queue;
    this.functions = new CatalogFunctions(this, 'Functions', { config, storage: this.storage, queue: this.queue });
    // The bus and its archive are the stateful stack's; the example subscription is code, here.
    // Only the change relay publishes (its grant is in ChangeRelay): the meta, data and jobs
    // functions append to the change log and hold no events:PutEvents (docs/events.md, "The relay").
    this.changeEvents = new ChangeEvents(this, 'ChangeEvents', { bus: state.eventBus, logRetentionDays: config.logRetentionDays, removalPolicy: config.removalPolicy });
    // The job task tier (#34), only with -c rask:jobsTaskTier=on (docs/deploy.md, "The job task tier").
    const jobTasks = jobTaskSettingsFromContext(this.node);
    if (jobTasks) this.jobTasks = new JobTasks(this, 'JobTasks', { settings: jobTasks, jobs: this.functions.jobs, cancellers: [this.functions.meta, this.functions.data], logRetentionDays: config.logRetentionDays, removalPolicy: config.removalPolicy });
    this.jobsFailures = failureQueue(this, 'JobsFailures');
    this.jobsSchedule = new JobsSchedule(this, 'JobsSchedule', { fn: this.functions.jobs.fn, failures: this.jobsFailures });
    this.monitoring = new Monitoring(this, 'Alarms', {
      stackName: config.stackName,
      topicArn: config.alarmTopicArn,
      alarmEmail: config.alarmEmail,
    });
    // Each maintenance pass alarms on its own errors (an incomplete pass throws), to the same topic.
    this.maintenance = new Maintenance(this, 'Maintenance', {
      config,
      storage: this.storage,
      queue: this.queue,
      settings: maintenanceSettingsFromContext(this.node),
      alarmTopic: this.monitoring.topic,
    });
    // The passes that queue per-table jobs route them like the API does (a sticky task-tier table stays there).
    this.jobTasks?.routeJobsOf(Object.values(this.maintenance.passes).flatMap((p) => (p ? [p.fn] : [])));
    this.changeRelay = new ChangeRelay(this, 'ChangeRelay', { config, storage: this.storage, bus: state.eventBus, alarmTopic: this.monitoring.topic });
    this.auth = new AdminKeyAuth(this, 'Auth', {
      config,
      secret: state.adminKey,
      registry: { bucket: this.storage.registryBucket, prefix: this.storage.registryPrefix },
    });
    if (config.functionMode === 'per-operation') {
      this.operations = new OperationFunctions(this, 'Operations', {
        config,
        storage: this.storage,
        queue: this.queue,
        layer: this.functions.layer,
        dataFunction: this.functions.data.fn,
      });
    }
    this.api = new CatalogApi(this, 'Api', {
      config,
      handlers: { meta: this.functions.meta.fn, data: this.functions.data.fn },
      operationHandlers: this.operations && new Map([...this.operations.functions].map(([id, f]) => [id, f.fn])),
      authorizer: this.auth.authorizer.fn,
    });
    const m = this.monitoring;
    m.addApi(this.api.api);
    m.addFunction('Meta', this.functions.meta.fn, { timeout: Duration.seconds(25) });
    m.addFunction('Data', this.functions.data.fn, { timeout: Duration.seconds(28) });
    m.addFunction('Jobs', this.functions.jobs.fn, { timeout: Duration.minutes(15) });
    m.addFunction('Authorizer', this.auth.authorizer.fn, { p99Ms: 2000 });
    m.addAlarm('AuthorizerDenials', {
      description: 'rask authorizer denied 100 or more requests in 5 minutes (a leaked or guessed key, or clients with a rotated-out key)',
      metric: raskMetric('authorizer', 'AuthorizerDenied'),
      threshold: 100,
    });
    m.addAlarm('JobsFailed', {
      description: 'rask jobs: a queued job (index build, backfill, purge) ended Failed after its attempts',
      metric: raskMetric('jobs', 'JobsFailed'),
      threshold: 1,
    });
    m.addFailureQueue('Jobs', this.jobsFailures);
    // A scheduled pass whose invocation failed for good lands in its own queue: alarm on it too.
    for (const [name, pass] of Object.entries(this.maintenance.passes)) {
      if (pass) m.addFailureQueue(`Maintenance${name.charAt(0).toUpperCase()}${name.slice(1)}`, pass.failures);
    }
    m.addFailureQueue('ChangeRelay', this.changeRelay.failures);
    m.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Jobs: outcomes per 5 minutes',
        left: JOB_OUTCOMES.map((o) => raskMetric('jobs', jobMetricName(o))),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Authorizer: allowed / denied',
        left: [raskMetric('authorizer', 'AuthorizerAllowed'), raskMetric('authorizer', 'AuthorizerDenied')],
        width: 12,
      }),
    );

    new CfnOutput(this, 'Endpoint', {
      description: "Catalog URI for clients: connectNamespace('rest', { uri: <this>, headers: { 'x-api-key': <key> } })",
      value: this.api.endpoint,
    });
    new CfnOutput(this, 'AdminKeySecretName', {
      description: 'Secrets Manager secret holding the bootstrap admin key',
      value: this.auth.secret.secretName,
    });
    new CfnOutput(this, 'AdminKeySecretArn', { value: this.auth.secret.secretArn });
    new CfnOutput(this, 'ReadAdminKeyCommand', {
      description: 'Prints the admin key',
      value: `aws secretsmanager get-secret-value --secret-id ${this.auth.secret.secretArn} --query SecretString --output text --region ${this.region}`,
    });
    new CfnOutput(this, 'RegistryBucketName', { value: this.storage.registryBucket.bucketName });
    new CfnOutput(this, 'WarehouseBucketName', { value: this.storage.warehouseBucket.bucketName });
    new CfnOutput(this, 'WarehouseRoot', {
      description: 'Storage root of the default warehouse',
      value: `s3://${this.storage.warehouseBucket.bucketName}/${this.storage.warehousePrefix}`,
    });
    new CfnOutput(this, 'EventBusName', {
      description: 'EventBridge bus with every change event (docs/events.md)',
      value: this.changeEvents.bus.eventBusName,
    });
    new CfnOutput(this, 'WorkQueueTableName', { value: this.queue.tableName });
    new CfnOutput(this, 'VendingRoleArn', { value: this.functions.vendingRole.roleArn });
    new CfnOutput(this, 'JobsFunctionName', {
      description: 'Runs queued jobs now: aws lambda invoke --function-name <this> --invocation-type Event /dev/null',
      value: this.functions.jobs.fn.functionName,
    });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'SNS topic every alarm notifies', value: this.monitoring.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboard.dashboardName });
  }
}

/**
 * Where failed asynchronous invocations land (Lambda on-failure destination, EventBridge
 * dead-letter queue): kept 14 days, encrypted, TLS only. It is itself the dead-letter queue, so
 * it has none; an alarm fires on its first message (constructs/monitoring.ts).
 */
function failureQueue(scope: Stack, id: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  acknowledge(queue, 'AwsSolutions-SQS3', 'This queue is the failure destination (dead-letter queue) of the asynchronous functions; it needs none of its own.');
  return queue;
}
