import { Duration } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface CatalogAlarmsProps {
  readonly api: apigw.RestApi;
  readonly functions: Readonly<Record<string, lambda.IFunction>>;
  /** Where alarms notify; without it they still show in the console and in `describe-alarms`. */
  readonly topicArn?: string;
}

/**
 * "A failing estate is loud": any 5xx from the API and any function error or throttle raises an
 * alarm. The catalog maps every expected failure to a 4xx with a spec code, so a 5xx or a
 * function error is a bug or an outage worth a look, not noise. Missing data (no traffic) is OK.
 */
export class CatalogAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: CatalogAlarmsProps) {
    super(scope, id);
    const period = Duration.minutes(5);

    this.add('Api5xx', 'rask API answered 5xx', props.api.metricServerError({ period, statistic: 'Sum' }));
    for (const [name, fn] of Object.entries(props.functions)) {
      this.add(`${name}Errors`, `rask ${name} function errors`, fn.metricErrors({ period, statistic: 'Sum' }));
      this.add(`${name}Throttles`, `rask ${name} function throttled`, fn.metricThrottles({ period, statistic: 'Sum' }));
    }

    if (props.topicArn) {
      const topic = sns.Topic.fromTopicArn(this, 'Topic', props.topicArn);
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(new actions.SnsAction(topic));
        alarm.addOkAction(new actions.SnsAction(topic));
      }
    }
  }

  private add(id: string, description: string, metric: cloudwatch.IMetric): void {
    this.alarms.push(
      new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}
