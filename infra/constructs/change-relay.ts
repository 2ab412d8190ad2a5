import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_CHANGES_RETENTION_DAYS } from '../../lib/config.js';
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

export interface ChangeRelayProps {
  readonly config: RaskConfig;
  readonly storage: StorageRefs;
  /** The bus the relay publishes to (imported from the stateful stack). */
  readonly bus: events.IEventBus;
  /** Minutes between cycles (default 1). */
  readonly everyMinutes?: number;
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The change relay (functions/change-relay.ts; docs/events.md, "The relay"): every minute it takes
 * the change log in the registry bucket to the EventBridge bus and turns commits made straight to
 * the warehouse's `_versions/` into events in the log. Its role may read the registry and the
 * warehouse, write only the log (`changes/`) and its own state (`changes-relay/`), and put
 * events on the bus. A failed cycle (events the bus refused, a table it could not read) throws:
 * its event goes to the failure queue and the alarm fires; the next minute's cycle retries, and
 * overlapping cycles are safe (the state is written with a condition, event ids are stable).
 */
export class ChangeRelay extends Construct {
  readonly fn: RaskFunction;
  readonly rule: events.Rule;
  readonly failures: sqs.Queue;
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: ChangeRelayProps) {
    super(scope, id);
    const { config, storage } = props;
    this.fn = new RaskFunction(this, 'Function', {
      kind: 'change-relay',
      description: 'rask change relay: the change log to the EventBridge bus; commits made straight to storage into the log',
      // Nothing native in the bundle (test/infra/bundle.test.ts): arm64.
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.minutes(5),
      environment: { ...catalogEnvironment(config, storage), RASK_EVENT_BUS_NAME: props.bus.eventBusName },
      logRetentionDays: config.logRetentionDays,
      // One cycle at a time is enough: each takes what the previous one left.
      reservedConcurrency: 1,
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
    const every = props.everyMinutes ?? 1;
    this.rule = new events.Rule(this, 'Schedule', {
      description: `rask change relay every ${every} minute(s)`,
      schedule: events.Schedule.rate(Duration.minutes(every)),
      targets: [new targets.LambdaFunction(this.fn.fn, { retryAttempts: 0, maxEventAge: Duration.minutes(10) })],
    });
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
