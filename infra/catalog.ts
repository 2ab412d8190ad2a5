import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type Node } from 'constructs';
import { JOB_OUTCOMES, jobMetricName } from '../lib/observability/jobs-metrics.js';
import { resolveConfig, type RaskConfig } from './config.js';
import { useFeatureFlags } from './feature-flags.js';
import { type RaskCatalogState, STATE_SETTING_KEYS, type StateRefs, type StorageRefs } from './catalog-state.js';
import { CatalogApi } from './constructs/api.js';
import { AdminKeyAuth } from './constructs/auth.js';
import { ChangeEvents } from './constructs/change-events.js';
import { ChangeRelay } from './constructs/change-relay.js';
import { CatalogFunctions } from './constructs/functions.js';
import { JobTasks, jobTaskSettingsFromContext } from './constructs/job-tasks.js';
import { JobsSchedule } from './constructs/jobs-schedule.js';
import { Maintenance, maintenanceSettingsFromContext } from './constructs/maintenance.js';
import { Monitoring, raskMetric } from './constructs/monitoring.js';
import { OperationFunctions } from './constructs/operation-functions.js';
import { acknowledge } from './nag.js';

/**
 * Settings of the maintenance passes and the job task tier. Each is the `rask:<name>` context key
 * of the standalone app (infra/constructs/maintenance.ts, infra/constructs/job-tasks.ts validate
 * them, with the same messages either way).
 */
export interface RaskScheduleSettings {
  /** Minutes between maintenance passes (1 to 10080). Defaults: index 5, reconcile 15, sweep 60, orphans 1440. */
  readonly maintenanceIndexMinutes?: number;
  readonly maintenanceReconcileMinutes?: number;
  readonly maintenanceSweepMinutes?: number;
  readonly maintenanceOrphansMinutes?: number;
  /** Memory of each pass's function in MB (128 to 10240). Defaults: 512, orphans 1024. */
  readonly maintenanceIndexMemoryMb?: number;
  readonly maintenanceReconcileMemoryMb?: number;
  readonly maintenanceSweepMemoryMb?: number;
  readonly maintenanceOrphansMemoryMb?: number;
  /** Reconcile repairs drift (its role may write the registry). Default false: report only. */
  readonly maintenanceReconcileRepair?: boolean;
  /** The orphan scan deletes re-checked orphans (its role may delete warehouse objects). Default false. */
  readonly maintenanceOrphansDelete?: boolean;
  /** The job task tier on ECS Fargate (docs/deploy.md, "The job task tier"). Default false. */
  readonly jobsTaskTier?: boolean;
  /** vCPU of one task (1, 2, 4, 8 or 16; default 8). */
  readonly jobsTaskCpu?: number;
  /** Memory of one task in MB (a multiple of 1024 in Fargate's range for the cpu; default 32768). */
  readonly jobsTaskMemoryMb?: number;
  /** A task's longest run in minutes (default 480). */
  readonly jobsTaskMaxMinutes?: number;
  /** At most this many task-tier jobs at once (default 4). */
  readonly jobsTaskConcurrency?: number;
  /** Cost rows of an index build above which it goes straight to the task tier (`rask:jobsTaskIndexCostRows`). */
  readonly jobsTaskIndexCostRows?: number;
  /** Estimated bytes a backfill reads above which it goes straight to the task tier (`rask:jobsTaskBackfillBytes`). */
  readonly jobsTaskBackfillBytes?: number;
  /** Estimated bytes a sweep compacts above which it goes straight to the task tier (`rask:jobsTaskSweepBytes`). */
  readonly jobsTaskSweepBytes?: number;
}

/** The context keys of `RaskScheduleSettings`, for the standalone app (infra/rask-app.ts). */
export const SCHEDULE_SETTING_KEYS = [
  'maintenanceIndexMinutes',
  'maintenanceReconcileMinutes',
  'maintenanceSweepMinutes',
  'maintenanceOrphansMinutes',
  'maintenanceIndexMemoryMb',
  'maintenanceReconcileMemoryMb',
  'maintenanceSweepMemoryMb',
  'maintenanceOrphansMemoryMb',
  'maintenanceReconcileRepair',
  'maintenanceOrphansDelete',
  'jobsTaskTier',
  'jobsTaskCpu',
  'jobsTaskMemoryMb',
  'jobsTaskMaxMinutes',
  'jobsTaskConcurrency',
  'jobsTaskIndexCostRows',
  'jobsTaskBackfillBytes',
  'jobsTaskSweepBytes',
] as const satisfies readonly (keyof RaskScheduleSettings)[];

/** The catalog's settings of infra/config.ts: all but the state's (taken from `state`) and the stack name. */
export type RaskCatalogSettings = Partial<Omit<RaskConfig, 'stackName' | (typeof STATE_SETTING_KEYS)[number]>>;

/**
 * Props of `RaskCatalog` (docs/deploy.md, "Props"). Every setting is optional, with the defaults
 * of infra/config.ts, and validated at synth exactly as the standalone app's `rask:*` context is:
 * a bad value or a bad combination throws a `RaskConfigError` (or an `Error`) naming the setting.
 */
export interface RaskCatalogProps extends RaskCatalogSettings, RaskScheduleSettings {
  /**
   * The stateful part. In the same stack it is used directly; in another stack of the same app
   * the catalog reads its values from the SSM parameters it publishes (no CloudFormation export),
   * and this stack is made to depend on the state's.
   */
  readonly state: RaskCatalogState;
  /**
   * Names the API (`<name>-catalog`), the dashboard and the alarm topic, and the web ACL.
   * Default: the stack's name. Set it when two catalogs share a stack.
   */
  readonly name?: string;
}

/**
 * The stateless part of the rask catalog: the functions (meta, data, jobs, authorizer, and one per
 * operation in per-operation mode) with their layer and the vending role, the jobs schedule and
 * its failure queue, the maintenance passes, the change relay and the example event rule, the
 * authorizer, the API (with its web ACL and optional custom domain) and the monitoring (alarms,
 * topic, dashboard). Everything that holds data is the `RaskCatalogState`'s, so this can be
 * destroyed and recreated without touching data.
 */
export class RaskCatalog extends Construct {
  /** The URL clients connect to: `connectNamespace('rest', { uri: endpoint, … })` (the custom domain's when set). */
  readonly endpoint: string;
  readonly registryBucket: s3.IBucket;
  readonly warehouseBucket: s3.IBucket;
  /** The change-event bus (docs/events.md). */
  readonly eventBus: events.IEventBus;
  /** The bootstrap admin key's secret. */
  readonly adminKeySecret: secretsmanager.ISecret;
  /** The topic every alarm notifies (created, or `alarmTopicArn`'s). */
  readonly alarmTopic: sns.ITopic;
  /** The role whose credentials the catalog vends for table storage. */
  readonly vendingRole: iam.IRole;
  /** The metadata, data, jobs and authorizer functions. */
  readonly metaFunction: lambda.IFunction;
  readonly dataFunction: lambda.IFunction;
  readonly jobsFunction: lambda.IFunction;
  readonly authorizerFunction: lambda.IFunction;
  /** The validated settings (infra/config.ts), the state's included. */
  readonly config: RaskConfig;

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
  /** `functionMode: 'per-operation'` only. */
  readonly operations?: OperationFunctions;
  /** `jobsTaskTier` only. */
  readonly jobTasks?: JobTasks;

  constructor(scope: Construct, id: string, props: RaskCatalogProps) {
    super(scope, id);
    useFeatureFlags(this);
    const { state: stateConstruct, name, ...rest } = props;
    const settings = catalogSettings(rest);
    const stateSettings = Object.fromEntries(STATE_SETTING_KEYS.map((k) => [k, stateConstruct.config[k]]).filter(([, v]) => v !== undefined));
    const config = resolveConfig({ ...settings.config, ...stateSettings, stackName: name ?? Stack.of(this).stackName });
    this.config = config;
    // Every setting is checked before the first resource is made.
    const maintenanceSettings = maintenanceSettingsFromContext(settings.schedules);
    const jobTasks = jobTaskSettingsFromContext(settings.schedules);
    const stack = Stack.of(this);
    const stateStack = Stack.of(stateConstruct);
    if (stateStack !== stack) stack.addStackDependency(stateStack, 'the stateless stack reads the stateful stack\'s SSM parameters');

    const state = stateConstruct.refsFor(this);
    this.storage = state.storage;
    this.queue = state.queue;
    this.functions = new CatalogFunctions(this, 'Functions', { config, storage: this.storage, queue: this.queue });
    // The bus and its archive are the state's; the example subscription is code, here. Only the
    // change relay publishes (its grant is in ChangeRelay): the meta, data and jobs functions
    // append to the change log and hold no events:PutEvents (docs/events.md, "The relay").
    this.changeEvents = new ChangeEvents(this, 'ChangeEvents', { bus: state.eventBus, logRetentionDays: config.logRetentionDays, removalPolicy: config.removalPolicy });
    // The job task tier (#34), only with jobsTaskTier (docs/deploy.md, "The job task tier").
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
      settings: maintenanceSettings,
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
        jobTasks: this.jobTasks,
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
    for (const [passName, pass] of Object.entries(this.maintenance.passes)) {
      if (pass) m.addFailureQueue(`Maintenance${passName.charAt(0).toUpperCase()}${passName.slice(1)}`, pass.failures);
    }
    m.addFailureQueue('ChangeRelay', this.changeRelay.failures);
    m.addFailureQueue('ChangeRelayNotifications', this.changeRelay.notificationFailures);
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

    this.endpoint = this.api.endpoint;
    this.registryBucket = this.storage.registryBucket;
    this.warehouseBucket = this.storage.warehouseBucket;
    this.eventBus = this.changeEvents.bus;
    this.adminKeySecret = this.auth.secret;
    this.alarmTopic = this.monitoring.topic;
    this.vendingRole = this.functions.vendingRole;
    this.metaFunction = this.functions.meta.fn;
    this.dataFunction = this.functions.data.fn;
    this.jobsFunction = this.functions.jobs.fn;
    this.authorizerFunction = this.auth.authorizer.fn;
  }
}

/**
 * Splits the props into infra/config.ts settings and the schedule settings, the latter as the
 * `rask:*` context of a detached construct tree: the maintenance and job-task readers
 * (infra/constructs) validate them exactly as they validate the standalone app's context.
 */
function catalogSettings(rest: RaskCatalogSettings & RaskScheduleSettings): { config: Record<string, unknown>; schedules: Node } {
  const scheduleKeys = new Set<string>(SCHEDULE_SETTING_KEYS);
  const config: Record<string, unknown> = {};
  const root = new Construct(undefined as unknown as Construct, '');
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    if (scheduleKeys.has(key)) root.node.setContext(`rask:${key}`, value);
    else config[key] = value;
  }
  return { config, schedules: root.node };
}

/**
 * Where failed asynchronous invocations land (Lambda on-failure destination, EventBridge
 * dead-letter queue): kept 14 days, encrypted, TLS only. It is itself the dead-letter queue, so
 * it has none; an alarm fires on its first message (constructs/monitoring.ts).
 */
function failureQueue(scope: Construct, id: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  acknowledge(queue, 'AwsSolutions-SQS3', 'This queue is the failure destination (dead-letter queue) of the asynchronous functions; it needs none of its own.');
  return queue;
}
