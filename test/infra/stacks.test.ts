/**
 * Stacks split by state (issue 13, item 6): the stateful stack holds every bucket, the
 * work-queue table, the admin key and the change-event bus with its archive — RETAIN by
 * default — and nothing stateless; the stateless
 * stack holds the functions, API, schedule and alarms, and reaches the stateful resources only
 * through named exports of the stateful stack.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import { resourcesOfType, synthRask } from './helpers.js';

let built: ReturnType<typeof synthRask>;
beforeAll(() => {
  built = synthRask();
});

const STATEFUL_TYPES = [
  'AWS::S3::Bucket',
  'AWS::DynamoDB::GlobalTable',
  'AWS::DynamoDB::Table',
  'AWS::SecretsManager::Secret',
  'AWS::Events::EventBus',
  'AWS::Events::Archive',
];
const STATELESS_TYPES = [
  'AWS::Lambda::Function',
  'AWS::Lambda::LayerVersion',
  'AWS::ApiGateway::RestApi',
  'AWS::Events::Rule',
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
  'AWS::IAM::Role',
  'AWS::SQS::Queue',
];
const types = (t: typeof built.stateTemplate) =>
  new Set(Object.values(t.toJSON().Resources as Record<string, { Type: string }>).map((r) => r.Type));

describe('two stacks of one app', () => {
  it('are named after the stack name, the stateful one deployed first', () => {
    expect(built.stateStack.stackName).toBe('Rask-State');
    expect(built.stack.stackName).toBe('Rask');
    expect(built.stack.dependencies).toContain(built.stateStack);
  });

  it('the stateful stack holds every bucket and table, the admin key and the bus, all retained', () => {
    const state = types(built.stateTemplate);
    expect([...state].sort()).toEqual(
      expect.arrayContaining(['AWS::DynamoDB::GlobalTable', 'AWS::Events::Archive', 'AWS::Events::EventBus', 'AWS::S3::Bucket', 'AWS::SecretsManager::Secret']),
    );
    for (const type of STATEFUL_TYPES) {
      for (const [id, r] of Object.entries(resourcesOfType(built.stateTemplate, type))) {
        expect(r.DeletionPolicy, id).toBe('Retain');
      }
      expect(Object.keys(resourcesOfType(built.statelessTemplate, type)), type).toEqual([]);
    }
    expect(Object.keys(resourcesOfType(built.stateTemplate, 'AWS::S3::Bucket'))).toHaveLength(3); // registry, warehouse, access logs
    expect(Object.keys(resourcesOfType(built.stateTemplate, 'AWS::Events::EventBus'))).toHaveLength(1);
    const [archive] = Object.values(resourcesOfType(built.stateTemplate, 'AWS::Events::Archive'));
    const [bus] = Object.keys(resourcesOfType(built.stateTemplate, 'AWS::Events::EventBus'));
    expect(archive.Properties!.SourceArn).toEqual({ 'Fn::GetAtt': [bus, 'Arn'] });
  });

  it('with rask:removalPolicy=destroy the bus and its archive go with the stack', () => {
    const b = synthRask({ removalPolicy: RemovalPolicy.DESTROY });
    for (const type of ['AWS::Events::EventBus', 'AWS::Events::Archive']) {
      for (const r of Object.values(resourcesOfType(b.stateTemplate, type))) expect(r.DeletionPolicy, type).toBe('Delete');
    }
  });

  it('the stateless stack keeps the example subscription and the publishers\' grants, on the imported bus', () => {
    const [rule] = Object.values(resourcesOfType(built.statelessTemplate, 'AWS::Events::Rule')).filter((r) => r.Properties!.EventBusName);
    expect(rule.Properties!.EventBusName).toEqual({ 'Fn::ImportValue': 'Rask-State-EventBusName' });
    const puts = JSON.stringify(built.statelessTemplate.toJSON()).match(/"Action":"events:PutEvents","Effect":"Allow","Resource":\{"Fn::ImportValue":"Rask-State-EventBusArn"\}/g);
    expect(puts).toHaveLength(4); // meta, data, jobs, the change relay
  });

  it('the stateful stack holds nothing stateless', () => {
    const state = types(built.stateTemplate);
    for (const type of STATELESS_TYPES) expect(state.has(type), type).toBe(false);
    // What is there besides the stateful resources: their bucket policies only.
    expect([...state].filter((t) => !STATEFUL_TYPES.includes(t)).sort()).toEqual(['AWS::S3::BucketPolicy']);
  });

  it('the stateless stack refers to the stateful resources only through named exports', () => {
    const exports = new Map<string, unknown>();
    for (const o of Object.values((built.stateTemplate.toJSON().Outputs ?? {}) as Record<string, { Export?: { Name: string }; Value: unknown }>)) {
      if (o.Export) exports.set(o.Export.Name, o.Value);
    }
    expect([...exports.keys()].sort()).toEqual(
      [
        'Rask-State-AdminKeySecretArn',
        'Rask-State-EventBusArn',
        'Rask-State-EventBusName',
        'Rask-State-RegistryBucketArn',
        'Rask-State-RegistryBucketName',
        'Rask-State-WarehouseBucketArn',
        'Rask-State-WarehouseBucketName',
        'Rask-State-WorkQueueTableArn',
        'Rask-State-WorkQueueTableName',
      ].sort(),
    );
    const imports = [...JSON.stringify(built.statelessTemplate.toJSON()).matchAll(/"Fn::ImportValue":"([^"]+)"/g)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(10);
    for (const name of imports) expect(exports.has(name), name).toBe(true);
    // Every export is used, and the stateful stack imports nothing back (no cycle).
    expect(new Set(imports)).toEqual(new Set(exports.keys()));
    expect(JSON.stringify(built.stateTemplate.toJSON())).not.toContain('Fn::ImportValue');
  });

  it('the functions get the bucket names and the admin key through the imports', () => {
    const fns = Object.values(resourcesOfType(built.statelessTemplate, 'AWS::Lambda::Function'));
    const env = (key: string) => fns.map((f) => f.Properties!.Environment?.Variables?.[key]).filter(Boolean);
    expect(env('RASK_REGISTRY_BUCKET')[0]).toEqual({ 'Fn::ImportValue': 'Rask-State-RegistryBucketName' });
    expect(env('RASK_WAREHOUSE_BUCKET')[0]).toEqual({ 'Fn::ImportValue': 'Rask-State-WarehouseBucketName' });
    // meta, data, jobs and every maintenance pass use the one queue, by its exported name.
    expect(env('RASK_WORK_QUEUE_TABLE')).toEqual(Array(3 + MAINTENANCE_PASSES.length).fill({ 'Fn::ImportValue': 'Rask-State-WorkQueueTableName' }));
    expect(env('RASK_ADMIN_KEY_SECRET_ID')).toEqual([{ 'Fn::ImportValue': 'Rask-State-AdminKeySecretArn' }]);
  });
});

describe('with an existing warehouse bucket', () => {
  it('the stateless stack names it directly, and the stateful stack creates no warehouse bucket', () => {
    const b = synthRask({ warehouseBucketName: 'my-lake' });
    const fns = Object.values(resourcesOfType(b.statelessTemplate, 'AWS::Lambda::Function'));
    expect(fns.some((f) => f.Properties!.Environment?.Variables?.RASK_WAREHOUSE_BUCKET === 'my-lake')).toBe(true);
    expect(JSON.stringify(b.stateTemplate.toJSON())).not.toContain('WarehouseBucketName');
    expect(Object.keys(resourcesOfType(b.stateTemplate, 'AWS::S3::Bucket'))).toHaveLength(2);
  });
});
