/**
 * The change relay in the stack (infra/constructs/change-relay.ts; docs/events.md, "The relay"):
 * its function on a one-minute schedule with a failure queue and an alarm; its role, read with
 * the IAM evaluator of the deploy suite, allows exactly the calls the relay makes (read the
 * registry and the warehouse, append to the change log, keep its state, put events on the bus)
 * and nothing that would let it change a record or table data; the change log expires by a
 * lifecycle rule on the registry bucket.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluate, type Statement } from '../deploy/iam.js';
import { CHANGE_LOG_EXPIRY_DAYS } from '../../infra/constructs/change-relay.js';
import { DEFAULT_CHANGES_RETENTION_DAYS } from '../../lib/config.js';
import { asArray, flat, identityStatements, logicalId, resourcesOfType, synthRask } from './helpers.js';

describe('the change relay in the stack', () => {
  let built: ReturnType<typeof synthRask>;
  beforeAll(() => {
    built = synthRask();
  });
  const template = () => built.template;
  const relayFn = () => logicalId(template(), 'AWS::Lambda::Function', 'ChangeRelayFunction');

  it('runs every minute, sends a failed cycle to its failure queue and alarms on errors', () => {
    const fn = relayFn();
    const env = resourcesOfType(template(), 'AWS::Lambda::Function')[fn].Properties!.Environment.Variables;
    expect(env).toMatchObject({ RASK_REGISTRY_PREFIX: 'registry/', RASK_WAREHOUSE_PREFIX: 'warehouse/' });
    expect(flat(env.RASK_EVENT_BUS_NAME)).toMatch(/^<ChangeEventsBus/);
    const rules = Object.values(resourcesOfType(template(), 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties!.Targets).includes(`"${fn}"`));
    expect(rules.map((r) => r.Properties!.ScheduleExpression)).toEqual(['rate(1 minute)']);
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

    // What it must never do.
    expect(allowed('s3:PutObject', `${registry}/registry/p/default/t/sales/+t/orders`)).toBe(false);
    expect(allowed('s3:DeleteObject', `${registry}/registry/changes/default/20261202T171048123Z-0000000100aabbcc`)).toBe(false);
    expect(allowed('s3:PutObject', `${warehouse}/warehouse/sales/orders.lance/_versions/18446744073709551613.manifest`)).toBe(false);
    expect(allowed('s3:DeleteObject', `${warehouse}/warehouse/sales/orders.lance/data/x.lance`)).toBe(false);
    expect(allowed('s3:ListBucket', registry, { 's3:prefix': 'elsewhere/' })).toBe(false);
    expect(allowed('events:PutEvents', 'arn:aws:events:us-east-1:123456789012:event-bus/default')).toBe(false);
    expect(allowed('dynamodb:PutItem', 'arn:aws:dynamodb:us-east-1:123456789012:table/anything')).toBe(false);
  });

  it('expires the change log by a lifecycle rule on the registry bucket, a day after the retention', () => {
    expect(CHANGE_LOG_EXPIRY_DAYS).toBe(DEFAULT_CHANGES_RETENTION_DAYS + 1);
    const bucket = resourcesOfType(built.stateTemplate, 'AWS::S3::Bucket')[logicalId(built.stateTemplate, 'AWS::S3::Bucket', 'StorageRegistry')];
    const rules = bucket.Properties!.LifecycleConfiguration.Rules as { Id?: string; Prefix?: string; ExpirationInDays?: number; Status: string }[];
    expect(rules.filter((r) => r.Prefix === 'registry/changes/')).toEqual([expect.objectContaining({ Id: 'ExpireChangeLog', ExpirationInDays: CHANGE_LOG_EXPIRY_DAYS, Status: 'Enabled' })]);
  });
});
