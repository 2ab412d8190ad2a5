import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** The EMF namespace the functions write (lib/observability/lambda.ts). */
export const METRICS_NAMESPACE = 'rask';
const PERIOD = Duration.minutes(5);

export interface MonitoringProps {
  readonly stackName: string;
  /** Use this topic instead of creating one. */
  readonly topicArn?: string;
  /** Subscribe this address to the (created) topic. */
  readonly alarmEmail?: string;
}

export interface AlarmSpec {
  readonly description: string;
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
  readonly comparison?: cloudwatch.ComparisonOperator;
  /** Consecutive 5-minute periods that must breach (default 1). */
  readonly evaluationPeriods?: number;
}

export interface FunctionMonitoring {
  /** Alarm when p99 duration exceeds this (default: 80 % of the function's timeout). */
  readonly p99Ms?: number;
}

/** A custom metric the functions publish as EMF, by name and `service` dimension. */
export function raskMetric(service: string, metricName: string, statistic = 'Sum'): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service }, statistic, period: PERIOD });
}

/**
 * Alarms that reach someone, and one dashboard. Every alarm notifies the SNS topic (created here
 * with an optional e-mail subscription, or an existing one) on ALARM and on OK. Other constructs
 * register what they run: `addFunction` (errors, throttles, p99 duration), `addApi` (5xx, 4xx
 * rate), `addAlarm` for anything else (authorizer denials, job and maintenance failures, a
 * failure queue's depth) and `addWidgets` for the dashboard. Missing data is never an alarm:
 * an idle catalog is healthy.
 */
export class Monitoring extends Construct {
  readonly topic: sns.ITopic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly #action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    if (props.topicArn) {
      // Its policy is its owner's: it must let cloudwatch.amazonaws.com publish (docs/deploy.md, "Alarms").
      this.topic = sns.Topic.fromTopicArn(this, 'Topic', props.topicArn);
    } else {
      const topic = new sns.Topic(this, 'Topic', { displayName: `${props.stackName} alarms`, enforceSSL: true });
      allowAlarmsToPublish(topic);
      if (props.alarmEmail) topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
      else {
        // Synth succeeds (a first deploy may add the recipient later) but says so: every alarm
        // would otherwise fire into a topic nobody reads.
        Annotations.of(this).addWarningV2(
          'rask:alarms-unrouted',
          'No alarm recipient: set -c rask:alarmEmail=<address> (or -c rask:alarmTopicArn=<existing topic>) or subscribe someone to the AlarmTopicArn output; until then alarms notify nobody.',
        );
      }
      this.topic = topic;
    }
    this.#action = new actions.SnsAction(this.topic);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: `${props.stackName}-catalog` });
  }

  addAlarm(id: string, spec: AlarmSpec): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, {
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      evaluationPeriods: spec.evaluationPeriods ?? 1,
      comparisonOperator: spec.comparison ?? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.#action);
    alarm.addOkAction(this.#action);
    this.alarms.push(alarm);
    return alarm;
  }

  /** Errors, throttles and p99 duration of one function, with a dashboard row. */
  addFunction(name: string, fn: lambda.IFunction, options: FunctionMonitoring & { timeout?: Duration } = {}): void {
    const p99Ms = options.p99Ms ?? Math.round((options.timeout ?? Duration.seconds(25)).toMilliseconds() * 0.8);
    const errors = fn.metricErrors({ period: PERIOD, statistic: 'Sum' });
    const throttles = fn.metricThrottles({ period: PERIOD, statistic: 'Sum' });
    const p99 = fn.metricDuration({ period: PERIOD, statistic: 'p99' });
    this.addAlarm(`${name}Errors`, { description: `rask ${name} function errors`, metric: errors, threshold: 1 });
    this.addAlarm(`${name}Throttles`, { description: `rask ${name} function throttled`, metric: throttles, threshold: 1 });
    this.addAlarm(`${name}P99Duration`, {
      description: `rask ${name} function p99 duration above ${p99Ms} ms for 15 minutes`,
      metric: p99,
      threshold: p99Ms,
      comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
    });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: `${name}: duration p50 / p99`, left: [fn.metricDuration({ period: PERIOD, statistic: 'p50' }), p99], width: 12 }),
      new cloudwatch.GraphWidget({ title: `${name}: invocations, errors, throttles`, left: [fn.metricInvocations({ period: PERIOD }), errors, throttles], width: 12 }),
    );
  }

  /** API 5xx (any), 4xx rate (a quarter of requests for 15 minutes) and the per-operation panels. */
  addApi(api: apigw.RestApiBase): void {
    const requests = api.metricCount({ period: PERIOD, statistic: 'Sum' });
    const server = api.metricServerError({ period: PERIOD, statistic: 'Sum' });
    const client = api.metricClientError({ period: PERIOD, statistic: 'Sum' });
    this.addAlarm('Api5xx', { description: 'rask API answered 5xx', metric: server, threshold: 1 });
    this.addAlarm('Api4xxRate', {
      description: 'rask API: more than 25 % of requests answered 4xx for 15 minutes (clients misconfigured, or a key revoked)',
      // Average of 4XXError is the share of requests that got a 4xx.
      metric: api.metricClientError({ period: PERIOD, statistic: 'Average' }),
      threshold: 0.25,
      comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
    });
    const region = Stack.of(this).region;
    const search = (metric: string, stat: string, label: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},operation,service} MetricName="${metric}"', '${stat}', 300)`,
        label,
        period: PERIOD,
        searchRegion: region,
      });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'API: requests, 4xx, 5xx', left: [requests, client, server], width: 24 }),
      new cloudwatch.GraphWidget({ title: 'Per operation: latency p99 (ms)', left: [search('Latency', 'p99', 'p99')], width: 12 }),
      new cloudwatch.GraphWidget({ title: 'Per operation: server errors', left: [search('ServerErrors', 'Sum', 'errors')], width: 12 }),
      new cloudwatch.GraphWidget({ title: 'Per operation: client errors', left: [search('ClientErrors', 'Sum', '4xx')], width: 12 }),
      new cloudwatch.GraphWidget({
        title: 'Registry CAS conflicts and exhausted retries',
        left: [search('CasConflict', 'Sum', 'conflicts'), search('CasExhausted', 'Sum', 'exhausted (code 14)')],
        width: 12,
      }),
      new cloudwatch.GraphWidget({ title: 'Credential vends (all / from STS)', left: [search('CredentialVend', 'Sum', 'vends'), search('CredentialVendSts', 'Sum', 'STS calls')], width: 12 }),
    );
  }

  /** Depth of a failure queue: any message is an invocation that failed for good. */
  addFailureQueue(name: string, queue: sqs.IQueue): void {
    const depth = queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' });
    this.addAlarm(`${name}FailureQueueDepth`, { description: `rask ${name}: failed asynchronous invocations waiting in ${name} failure queue`, metric: depth, threshold: 1 });
    this.dashboard.addWidgets(new cloudwatch.GraphWidget({ title: `${name} failure queue depth`, left: [depth], width: 12 }));
  }

  addWidgets(...widgets: cloudwatch.IWidget[]): void {
    this.dashboard.addWidgets(...widgets);
  }
}

/**
 * A topic's policy replaces SNS's default one (which let the owning account publish), and
 * `enforceSSL` writes a policy holding only its TLS Deny, so without this statement CloudWatch
 * could not deliver a single alarm. CloudWatch publishes as its service principal; the
 * conditions keep it to alarms of this account (the confused-deputy guard AWS recommends for
 * service principals). The TLS Deny still applies: CloudWatch publishes over TLS.
 */
function allowAlarmsToPublish(topic: sns.Topic): void {
  const { account, partition, region } = Stack.of(topic);
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToPublish',
      effect: iam.Effect.ALLOW,
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': account },
        ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
      },
    }),
  );
}
