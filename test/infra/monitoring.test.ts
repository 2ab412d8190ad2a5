/**
 * Alarms that reach someone (issue 13, item 3): an SNS topic every alarm notifies (with an
 * e-mail subscription by context), p99 duration per function, 4xx rate, authorizer denials,
 * job failures, a failure queue for the asynchronous jobs function, a dashboard, stage tracing
 * and metrics, and a retention on the execution-log group.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import { FAKE_ACCOUNT, FAKE_REGION, readAssembly } from '../deploy/assembly.js';
import { evaluateForService, type Statement } from '../deploy/iam.js';
import { flat, logicalId, resourcesOfType, synthRask } from './helpers.js';

let built: ReturnType<typeof synthRask>;
beforeAll(() => {
  built = synthRask({ alarmEmail: 'oncall@example.com' });
});
const template = () => built.template;
const alarms = () => Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Alarm')).map((a) => a.Properties!);

describe('alarm topic', () => {
  it('creates one TLS-only topic with the e-mail subscription', () => {
    const topics = resourcesOfType(template(), 'AWS::SNS::Topic');
    expect(Object.keys(topics)).toHaveLength(1);
    template().hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    const policies = Object.values(resourcesOfType(template(), 'AWS::SNS::TopicPolicy'));
    expect(JSON.stringify(policies)).toContain('aws:SecureTransport');
  });

  it('lets CloudWatch alarms of this account publish, over TLS only (the deploy suite\'s IAM evaluator)', () => {
    const assembly = readAssembly(built.app.outdir);
    const stackName = built.stack.stackName;
    const [policyId, policy] = Object.entries(assembly.stacks.find((s) => s.stackName === stackName)!.resources).find(([, r]) => r.Type === 'AWS::SNS::TopicPolicy')!;
    const doc = assembly.resolve(stackName, policy.Properties) as { PolicyDocument: { Statement: Statement[] }; Topics: string[] };
    const topicArn = doc.Topics[0];
    expect(topicArn, policyId).toMatch(/^arn:aws:sns:/);
    const statements = doc.PolicyDocument.Statement;
    const alarmArn = `arn:aws:cloudwatch:${FAKE_REGION}:${FAKE_ACCOUNT}:alarm:RaskAlarmsApi5xx`;
    const publish = (context: Record<string, string>, service = 'cloudwatch.amazonaws.com') =>
      evaluateForService(statements, service, { action: 'sns:Publish', resource: topicArn, context });
    const fromAlarm = { 'aws:SourceAccount': FAKE_ACCOUNT, 'aws:SourceArn': alarmArn, 'aws:SecureTransport': 'true' };
    expect(publish(fromAlarm).allowed).toBe(true);
    // TLS-only stays, and the grant is no wider than this account's alarms.
    expect(publish({ ...fromAlarm, 'aws:SecureTransport': 'false' })).toMatchObject({ allowed: false, reason: 'explicit-deny' });
    expect(publish({ ...fromAlarm, 'aws:SourceAccount': '999999999999', 'aws:SourceArn': alarmArn.replace(FAKE_ACCOUNT, '999999999999') })).toMatchObject({ allowed: false, reason: 'no-allow' });
    expect(publish({ ...fromAlarm, 'aws:SourceArn': `arn:aws:events:${FAKE_REGION}:${FAKE_ACCOUNT}:rule/x` })).toMatchObject({ allowed: false, reason: 'no-allow' });
    expect(publish(fromAlarm, 'events.amazonaws.com')).toMatchObject({ allowed: false, reason: 'no-allow' });
    // What the topic had before (enforceSSL's Deny alone) lets nothing publish: the check can fail.
    expect(evaluateForService(statements.filter((st) => st.Effect === 'Deny'), 'cloudwatch.amazonaws.com', { action: 'sns:Publish', resource: topicArn, context: fromAlarm }).allowed).toBe(false);
  });

  it('with a recipient configured, synth has no unrouted-alarms warning', () => {
    Annotations.fromStack(built.stack).hasNoWarning('*', Match.stringLikeRegexp('No alarm recipient'));
  });

  it('warns at synth when no recipient is configured, and not with an existing topic', () => {
    const bare = synthRask();
    Annotations.fromStack(bare.stack).hasWarning('*', Match.stringLikeRegexp('No alarm recipient: set -c rask:alarmEmail'));
    const existing = synthRask({ alarmTopicArn: `arn:aws:sns:${FAKE_REGION}:${FAKE_ACCOUNT}:ops-alarms` });
    Annotations.fromStack(existing.stack).hasNoWarning('*', Match.stringLikeRegexp('No alarm recipient'));
    // An existing topic's policy is its owner's: the stack writes none.
    expect(Object.keys(resourcesOfType(existing.statelessTemplate, 'AWS::SNS::TopicPolicy'))).toEqual([]);
    for (const a of Object.values(resourcesOfType(existing.statelessTemplate, 'AWS::CloudWatch::Alarm'))) {
      expect(a.Properties!.AlarmActions).toEqual([`arn:aws:sns:${FAKE_REGION}:${FAKE_ACCOUNT}:ops-alarms`]);
    }
  });

  it('wires every alarm to the topic, on ALARM and on OK', () => {
    const topic = logicalId(template(), 'AWS::SNS::Topic', 'AlarmsTopic');
    expect(alarms().length).toBeGreaterThanOrEqual(16);
    for (const a of alarms()) {
      expect(a.AlarmActions, a.AlarmDescription).toEqual([{ Ref: topic }]);
      expect(a.OKActions, a.AlarmDescription).toEqual([{ Ref: topic }]);
      expect(a.TreatMissingData).toBe('notBreaching');
    }
  });
});

describe('alarms', () => {
  it('p99 duration, errors and throttles for each of the four functions (and errors for each maintenance pass)', () => {
    for (const metric of ['Duration', 'Errors', 'Throttles']) {
      const found = alarms().filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric);
      // Each scheduled maintenance pass has its own error alarm (infra/constructs/maintenance.ts).
      expect(found, metric).toHaveLength(metric === 'Errors' ? 4 + MAINTENANCE_PASSES.length + 1 : 4); // errors: … and the change relay
      if (metric === 'Duration') for (const a of found) expect(a.ExtendedStatistic).toBe('p99');
    }
    const meta = alarms().find((a) => a.MetricName === 'Duration' && flat(a.Dimensions[0].Value).includes('FunctionsMeta'));
    expect(meta?.Threshold).toBe(20_000); // 80 % of the 25 s timeout
  });

  it('API 5xx and 4xx rate', () => {
    expect(alarms()).toContainEqual(expect.objectContaining({ Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Statistic: 'Sum', Threshold: 1 }));
    expect(alarms()).toContainEqual(
      expect.objectContaining({ Namespace: 'AWS/ApiGateway', MetricName: '4XXError', Statistic: 'Average', Threshold: 0.25, EvaluationPeriods: 3 }),
    );
  });

  it('authorizer denials and job failures from the EMF metrics the functions write', () => {
    expect(alarms()).toContainEqual(
      expect.objectContaining({ Namespace: 'rask', MetricName: 'AuthorizerDenied', Dimensions: [{ Name: 'service', Value: 'authorizer' }] }),
    );
    expect(alarms()).toContainEqual(
      expect.objectContaining({ Namespace: 'rask', MetricName: 'JobsFailed', Dimensions: [{ Name: 'service', Value: 'jobs' }], Threshold: 1 }),
    );
  });
});

describe('asynchronous failures', () => {
  it('the jobs function and its schedule send failures to an encrypted queue, whose depth alarms', () => {
    const queue = logicalId(template(), 'AWS::SQS::Queue', 'JobsFailures');
    template().hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    // The jobs function's (each maintenance pass has its own queue, test/infra/maintenance.test.ts).
    const jobs = logicalId(template(), 'AWS::Lambda::Function', 'FunctionsJobsFunction');
    const invoke = Object.values(resourcesOfType(template(), 'AWS::Lambda::EventInvokeConfig')).find((c) => c.Properties!.FunctionName.Ref === jobs)!.Properties!;
    expect(invoke.MaximumRetryAttempts).toBe(0);
    expect(invoke.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } });
    const rule = Object.values(resourcesOfType(template(), 'AWS::Events::Rule')).find((r) => JSON.stringify(r.Properties!.Targets).includes(jobs))!;
    expect(rule.Properties!.Targets[0].DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [queue, 'Arn'] } });
    expect(alarms()).toContainEqual(expect.objectContaining({ Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 }));
  });

  it('every failure queue (the jobs function\'s and each scheduled pass\'s) has a depth alarm on the topic', () => {
    const queues = Object.keys(resourcesOfType(built.statelessTemplate, 'AWS::SQS::Queue')).filter((id) => /Failures/.test(id));
    expect(queues).toHaveLength(1 + MAINTENANCE_PASSES.length + 2); // jobs, the passes, the change relay's schedule and its notifications
    const depth = alarms().filter((a) => a.Namespace === 'AWS/SQS' && a.MetricName === 'ApproximateNumberOfMessagesVisible');
    for (const queue of queues) {
      const found = depth.filter((a) => a.Dimensions[0].Value['Fn::GetAtt']?.[0] === queue);
      expect(found, queue).toHaveLength(1);
      expect(found[0].Threshold).toBe(1);
    }
  });
});

describe('dashboard, tracing and logs', () => {
  it('one dashboard with per-operation latency/errors, CAS conflicts, failure queue depth and job results', () => {
    const dashboards = Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0].Properties!.DashboardBody);
    for (const needle of ['MetricName=\\\\\\"Latency\\\\\\"', 'ServerErrors', 'CasConflict', 'CredentialVend', 'ApproximateNumberOfMessagesVisible', 'JobsSucceeded', 'JobsFailed']) {
      expect(body, needle).toContain(needle);
    }
  });

  it('stage tracing and metrics on, functions traced, execution logs kept for the retention', () => {
    const [stage] = Object.values(resourcesOfType(template(), 'AWS::ApiGateway::Stage'));
    expect(stage.Properties!.TracingEnabled).toBe(true);
    expect(stage.Properties!.MethodSettings).toEqual([
      expect.objectContaining({ MetricsEnabled: true, DataTraceEnabled: false, LoggingLevel: 'ERROR' }),
    ]);
    for (const fn of Object.values(resourcesOfType(template(), 'AWS::Lambda::Function'))) {
      if (fn.Properties!.Runtime?.startsWith('nodejs')) expect(fn.Properties!.TracingConfig).toEqual({ Mode: 'Active' });
    }
    const groups = Object.values(resourcesOfType(template(), 'AWS::Logs::LogGroup')).filter((g) =>
      flat(g.Properties!.LogGroupName ?? '').startsWith('API-Gateway-Execution-Logs_'),
    );
    expect(groups).toHaveLength(1);
    expect(groups[0].Properties!.RetentionInDays).toBe(90);
    expect(flat(groups[0].Properties!.LogGroupName)).toMatch(/^API-Gateway-Execution-Logs_<Api[A-Za-z0-9]+>\/prod$/);
  });

  it('outputs the jobs function name, the topic and the dashboard for operators', () => {
    const outputs = template().toJSON().Outputs as Record<string, unknown>;
    for (const name of ['JobsFunctionName', 'AlarmTopicArn', 'DashboardName']) expect(outputs).toHaveProperty(name);
  });
});
