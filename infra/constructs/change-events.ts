import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface ChangeEventsProps {
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The change-event bus (docs/events.md): every successful mutation is put on it as a CloudEvent
 * (`Source` rask://<project>, `DetailType` the event type). An archive keeps the stream
 * replayable, and one example rule sends every rask event to a log group, to show consumers how
 * to subscribe (their own rules match on `source` / `detail-type`).
 */
export class ChangeEvents extends Construct {
  readonly bus: events.EventBus;
  readonly exampleRule: events.Rule;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ChangeEventsProps) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', { description: 'rask change events (CloudEvents 1.0)' });
    this.bus.archive('Archive', {
      description: 'every rask change event, replayable',
      eventPattern: { source: events.Match.prefix('rask://') },
      retention: Duration.days(props.logRetentionDays),
    });
    this.logGroup = new logs.LogGroup(this, 'Log', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.removalPolicy,
    });
    this.exampleRule = new events.Rule(this, 'ToLog', {
      eventBus: this.bus,
      description: 'rask: example subscription, every change event to a log group',
      eventPattern: { source: events.Match.prefix('rask://') },
    });
    // The log group target, wired natively: CDK's CloudWatchLogGroup target would add a custom
    // resource (a Lambda with a managed policy on Resource "*") just to write this policy.
    this.exampleRule.addTarget({ bind: () => ({ arn: this.logGroup.logGroupArn }) });
    new logs.ResourcePolicy(this, 'LogPolicy', {
      policyStatements: [
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('events.amazonaws.com'), new iam.ServicePrincipal('delivery.logs.amazonaws.com')],
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [this.logGroup.logGroupArn],
        }),
      ],
    });
  }

  /** Lets a function put events on this bus and tells it the bus's name. */
  grantPublish(fn: { role?: iam.IRole; addEnvironment(key: string, value: string): unknown }): void {
    if (fn.role) this.bus.grantPutEventsTo(fn.role);
    fn.addEnvironment('RASK_EVENT_BUS_NAME', this.bus.eventBusName);
  }
}
