/**
 * The change relay in the stack (infra/constructs/change-relay.ts; docs/events.md, "The relay"):
 * S3 Event Notifications on the registry and warehouse buckets, two rules (the change log's
 * prefix; `…/_versions/*.manifest`) whose patterns match S3's real "Object Created" events and
 * nothing else, delivering to a queue that holds them for the settle window and hands them to the
 * relay in batches, with retries and a failure queue that alarms; the safety-net schedule every
 * five minutes with its own failure queue and alarm; its role, read with the IAM evaluator of
 * the deploy suite, allows exactly the calls the relay makes (read the registry — the log's
 * entries also by version — and the warehouse, append to the change log, keep its state, put
 * events on the bus, consume its queue) and nothing that would let it change a record or table
 * data; the change log expires by a lifecycle rule on the registry bucket.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluate, type Statement } from '../deploy/iam.js';
import { matchesPattern } from '../deploy/event-pattern.js';
import { s3ObjectCreatedEvent } from '../support/aws-http-fake.js';
import { CHANGE_LOG_EXPIRY_DAYS, NOTIFICATION_BATCH, NOTIFICATION_RECEIVES } from '../../infra/constructs/change-relay.js';
import { AWS_RELAY_SETTLE_MS, DEFAULT_CHANGES_RETENTION_DAYS } from '../../lib/config.js';
import { asArray, flat, identityStatements, logicalId, resourcesOfType, synthRask } from './helpers.js';

describe('the change relay in the stack', () => {
  let built: ReturnType<typeof synthRask>;
  beforeAll(() => {
    built = synthRask();
  });
  const template = () => built.template;
  const relayFn = () => logicalId(template(), 'AWS::Lambda::Function', 'ChangeRelayFunction');

  it('runs its safety-net scan every five minutes, sends a failed cycle to its failure queue and alarms on errors', () => {
    const fn = relayFn();
    const env = resourcesOfType(template(), 'AWS::Lambda::Function')[fn].Properties!.Environment.Variables;
    expect(env).toMatchObject({ RASK_REGISTRY_PREFIX: 'registry/', RASK_WAREHOUSE_PREFIX: 'warehouse/', RASK_CHANGE_NOTIFICATIONS: 'true' });
    expect(flat(env.RASK_EVENT_BUS_NAME)).toMatch(/^<ChangeEventsBus/);
    const rules = Object.values(resourcesOfType(template(), 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties!.Targets).includes(`"${fn}"`));
    expect(rules.map((r) => r.Properties!.ScheduleExpression)).toEqual(['rate(5 minutes)']);
    const invokeConfig = Object.values(resourcesOfType(template(), 'AWS::Lambda::EventInvokeConfig')).find((c) => flat(c.Properties!.FunctionName) === `<${fn}>`);
    if (!invokeConfig) throw new Error('the relay has no asynchronous invoke configuration');
    expect(invokeConfig.Properties).toMatchObject({ MaximumRetryAttempts: 0 });
    expect(flat(invokeConfig.Properties!.DestinationConfig.OnFailure.Destination)).toMatch(/^<ChangeRelayFailures[A-Z0-9]+\.Arn>$/);
    const alarms = Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Alarm')).filter((a) => JSON.stringify(a.Properties!.Dimensions ?? []).includes(`"${fn}"`));
    expect(alarms.map((a) => a.Properties!.MetricName)).toEqual(['Errors']);
  });

  it('its role allows the relay’s calls and nothing that changes records or table data', () => {
    const fn = resourcesOfType(template(), 'AWS::Lambda::Function')[relayFn()];
    const role = (fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    // Resources as flat strings (`<StorageRegistry….Arn>/registry/*`), the form the requests below name.
    const statements: Statement[] = identityStatements(template())
      .filter((s) => s.roles.includes(role))
      .map(({ statement }) => ({ ...statement, Resource: asArray(statement.Resource).map(flat) }) as Statement);
    const registry = flat({ 'Fn::GetAtt': [logicalId(template(), 'AWS::S3::Bucket', 'StorageRegistry'), 'Arn'] });
    const warehouse = flat({ 'Fn::GetAtt': [logicalId(template(), 'AWS::S3::Bucket', 'StorageWarehouse'), 'Arn'] });
    const bus = flat({ 'Fn::GetAtt': [Object.keys(resourcesOfType(template(), 'AWS::Events::EventBus'))[0], 'Arn'] });
    const allowed = (action: string, resource: string, context: Record<string, string> = {}) => evaluate(statements, { action, resource, context }).allowed;

    // What a cycle does (lib/maintenance/change-relay.ts, lib/app/aws-maintenance.ts).
    expect(allowed('s3:GetObject', `${registry}/registry/layout.json`)).toBe(true);
    expect(allowed('s3:GetObject', `${registry}/registry/changes-relay/state.json`)).toBe(true);
    expect(allowed('s3:PutObject', `${registry}/registry/changes-relay/state.json`)).toBe(true);
    expect(allowed('s3:ListBucket', registry, { 's3:prefix': 'registry/changes/default/' })).toBe(true);
    expect(allowed('s3:ListBucket', registry, { 's3:prefix': 'registry/p/default/t/' })).toBe(true);
    expect(allowed('s3:GetObject', `${registry}/registry/changes/default/20261202T171048123Z-0000000100aabbcc`)).toBe(true);
    expect(allowed('s3:PutObject', `${registry}/registry/changes/default/20261202T171048123Z-0000000100aabbcc`)).toBe(true);
    expect(allowed('s3:ListBucket', warehouse, { 's3:prefix': 'warehouse/sales/orders.lance/_versions/' })).toBe(true);
    expect(allowed('s3:GetObject', `${warehouse}/warehouse/sales/orders.lance/_versions/18446744073709551614.manifest`)).toBe(true);
    expect(allowed('events:PutEvents', bus)).toBe(true);
    // A notification names the version of the log entry it reports.
    expect(allowed('s3:GetObjectVersion', `${registry}/registry/changes/default/20261202T171048123Z-0000000100aabbcc`)).toBe(true);
    const queue = flat({ 'Fn::GetAtt': [logicalId(template(), 'AWS::SQS::Queue', 'ChangeRelayNotifications'), 'Arn'] });
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes']) expect(allowed(action, queue), action).toBe(true);

    // What it must never do.
    expect(allowed('s3:GetObjectVersion', `${registry}/registry/p/default/t/sales/+t/orders`)).toBe(false);
    expect(allowed('sqs:SendMessage', queue)).toBe(false);
    expect(allowed('s3:PutObject', `${registry}/registry/p/default/t/sales/+t/orders`)).toBe(false);
    expect(allowed('s3:DeleteObject', `${registry}/registry/changes/default/20261202T171048123Z-0000000100aabbcc`)).toBe(false);
    expect(allowed('s3:PutObject', `${warehouse}/warehouse/sales/orders.lance/_versions/18446744073709551613.manifest`)).toBe(false);
    expect(allowed('s3:DeleteObject', `${warehouse}/warehouse/sales/orders.lance/data/x.lance`)).toBe(false);
    expect(allowed('s3:ListBucket', registry, { 's3:prefix': 'elsewhere/' })).toBe(false);
    expect(allowed('events:PutEvents', 'arn:aws:events:us-east-1:123456789012:event-bus/default')).toBe(false);
    expect(allowed('dynamodb:PutItem', 'arn:aws:dynamodb:us-east-1:123456789012:table/anything')).toBe(false);
  });

  it('S3 sends Object Created events of both buckets to EventBridge (natively: no custom resource)', () => {
    for (const bucket of ['StorageRegistry', 'StorageWarehouse']) {
      const props = resourcesOfType(built.stateTemplate, 'AWS::S3::Bucket')[logicalId(built.stateTemplate, 'AWS::S3::Bucket', bucket)].Properties!;
      expect(props.NotificationConfiguration, bucket).toEqual({ EventBridgeConfiguration: { EventBridgeEnabled: true } });
    }
    expect(Object.keys(resourcesOfType(built.stateTemplate, 'Custom::S3BucketNotifications'))).toEqual([]);
    // A warehouse bucket the stack does not own is not touched (its owner enables notifications; the scan covers it).
    const own = synthRask({ warehouseBucketName: 'their-bucket' });
    expect(Object.values(resourcesOfType(own.stateTemplate, 'AWS::S3::Bucket')).filter((b) => b.Properties!.NotificationConfiguration)).toHaveLength(1);
  });

  it('two rules take exactly the change log’s and the manifests’ Object Created events to the notification queue', () => {
    const rules = resourcesOfType(template(), 'AWS::Events::Rule');
    const notificationRules = Object.entries(rules).filter(([id]) => /^ChangeRelay(Log|Manifest)Notifications/.test(id));
    expect(notificationRules).toHaveLength(2);
    const queueId = logicalId(template(), 'AWS::SQS::Queue', 'ChangeRelayNotifications');
    const failuresId = logicalId(template(), 'AWS::SQS::Queue', 'ChangeRelayNotificationFailures');
    const registry = `fake-${logicalId(template(), 'AWS::S3::Bucket', 'StorageRegistry').toLowerCase()}`;
    const warehouse = `fake-${logicalId(template(), 'AWS::S3::Bucket', 'StorageWarehouse').toLowerCase()}`;
    const patterns: unknown[] = [];
    for (const [id, rule] of notificationRules) {
      // S3 sends to the account's default bus; the rule is on it.
      expect(rule.Properties!.EventBusName, id).toBeUndefined();
      const [target, ...more] = rule.Properties!.Targets as { Arn: unknown; RetryPolicy?: unknown; DeadLetterConfig?: { Arn: unknown } }[];
      expect(more, id).toEqual([]);
      expect(flat(target.Arn), id).toBe(`<${queueId}.Arn>`);
      expect(target.RetryPolicy, id).toEqual({ MaximumRetryAttempts: 20, MaximumEventAgeInSeconds: 21_600 });
      expect(flat(target.DeadLetterConfig!.Arn), id).toBe(`<${failuresId}.Arn>`);
      // Bucket names as the deploy suite's world resolves them (`fake-<logical id>`).
      patterns.push(JSON.parse(JSON.stringify(rule.Properties!.EventPattern).replace(/\{"Ref":"(Storage(Registry|Warehouse)[A-Z0-9]+)"\}/g, (_, b: string) => JSON.stringify(`fake-${b.toLowerCase()}`))));
    }
    const delivered = (bucket: string, key: string, detailType = 'Object Created') =>
      patterns.filter((p) => matchesPattern(p, { ...(s3ObjectCreatedEvent({ bucket, key, size: 10, etag: 'e', versionId: 'v1', sequencer: '0A', time: new Date() }) as object), 'detail-type': detailType })).length;
    expect(delivered(registry, 'registry/changes/default/20261202T171048123Z-0000000100aabbcc')).toBe(1);
    expect(delivered(warehouse, 'warehouse/sales/orders.lance/_versions/18446744073709551614.manifest')).toBe(1);
    expect(delivered(warehouse, 'warehouse/a/b/c.lance/_versions/3.manifest')).toBe(1);
    // Nothing else: records, the relay's own state, data files, staged manifests, the wrong bucket, deletions.
    expect(delivered(registry, 'registry/p/default/t/sales/+t/orders')).toBe(0);
    expect(delivered(registry, 'registry/changes-relay/state.json')).toBe(0);
    expect(delivered(warehouse, 'warehouse/sales/orders.lance/data/x.lance')).toBe(0);
    expect(delivered(warehouse, 'warehouse/sales/orders.lance/_versions/18446744073709551614.manifest-3f2a')).toBe(0);
    expect(delivered(warehouse, 'registry/changes/default/20261202T171048123Z-0000000100aabbcc')).toBe(0);
    expect(delivered(registry, 'warehouse/sales/orders.lance/_versions/1.manifest')).toBe(0);
    expect(delivered(registry, 'registry/changes/default/x', 'Object Deleted')).toBe(0);
  });

  it('the queue holds each notification for the settle window, hands batches to the relay, retries, then fails them to an alarmed queue', () => {
    const queues = resourcesOfType(template(), 'AWS::SQS::Queue');
    const queueId = logicalId(template(), 'AWS::SQS::Queue', 'ChangeRelayNotifications');
    const failuresId = logicalId(template(), 'AWS::SQS::Queue', 'ChangeRelayNotificationFailures');
    const timeout = resourcesOfType(template(), 'AWS::Lambda::Function')[relayFn()].Properties!.Timeout as number;
    expect(queues[queueId].Properties).toMatchObject({ DelaySeconds: AWS_RELAY_SETTLE_MS / 1000, VisibilityTimeout: 6 * timeout, SqsManagedSseEnabled: true });
    expect(queues[queueId].Properties!.RedrivePolicy.maxReceiveCount).toBe(NOTIFICATION_RECEIVES);
    expect(flat(queues[queueId].Properties!.RedrivePolicy.deadLetterTargetArn)).toBe(`<${failuresId}.Arn>`);
    const mappings = Object.values(resourcesOfType(template(), 'AWS::Lambda::EventSourceMapping')).filter((m) => flat(m.Properties!.EventSourceArn) === `<${queueId}.Arn>`);
    expect(mappings).toHaveLength(1);
    expect(mappings[0].Properties).toMatchObject({ BatchSize: NOTIFICATION_BATCH, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: 2 } });
    expect(flat(mappings[0].Properties!.FunctionName)).toBe(`<${relayFn()}>`);
    // Room for the queue's two batches and a scheduled cycle.
    expect(resourcesOfType(template(), 'AWS::Lambda::Function')[relayFn()].Properties!.ReservedConcurrentExecutions).toBe(3);
    const alarms = Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Alarm')).filter((a) => JSON.stringify(a.Properties!.Dimensions ?? []).includes(`"${failuresId}"`));
    expect(alarms.map((a) => [a.Properties!.MetricName, a.Properties!.Threshold])).toEqual([['ApproximateNumberOfMessagesVisible', 1]]);
  });

  it('expires the change log by a lifecycle rule on the registry bucket, a day after the retention', () => {
    expect(CHANGE_LOG_EXPIRY_DAYS).toBe(DEFAULT_CHANGES_RETENTION_DAYS + 1);
    const bucket = resourcesOfType(built.stateTemplate, 'AWS::S3::Bucket')[logicalId(built.stateTemplate, 'AWS::S3::Bucket', 'StorageRegistry')];
    const rules = bucket.Properties!.LifecycleConfiguration.Rules as { Id?: string; Prefix?: string; ExpirationInDays?: number; Status: string }[];
    expect(rules.filter((r) => r.Prefix === 'registry/changes/')).toEqual([expect.objectContaining({ Id: 'ExpireChangeLog', ExpirationInDays: CHANGE_LOG_EXPIRY_DAYS, Status: 'Enabled' })]);
  });
});
