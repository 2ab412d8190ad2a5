import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface JobsScheduleProps {
  readonly fn: lambda.Function;
  /** How often a worker looks for ready jobs: the longest a queued job waits for a free worker. */
  readonly every?: Duration;
  /** Where an invocation that failed (or an event EventBridge could not deliver) is recorded. */
  readonly failures?: sqs.IQueue;
}

/**
 * Starts the jobs function on a fixed rate. Invocations may overlap (a build can outlast the
 * period): that is safe, because every claim is a compare-and-swap on the job record, and it
 * is how more than one job runs at a time. Nothing is retried by Lambda or EventBridge: the
 * next tick is the retry, and a job's own attempts are counted in its record (docs/jobs.md).
 */
export class JobsSchedule extends Construct {
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: JobsScheduleProps) {
    super(scope, id);
    props.fn.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.minutes(5),
      ...(props.failures ? { onFailure: new SqsDestination(props.failures) } : {}),
    });
    this.rule = new events.Rule(this, 'Rule', {
      description: 'rask: run queued jobs (index builds, backfills)',
      schedule: events.Schedule.rate(props.every ?? Duration.minutes(1)),
      targets: [
        new targets.LambdaFunction(props.fn, {
          retryAttempts: 0,
          maxEventAge: Duration.minutes(5),
          ...(props.failures ? { deadLetterQueue: props.failures } : {}),
        }),
      ],
    });
  }
}
