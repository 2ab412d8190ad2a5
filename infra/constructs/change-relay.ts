import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { AWS_RELAY_SETTLE_MS, DEFAULT_CHANGES_RETENTION_DAYS } from '../../lib/config.js';
import type { RaskConfig } from '../config.js';
import { acknowledge, acknowledgeWildcardResource } from '../nag.js';
import type { StorageRefs } from '../state-stack.js';
import { catalogEnvironment } from './functions.js';
import { RaskFunction } from './rask-function.js';

/**
 * The change log's objects expire a day after the feed's retention (docs/events.md,
 * "Retention"): a page never reads past the retention anyway, and the extra day keeps the oldest
 * cursor the 410 names readable until it is answered.
 */
export const CHANGE_LOG_EXPIRY_DAYS = DEFAULT_CHANGES_RETENTION_DAYS + 1;

/**
 * The lifecycle rule that expires the change log under the registry prefix (`changes/`), on the
 * registry bucket of the stateful stack: expiry by rule, not by a sweep (issue #27).
 */
export function expireChangeLog(registryBucket: s3.Bucket, registryPrefix: string, days = CHANGE_LOG_EXPIRY_DAYS): void {
  registryBucket.addLifecycleRule({ id: 'ExpireChangeLog', prefix: `${registryPrefix}changes/`, expiration: Duration.days(days) });
}

/**
 * S3 Event Notifications to EventBridge on a bucket of the stateful stack (the registry bucket:
 * the change log's entries; the warehouse bucket: `_versions/` manifests), which the relay's rules
 * pick up (docs/events.md, "Delivery on AWS"). Set on the bucket's own resource
 * (`NotificationConfiguration.EventBridgeConfiguration`): CDK's `eventBridgeEnabled` would add a
 * custom-resource Lambda to write the same setting.
 */
export function notifyEventBridge(bucket: s3.Bucket): void {
  (bucket.node.defaultChild as s3.CfnBucket).addPropertyOverride('NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled', true);
}

/** The largest batch of notifications one invocation takes, and how long the queue gathers one. */
export const NOTIFICATION_BATCH = 100;
const NOTIFICATION_WINDOW = Duration.seconds(5);
/** Receives of one notification before it goes to the failure queue. */
export const NOTIFICATION_RECEIVES = 5;

export interface ChangeRelayProps {
  readonly config: RaskConfig;
  readonly storage: StorageRefs;
  /** The bus the relay publishes to (imported from the stateful stack). */
  readonly bus: events.IEventBus;
  /** Minutes between scheduled cycles, the safety net (default 5; notifications carry the rest). */
  readonly everyMinutes?: number;
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The change relay (functions/change-relay.ts; docs/events.md, "The relay"):
 *
 * - **Notifications.** Two rules on the account's default bus (where S3 sends its events) take the
 *   "Object Created" events of the change log (the registry bucket, key prefix `changes/`) and of
 *   manifests (the warehouse bucket, `…/_versions/*.manifest`) to the relay's notification queue,
 *   which holds each for the relay's settle window (a manifest's claim is appended after it) and
 *   hands them over in batches. The relay puts log entries on the bus and appends commits made
 *   straight to storage to the log. A record whose work failed is received again (up to
 *   NOTIFICATION_RECEIVES times), then moved to the notification failure queue, which alarms;
 *   an event EventBridge cannot deliver to the queue goes there too, after its retries.
 * - **The schedule**, every five minutes: the safety net (commits no notification announced, e.g.
 *   in a warehouse bucket without notifications; changes whose door died before its append). A
 *   failed cycle throws: its event goes to the failure queue and the alarm fires; the next cycle
 *   retries, and overlapping cycles are safe (the state is written with a condition, event ids
 *   are stable).
 *
 * Its role may read the registry (the log's entries also by version) and the warehouse, write only
 * the log (`changes/`) and its own state (`changes-relay/`), put events on the bus, and consume
 * its notification queue.
 */
export class ChangeRelay extends Construct {
  readonly fn: RaskFunction;
  readonly rule: events.Rule;
  readonly failures: sqs.Queue;
  readonly alarm: cloudwatch.Alarm;
  /** Where the notification rules deliver (held for the settle window, then batched to the relay). */
  readonly notifications: sqs.Queue;
  /** Notifications that failed every receive, or that EventBridge could not deliver to the queue. */
  readonly notificationFailures: sqs.Queue;
  readonly notificationRules: readonly events.Rule[];

  constructor(scope: Construct, id: string, props: ChangeRelayProps) {
    super(scope, id);
    const { config, storage } = props;
    const timeout = Duration.minutes(5);
    this.fn = new RaskFunction(this, 'Function', {
      kind: 'change-relay',
      description: 'rask change relay: change-log entries to the EventBridge bus and commits made straight to storage into the log, from S3 notifications; a scan as safety net',
      // Nothing native in the bundle (test/infra/bundle.test.ts): arm64.
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout,
      environment: { ...catalogEnvironment(config, storage), RASK_EVENT_BUS_NAME: props.bus.eventBusName, RASK_CHANGE_NOTIFICATIONS: 'true' },
      logRetentionDays: config.logRetentionDays,
      // Two notification batches at a time (the queue's least maximum concurrency) and a scheduled cycle.
      reservedConcurrency: 3,
    });
    const role = this.fn.role;
    const registry = storage.registryPrefix;
    const readAll = storage.registryBucket.arnForObjects(`${registry}*`);
    const warehouse = storage.warehouseBucket.arnForObjects(`${storage.warehousePrefix}*`);
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [readAll, warehouse] }));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [storage.registryBucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${registry}*`] } } }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [storage.warehouseBucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${storage.warehousePrefix}*`] } } }),
    );
    const log = storage.registryBucket.arnForObjects(`${registry}changes/*`);
    const state = storage.registryBucket.arnForObjects(`${registry}changes-relay/*`);
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [log, state] }));
    // A notification names the version of the log entry it reports (GetObject with VersionId).
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObjectVersion'], resources: [log] }));
    for (const [arn, why] of [
      [readAll, `The relay reads the registry (records, the change log) under the prefix "${registry}".`],
      [warehouse, `The relay lists and reads the manifests of the tables under the warehouse prefix "${storage.warehousePrefix}".`],
      [log, 'The relay appends events found in storage to the change log, under changes/ of the registry prefix.'],
      [state, 'The relay writes only its own state, under changes-relay/ of the registry prefix.'],
    ] as const) {
      acknowledgeWildcardResource(role, arn, why);
    }
    props.bus.grantPutEventsTo(role);

    this.failures = new sqs.Queue(this, 'Failures', { retentionPeriod: Duration.days(14), encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true });
    acknowledge(this.failures, 'AwsSolutions-SQS3', 'This queue is itself the failure destination of the scheduled relay; nothing consumes it automatically, so it needs no dead-letter queue.');
    this.fn.fn.configureAsyncInvoke({ onFailure: new destinations.SqsDestination(this.failures), retryAttempts: 0, maxEventAge: Duration.minutes(10) });
    const every = props.everyMinutes ?? 5;
    this.rule = new events.Rule(this, 'Schedule', {
      description: `rask change relay every ${every} minute(s)`,
      schedule: events.Schedule.rate(Duration.minutes(every)),
      targets: [new targets.LambdaFunction(this.fn.fn, { retryAttempts: 0, maxEventAge: Duration.minutes(10) })],
    });

    this.notificationFailures = new sqs.Queue(this, 'NotificationFailures', { retentionPeriod: Duration.days(14), encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true });
    acknowledge(this.notificationFailures, 'AwsSolutions-SQS3', 'This queue is itself the dead-letter queue of the relay’s notification queue and of its rules’ targets; it needs none of its own.');
    this.notifications = new sqs.Queue(this, 'Notifications', {
      // A manifest is judged once its claim (appended after it) is readable: hold every notification that long.
      deliveryDelay: Duration.millis(AWS_RELAY_SETTLE_MS),
      // AWS's advice for a Lambda-polled queue: six times the function's timeout, so throttled batches are not counted out early.
      visibilityTimeout: Duration.seconds(timeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.notificationFailures, maxReceiveCount: NOTIFICATION_RECEIVES },
    });
    this.fn.fn.addEventSource(
      new SqsEventSource(this.notifications, { batchSize: NOTIFICATION_BATCH, maxBatchingWindow: NOTIFICATION_WINDOW, reportBatchItemFailures: true, maxConcurrency: 2 }),
    );
    const objectCreated = (bucket: string, key: string[]): events.EventPattern => ({
      source: ['aws.s3'],
      detailType: ['Object Created'],
      detail: { bucket: { name: [bucket] }, object: { key } },
    });
    const toQueue = new targets.SqsQueue(this.notifications, { retryAttempts: 20, maxEventAge: Duration.hours(6), deadLetterQueue: this.notificationFailures });
    this.notificationRules = [
      new events.Rule(this, 'LogNotifications', {
        description: 'rask change relay: entries of the change log (registry bucket) to the relay',
        eventPattern: objectCreated(storage.registryBucket.bucketName, events.Match.prefix(`${registry}changes/`)),
        targets: [toQueue],
      }),
      new events.Rule(this, 'ManifestNotifications', {
        description: 'rask change relay: table manifests written to the warehouse bucket (commits, also those made straight to storage) to the relay',
        eventPattern: objectCreated(storage.warehouseBucket.bucketName, events.Match.wildcard(`${storage.warehousePrefix}*/_versions/*.manifest`)),
        targets: [toQueue],
      }),
    ];

    this.alarm = new cloudwatch.Alarm(this, 'Errors', {
      alarmDescription: 'rask change relay failed: events not yet on the bus, or tables it could not read (see its failure queue and log)',
      metric: this.fn.fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 3,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.alarmTopic) {
      this.alarm.addAlarmAction(new actions.SnsAction(props.alarmTopic));
      this.alarm.addOkAction(new actions.SnsAction(props.alarmTopic));
    }
  }
}
