import { RemovalPolicy } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiDocument, asArray, flat, identityStatements, logicalId, resourcesOfType, synthRask } from './helpers.js';

/**
 * A non-default configuration in one synth: an existing warehouse bucket, DESTROY removal, an
 * API Gateway authorizer cache, a custom stage, alarm topic and web ACL.
 */

let built: ReturnType<typeof synthRask>;
beforeAll(() => {
  built = synthRask({
    stageName: 'v2',
    warehouseBucketName: 'my-lake',
    warehousePrefix: 'lance/tables/',
    removalPolicy: RemovalPolicy.DESTROY,
    authorizerCacheSeconds: 300,
    trashGraceDays: 7,
    managedVersioning: false,
    alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
    webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/rask/abc',
    createApiGatewayCloudWatchRole: false,
    storagePrefixes: ['projects/', 'teams/'],
    ratePrincipalPerSecond: 20,
    rateProjectPerSecond: 200,
    rateProjectBurst: 500,
    quotaTables: 1000,
    quotaKeysPerPrincipal: 5,
  });
});

describe('configuration variants', () => {
  it('uses an existing warehouse bucket without creating one, scoped to the configured prefix', () => {
    const buckets = Object.keys(resourcesOfType(built.template, 'AWS::S3::Bucket'));
    expect(buckets.some((id) => id.startsWith('StorageWarehouse'))).toBe(false);
    const objectResources = identityStatements(built.template)
      .filter((s) => asArray(s.statement.Action).includes('s3:PutObject'))
      .flatMap((s) => asArray(s.statement.Resource).map(flat));
    expect(objectResources).toContain('arn:<AWS::Partition>:s3:::my-lake/lance/tables/*');
    // (maintenance passes may also write their own reports under registry/reports/<pass>/, the
    // fan-out passes their pending markers under registry/p/*/maint/pending/<pass>/)
    // … and the change relay's change log and state (registry/changes/, registry/changes-relay/).
    for (const r of objectResources) expect(r).toMatch(/(\/registry\/(reports\/[a-z]+\/|p\/\*\/maint\/pending\/(sweep|index)\/|changes\/|changes-relay\/)?\*|my-lake\/lance\/tables\/\*)$/);
  });

  it('applies the DESTROY removal policy to the stack-owned buckets and the queue', () => {
    for (const bucket of Object.values(resourcesOfType(built.template, 'AWS::S3::Bucket'))) expect(bucket.DeletionPolicy).toBe('Delete');
    const [table] = Object.values(resourcesOfType(built.template, 'AWS::DynamoDB::GlobalTable'));
    expect(table.DeletionPolicy).toBe('Delete');
  });

  it('caches authorizer verdicts by x-api-key when asked to', () => {
    expect(apiDocument(built.template).components.securitySchemes.AdminKey['x-amazon-apigateway-authorizer']).toMatchObject({
      identitySource: 'method.request.header.x-api-key',
      authorizerResultTtlInSeconds: 300,
    });
  });

  it('passes the catalog settings to the functions', () => {
    const fn = resourcesOfType(built.template, 'AWS::Lambda::Function')[logicalId(built.template, 'AWS::Lambda::Function', 'FunctionsMetaFunction')];
    expect(fn.Properties!.Environment.Variables).toMatchObject({
      RASK_WAREHOUSE_BUCKET: 'my-lake',
      RASK_WAREHOUSE_PREFIX: 'lance/tables/',
      RASK_TRASH_GRACE_DAYS: '7',
      RASK_MANAGED_VERSIONING: 'false',
      // The declared storage, inside the warehouse prefix its IAM covers.
      RASK_STORAGE_ROOTS: 's3://my-lake/lance/tables/projects/,s3://my-lake/lance/tables/teams/',
    });
  });

  it('passes the rate limits and quotas that are set, and only those, to the API functions', () => {
    for (const name of ['FunctionsMetaFunction', 'FunctionsDataFunction']) {
      const fn = resourcesOfType(built.template, 'AWS::Lambda::Function')[logicalId(built.template, 'AWS::Lambda::Function', name)];
      const vars = fn.Properties!.Environment.Variables as Record<string, string>;
      expect(vars).toMatchObject({
        RASK_RATE_PRINCIPAL_PER_SECOND: '20',
        RASK_RATE_PROJECT_PER_SECOND: '200',
        RASK_RATE_PROJECT_BURST: '500',
        RASK_QUOTA_TABLES: '1000',
        RASK_QUOTA_KEYS_PER_PRINCIPAL: '5',
      });
      // Left at their defaults (off): not written, so the functions' own defaults apply.
      for (const unset of ['RASK_RATE_PRINCIPAL_BURST', 'RASK_QUOTA_NAMESPACES', 'RASK_QUOTA_PRINCIPALS']) expect(vars).not.toHaveProperty(unset);
    }
  });

  it('wires alarms to the topic, the stage to the web ACL, and skips the account logging role', () => {
    const alarms = Object.values(resourcesOfType(built.template, 'AWS::CloudWatch::Alarm'));
    expect(alarms.length, 'no alarms at all: the loop below would check nothing').toBeGreaterThan(0);
    for (const a of alarms) expect(a.Properties!.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:ops']);
    built.template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    built.template.resourceCountIs('AWS::ApiGateway::Account', 0);
    built.template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'v2' });
  });

  it('still passes cdk-nag', () => {
    const report = new AwsSolutionsChecks().validateScope(built.app);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(' ')}`)).toEqual([]);
  });
});
