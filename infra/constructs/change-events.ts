import { ArnFormat, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Every rask change event: `Source` is rask://<project>. */
const RASK_EVENTS: events.EventPattern = { source: events.Match.prefix('rask://') };

export interface ChangeEventBusProps {
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The change-event bus (docs/events.md) and its archive, in the stateful stack: every
 * successful mutation is put on the bus as a CloudEvent (`Source` rask://<project>,
 * `DetailType` the event type). The archive is the replayable history of those events, which is
 * data, so it lives and is retained with the bus; consumers' rules refer to the bus by name and
 * survive a redeploy of the stateless stack.
 */
export class ChangeEventBus extends Construct {
  readonly bus: events.EventBus;
  readonly archive: events.Archive;

  constructor(scope: Construct, id: string, props: ChangeEventBusProps) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', { description: 'rask change events (CloudEvents 1.0)' });
    this.bus.applyRemovalPolicy(props.removalPolicy);
    this.archive = this.bus.archive('Archive', {
      description: 'every rask change event, replayable',
      eventPattern: RASK_EVENTS,
      retention: Duration.days(props.logRetentionDays),
    });
    this.archive.applyRemovalPolicy(props.removalPolicy);
  }
}

export interface ChangeEventsProps {
  /** The bus, as imported from the stateful stack. */
  readonly bus: events.IEventBus;
  readonly logRetentionDays: number;
  /** Of the example rule's log group (as before the split: `rask:removalPolicy`). */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The stateless side of the change events, in the stateless stack: who may publish, and one
 * example rule sending every rask event to a log group, to show consumers how to subscribe
 * (their own rules match on `source` / `detail-type`). The rule is a subscription, recreated
 * with the code (its log group has a generated name, so a retained one never blocks a redeploy).
 */
export class ChangeEvents extends Construct {
  readonly bus: events.IEventBus;
  readonly exampleRule: events.Rule;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ChangeEventsProps) {
    super(scope, id);
    this.bus = props.bus;
    this.logGroup = new logs.LogGroup(this, 'Log', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.removalPolicy,
    });
    this.exampleRule = new events.Rule(this, 'ToLog', {
      eventBus: this.bus,
      description: 'rask: example subscription, every change event to a log group',
      eventPattern: RASK_EVENTS,
    });
    // The log group target, wired natively: CDK's CloudWatchLogGroup target would add a custom
    // resource (a Lambda with a managed policy on Resource "*") just to write this policy. The
    // target names the group itself: `logGroupArn` ends in `:*` (its streams), which EventBridge
    // accepts and then delivers nothing to.
    const groupArn = Stack.of(this).formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: this.logGroup.logGroupName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.exampleRule.addTarget({ bind: () => ({ arn: groupArn }) });
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
}
