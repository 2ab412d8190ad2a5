/**
 * Stacks split by state (issue 13, item 6): the stateful stack holds every bucket, the
 * work-queue table, the admin key and the change-event bus with its archive — RETAIN by
 * default — and nothing stateless; the stateless
 * stack holds the functions, API, schedule and alarms, and reaches the stateful resources only
 * through SSM parameters the stateful stack writes — no CloudFormation export, so a changed value
 * never locks the stacks (issue 29, item 2).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import type { RaskConfig } from '../../infra/config.js';
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

  it('the stateless stack keeps the example subscription and the publisher\'s grant, on the imported bus', () => {
    const [rule] = Object.values(resourcesOfType(built.statelessTemplate, 'AWS::Events::Rule')).filter((r) => r.Properties!.EventBusName);
    expect(rule.Properties!.EventBusName).toEqual({ Ref: ssmRef(built, '/Rask-State/state/EventBusName') });
    const arn = JSON.stringify({ Ref: ssmRef(built, '/Rask-State/state/EventBusArn') });
    const puts = JSON.stringify(built.statelessTemplate.toJSON()).split(`"Action":"events:PutEvents","Effect":"Allow","Resource":${arn}`);
    expect(puts).toHaveLength(2); // one grant: only the change relay puts events (#27)
  });

  it('the stateful stack holds nothing stateless', () => {
    const state = types(built.stateTemplate);
    for (const type of STATELESS_TYPES) expect(state.has(type), type).toBe(false);
    // What is there besides the stateful resources: their bucket policies and the SSM parameters
    // that publish them to the stateless stack.
    expect([...state].filter((t) => !STATEFUL_TYPES.includes(t)).sort()).toEqual(['AWS::S3::BucketPolicy', 'AWS::SSM::Parameter']);
  });

  it('the stateless stack refers to the stateful resources only through SSM parameters, and no export exists', () => {
    expect(exportsOf(built)).toEqual([]);
    expect(JSON.stringify(built.statelessTemplate.toJSON())).not.toContain('Fn::ImportValue');
    expect(JSON.stringify(built.stateTemplate.toJSON())).not.toContain('Fn::ImportValue');
    expect(written(built).map(([name]) => name).sort()).toEqual(STATE_PARAMETERS.map((n) => `/Rask-State/state/${n}`).sort());
    // Every SSM-typed parameter of the stateless stack names one the stateful stack writes.
    const read = Object.values(statelessParameters(built)).filter((p) => p.Type.startsWith('AWS::SSM') && !p.Default?.startsWith('/cdk-bootstrap/')).map((p) => p.Default);
    expect(new Set(read)).toEqual(new Set(written(built).map(([name]) => name)));
    // The values are the stateful resources themselves.
    const values = Object.fromEntries(written(built));
    const [bus] = Object.keys(resourcesOfType(built.stateTemplate, 'AWS::Events::EventBus'));
    expect(values['/Rask-State/state/EventBusArn']).toEqual({ 'Fn::GetAtt': [bus, 'Arn'] });
  });

  it('the functions get the bucket names and the admin key through the SSM parameters', () => {
    const fns = Object.values(resourcesOfType(built.statelessTemplate, 'AWS::Lambda::Function'));
    const env = (key: string) => fns.map((f) => f.Properties!.Environment?.Variables?.[key]).filter(Boolean);
    const via = (name: string) => ({ Ref: ssmRef(built, `/Rask-State/state/${name}`) });
    expect(env('RASK_REGISTRY_BUCKET')[0]).toEqual(via('RegistryBucketName'));
    expect(env('RASK_WAREHOUSE_BUCKET')[0]).toEqual(via('WarehouseBucketName'));
    // meta, data, jobs and every maintenance pass use the one queue, by its published name.
    expect(env('RASK_WORK_QUEUE_TABLE')).toEqual(Array(3 + MAINTENANCE_PASSES.length).fill(via('WorkQueueTableName')));
    expect(env('RASK_ADMIN_KEY_SECRET_ID')).toEqual([via('AdminKeySecretArn')]);
  });
});

describe('no lock between the stacks', () => {
  it('adopting an existing warehouse bucket changes no export (there are none), only parameters', () => {
    const adopted = synthRask({ warehouseBucketName: 'my-lake' });
    expect(exportsOf(adopted)).toEqual([]);
    expect(JSON.stringify(adopted.statelessTemplate.toJSON())).not.toContain('Fn::ImportValue');
    const names = written(adopted).map(([name]) => name);
    expect(names).not.toContain('/Rask-State/state/WarehouseBucketName');
    expect(names).toContain('/Rask-State/state/RegistryBucketName');
  });

  it('a changed stateful value (the removal policy) changes parameter values only, no export', () => {
    const other = synthRask({ removalPolicy: RemovalPolicy.DESTROY });
    expect(exportsOf(other)).toEqual([]);
    expect(written(other).map(([n]) => n)).toEqual(written(built).map(([n]) => n));
  });

  it('rask:legacyExports keeps the old named exports for the upgrade deploy, but nothing imports them', () => {
    const legacy = synthRask({ legacyExports: true } as Partial<RaskConfig>);
    expect(exportsOf(legacy)).toEqual(STATE_PARAMETERS.map((n) => `Rask-State-${n}`).sort());
    expect(JSON.stringify(legacy.statelessTemplate.toJSON())).not.toContain('Fn::ImportValue');
    expect(written(legacy).map(([n]) => n)).toEqual(written(built).map(([n]) => n));
  });
});

const STATE_PARAMETERS = [
  'AdminKeySecretArn',
  'EventBusArn',
  'EventBusName',
  'RegistryBucketArn',
  'RegistryBucketName',
  'WarehouseBucketArn',
  'WarehouseBucketName',
  'WorkQueueTableArn',
  'WorkQueueTableName',
];

type Built = ReturnType<typeof synthRask>;
function exportsOf(b: Built): string[] {
  const outputs = (b.stateTemplate.toJSON().Outputs ?? {}) as Record<string, { Export?: { Name: string } }>;
  const stateless = (b.statelessTemplate.toJSON().Outputs ?? {}) as Record<string, { Export?: { Name: string } }>;
  return [...Object.values(outputs), ...Object.values(stateless)].flatMap((o) => (o.Export ? [o.Export.Name] : [])).sort();
}
/** The SSM parameters the stateful stack writes, as [name, value]. */
function written(b: Built): [string, unknown][] {
  return Object.values(resourcesOfType(b.stateTemplate, 'AWS::SSM::Parameter')).map((r) => [r.Properties!.Name, r.Properties!.Value] as [string, unknown]);
}
function statelessParameters(b: Built): Record<string, { Type: string; Default?: string }> {
  return (b.statelessTemplate.toJSON().Parameters ?? {}) as Record<string, { Type: string; Default?: string }>;
}
/** The logical id of the stateless stack's CloudFormation parameter that reads SSM parameter `name`. */
function ssmRef(b: Built, name: string): string {
  const found = Object.entries(statelessParameters(b)).filter(([, p]) => p.Type.startsWith('AWS::SSM') && p.Default === name);
  expect(found, name).toHaveLength(1);
  return found[0][0];
}

describe('with an existing warehouse bucket', () => {
  it('the stateless stack names it directly, and the stateful stack creates no warehouse bucket', () => {
    const b = synthRask({ warehouseBucketName: 'my-lake' });
    const fns = Object.values(resourcesOfType(b.statelessTemplate, 'AWS::Lambda::Function'));
    expect(fns.some((f) => f.Properties!.Environment?.Variables?.RASK_WAREHOUSE_BUCKET === 'my-lake')).toBe(true);
    expect(JSON.stringify(b.stateTemplate.toJSON())).not.toContain('WarehouseBucketName');
    expect(Object.keys(resourcesOfType(b.stateTemplate, 'AWS::S3::Bucket'))).toHaveLength(2);
  });
});
