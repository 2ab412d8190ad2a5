import { CONSOLE_OPERATIONS } from '../../infra/constructs/console-routes.js';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_ERRORS, errorTemplate } from '../../infra/constructs/api.js';
import { MAINTENANCE_PASSES } from '../../infra/constructs/maintenance.js';
import { ALL_OPERATIONS as OPERATIONS } from '../../lib/contract/operations.js';
import {
  apiDocument,
  asArray,
  documentMethods,
  flat,
  identityStatements,
  logicalId,
  resourcesOfType,
  synthRask,
} from './helpers.js';

/** Template assertions on the default configuration (bundling skipped). */

let built: ReturnType<typeof synthRask>;
beforeAll(() => {
  built = synthRask();
});

const template = () => built.template;
const fnId = (prefix: string) => logicalId(template(), 'AWS::Lambda::Function', prefix);

describe('API routes come from the operation table', () => {
  const expected = OPERATIONS.flatMap((op) => op.methods.map((m) => ({ key: `${m} ${op.path}`, op })));
  // Project base URIs: one proxy resource to the data function (every handler), not a copy per method.
  const proxied = ['GET /projects/{project}/{proxy+}', 'POST /projects/{project}/{proxy+}'];
  // The web console's files (docs/console.md): served by the metadata function, without the authorizer.
  const console = ['GET /console', 'GET /console/{file}'];

  it('has exactly one method per (path, method) of the table in the API document, and nothing else', () => {
    const routes = documentMethods(template());
    expect(expected.length).toBeGreaterThanOrEqual(54);
    expect([...routes.keys()].sort()).toEqual([...expected.map((e) => e.key), ...proxied, ...console].sort());
    for (const key of proxied) expect(routes.get(key)!.functionRef).toBe(fnId('FunctionsDataFunction'));
    for (const key of console) expect(routes.get(key)!.functionRef).toBe(fnId('FunctionsMetaFunction'));
  });

  it('defines the routes in the document: no AWS::ApiGateway::Resource, ::Method, ::Authorizer or ::GatewayResponse', () => {
    for (const type of ['Resource', 'Method', 'Authorizer', 'GatewayResponse', 'RequestValidator']) {
      expect(Object.keys(resourcesOfType(template(), `AWS::ApiGateway::${type}`)), type).toEqual([]);
    }
  });

  it('sends each operation to the function of its bundle, as a Lambda proxy', () => {
    const routes = documentMethods(template());
    const byBundle = { meta: fnId('FunctionsMetaFunction'), data: fnId('FunctionsDataFunction') };
    for (const { key, op } of expected) {
      const route = routes.get(key)!;
      expect(route.functionRef, key).toBe(byBundle[op.bundle]);
      expect(route.integration).toMatchObject({ type: 'aws_proxy', httpMethod: 'POST' });
      expect(route.operationId).toBe(op.operationId);
    }
  });

  it('puts the admin-key authorizer on every method but the console\'s files', () => {
    const routes = [...documentMethods(template()).values()];
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      // The console's static files: public, no secret in them; the calls they make are authorized.
      expect(route.secured, route.key).toBe(!(CONSOLE_OPERATIONS as readonly string[]).includes(route.operationId));
    }
    const paths = apiDocument(template()).paths as Record<string, Record<string, { security: unknown[] }>>;
    expect(paths['/v1/table/{id}/create'].post.security).toEqual([{ AdminKey: [] }]);
    expect(paths['/console'].get.security).toEqual([]);
  });

  it('uses a REQUEST authorizer without an API Gateway cache, so x-api-key and Bearer both work', () => {
    const scheme = apiDocument(template()).components.securitySchemes.AdminKey;
    expect(scheme).toMatchObject({ type: 'apiKey', 'x-amazon-apigateway-authtype': 'custom' });
    const authorizer = scheme['x-amazon-apigateway-authorizer'];
    expect(authorizer).toMatchObject({ type: 'request', authorizerResultTtlInSeconds: 0 });
    expect(authorizer).not.toHaveProperty('identitySource');
    expect(flat(authorizer.authorizerUri)).toContain(`<${fnId('AuthAuthorizerFunction')}.Arn>`);
  });

  it('runs the authorizer in keys mode without rask:jwt* context (jwt mode: test/infra/auth-context.test.ts)', () => {
    const env = resourcesOfType(template(), 'AWS::Lambda::Function')[fnId('AuthAuthorizerFunction')].Properties!.Environment.Variables;
    expect(env.RASK_AUTH).toBe('keys');
    expect(Object.keys(env).filter((k) => k.startsWith('RASK_JWT_'))).toEqual([]);
  });

  it('grants API Gateway one invoke permission per function, not two per method, scoped to this API', () => {
    const permissions = Object.values(resourcesOfType(template(), 'AWS::Lambda::Permission'));
    const byApi = permissions.filter((p) => p.Properties!.Principal === 'apigateway.amazonaws.com');
    expect(byApi).toHaveLength(3); // meta, data, authorizer
    const api = logicalId(template(), 'AWS::ApiGateway::RestApi', 'Api');
    const sources = byApi.map((p) => flat(p.Properties!.SourceArn)).sort();
    expect(sources).toEqual(
      [
        `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${api}>/*/*/*`,
        `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${api}>/*/*/*`,
        `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${api}>/authorizers/*`,
      ].sort(),
    );
    // The only other invokers: the schedules of the jobs function and of each maintenance pass.
    const others = permissions.filter((p) => p.Properties!.Principal !== 'apigateway.amazonaws.com');
    expect(others.length).toBe(1 + MAINTENANCE_PASSES.length + 1); // jobs, the passes, the change relay
    for (const p of others) expect(p.Properties!.Principal).toBe('events.amazonaws.com');
  });

  it('stays within API Gateway and CloudFormation limits', () => {
    // API Gateway's own limit: 300 resources (path segments) per REST API.
    const segments = new Set(Object.keys(apiDocument(template()).paths).flatMap((p) => p.split('/').filter(Boolean).map((_, i, all) => all.slice(0, i + 1).join('/'))));
    expect(segments.size).toBeLessThan(300);
    expect(Object.keys(template().toJSON().Resources).length).toBeLessThan(500);
  });
});

describe('API settings', () => {
  it('is a regional REST API that passes Arrow (and content-type-less) bodies as binary', () => {
    template().hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] }, FailOnWarnings: true });
    expect(apiDocument(template())['x-amazon-apigateway-binary-media-types']).toEqual(
      expect.arrayContaining(['application/vnd.apache.arrow.stream', 'application/vnd.apache.arrow.file', '*/*']),
    );
  });

  it('throttles the stage, writes JSON access logs and error-level execution logs without bodies', () => {
    const [stage] = Object.values(resourcesOfType(template(), 'AWS::ApiGateway::Stage'));
    expect(stage.Properties!.StageName).toBe('prod');
    expect(stage.Properties!.MethodSettings).toEqual([
      expect.objectContaining({
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: 100,
        ThrottlingBurstLimit: 200,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
      }),
    ]);
    const format = JSON.parse(stage.Properties!.AccessLogSetting.Format);
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status', path: '$context.path' });
    expect(JSON.stringify(format)).not.toMatch(/header|x-api-key/i);
    expect(flat(stage.Properties!.AccessLogSetting.DestinationArn)).toMatch(/^<ApiAccessLogs[A-Z0-9]+\.Arn>$/);
  });

  it('rewrites API Gateway errors into the JSON error contract', () => {
    const responses = apiDocument(template())['x-amazon-apigateway-gateway-responses'] as Record<string, any>;
    const byType = new Map(Object.entries(responses));
    const required: Record<string, { code: number; status?: string }> = {
      UNAUTHORIZED: { code: 16, status: '401' },
      ACCESS_DENIED: { code: 16, status: '401' },
      MISSING_AUTHENTICATION_TOKEN: { code: 0, status: '404' },
      REQUEST_TOO_LARGE: { code: 13, status: '413' },
      THROTTLED: { code: 21, status: '429' },
      DEFAULT_4XX: { code: 13 },
      DEFAULT_5XX: { code: 18 },
    };
    for (const [type, { code, status }] of Object.entries(required)) {
      const r = byType.get(type);
      expect(r, type).toBeDefined();
      expect(r!.responseParameters).toEqual({ 'gatewayresponse.header.Content-Type': "'application/json'" });
      if (status) expect(r!.statusCode, type).toBe(status);
      // What API Gateway would send, with its variables filled in.
      const body = JSON.parse(
        (r!.responseTemplates['application/json'] as string)
          .replace('$context.requestId', 'req-1')
          .replace('$context.error.messageString', '"Missing Authentication Token"'),
      );
      expect(body).toEqual({ code, error: expect.any(String), instance: 'req-1' });
    }
    expect(byType.size).toBe(GATEWAY_ERRORS.length);
  });

  it('never interpolates request data into error bodies', () => {
    for (const mapping of GATEWAY_ERRORS) {
      const variables = errorTemplate(mapping).match(/\$[a-zA-Z.]+/g) ?? [];
      for (const v of variables) expect(['$context.requestId', '$context.error.messageString']).toContain(v);
    }
  });

  it('outputs a client URI without a trailing slash, and how to read the key', () => {
    const outputs = template().toJSON().Outputs;
    expect(flat(outputs.Endpoint.Value)).toMatch(/^https:\/\/<Api[A-Z0-9]+>\.execute-api\.<AWS::Region>\.<AWS::URLSuffix>\/prod$/);
    expect(flat(outputs.ReadAdminKeyCommand.Value)).toContain('aws secretsmanager get-secret-value --secret-id <AuthAdminKey');
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['AdminKeySecretName', 'RegistryBucketName', 'WarehouseBucketName']));
  });
});

describe('functions', () => {
  it('run nodejs22.x from ESM bundles', () => {
    const fns = Object.values(resourcesOfType(template(), 'AWS::Lambda::Function'));
    expect(fns).toHaveLength(4 + MAINTENANCE_PASSES.length + 1); // meta, data, jobs, authorizer, maintenance passes, change relay
    for (const fn of fns) expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Handler: 'index.handler' });
  });

  it('gives the LanceDB layer to the data and jobs functions only', () => {
    const layerId = logicalId(template(), 'AWS::Lambda::LayerVersion', 'FunctionsLanceDbLayer');
    const fns = resourcesOfType(template(), 'AWS::Lambda::Function');
    expect(fns[fnId('FunctionsDataFunction')].Properties!.Layers).toEqual([{ Ref: layerId }]);
    expect(fns[fnId('FunctionsJobsFunction')].Properties!.Layers).toEqual([{ Ref: layerId }]);
    expect(fns[fnId('FunctionsJobsFunction')].Properties!.Architectures).toEqual(['x86_64']);
    expect(fns[fnId('FunctionsMetaFunction')].Properties!.Layers).toBeUndefined();
    expect(fns[fnId('AuthAuthorizerFunction')].Properties!.Layers).toBeUndefined();
    template().hasResourceProperties('AWS::Lambda::LayerVersion', {
      CompatibleRuntimes: ['nodejs22.x'],
      CompatibleArchitectures: ['x86_64'],
    });
    expect(fns[fnId('FunctionsDataFunction')].Properties!.Architectures).toEqual(['x86_64']);
    expect(fns[fnId('FunctionsMetaFunction')].Properties!.Architectures).toEqual(['arm64']);
  });

  it('configure the catalog through RASK_* variables', () => {
    const fns = resourcesOfType(template(), 'AWS::Lambda::Function');
    for (const prefix of ['FunctionsMetaFunction', 'FunctionsDataFunction', 'FunctionsJobsFunction']) {
      const env = fns[fnId(prefix)].Properties!.Environment.Variables;
      expect(env).toMatchObject({
        RASK_REGISTRY_PREFIX: 'registry/',
        RASK_WAREHOUSE_PREFIX: 'warehouse/',
        RASK_MANAGED_VERSIONING: 'true',
        RASK_TRASH_GRACE_DAYS: '0',
        RASK_PROJECT: 'default',
        RASK_WAREHOUSE: 'default',
        MALLOC_ARENA_MAX: '2',
        GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536',
      });
      expect(flat(env.RASK_REGISTRY_BUCKET)).toMatch(/^<StorageRegistry/);
      expect(flat(env.RASK_WAREHOUSE_BUCKET)).toMatch(/^<StorageWarehouse/);
      if (prefix !== 'FunctionsJobsFunction') expect(flat(env.RASK_VENDING_ROLE_ARN)).toMatch(/^<FunctionsVendingRole[A-Z0-9]+\.Arn>$/);
    }
    // Jobs vend nothing.
    expect(fns[fnId('FunctionsJobsFunction')].Properties!.Environment.Variables.RASK_VENDING_ROLE_ARN).toBeUndefined();
    // Each API function's request deadline leaves it 3 s before its Lambda timeout to answer 503.
    for (const prefix of ['FunctionsMetaFunction', 'FunctionsDataFunction']) {
      const { Timeout, Environment } = fns[fnId(prefix)].Properties!;
      expect(Number(Environment.Variables.RASK_COMMIT_DEADLINE_MS), prefix).toBe(Timeout * 1000 - 3000);
    }
    // Enqueue (data), describe/alter (meta) and run (jobs) must all use the one DynamoDB queue.
    const queueId = logicalId(template(), 'AWS::DynamoDB::GlobalTable', 'WorkQueueTable');
    for (const f of ['FunctionsJobsFunction', 'FunctionsDataFunction', 'FunctionsMetaFunction']) {
      expect(flat(fns[fnId(f)].Properties!.Environment.Variables.RASK_WORK_QUEUE_TABLE), f).toBe(`<${queueId}>`);
    }
  });

  it('let the metadata function, and only it, invoke the data function for detailed metadata', () => {
    const fns = resourcesOfType(template(), 'AWS::Lambda::Function');
    const metaEnv = fns[fnId('FunctionsMetaFunction')].Properties!.Environment.Variables;
    expect(flat(metaEnv.RASK_DATA_FUNCTION_NAME)).toBe(`<${fnId('FunctionsDataFunction')}>`);
    const invokers = Object.values(resourcesOfType(template(), 'AWS::IAM::Policy')).flatMap((p) =>
      (p.Properties!.PolicyDocument.Statement as any[])
        .filter((st) => [st.Action].flat().includes('lambda:InvokeFunction'))
        .map((st) => ({ roles: flat(p.Properties!.Roles), resources: flat(st.Resource) })),
    );
    expect(invokers).toHaveLength(1);
    expect(invokers[0].roles).toMatch(/FunctionsMetaRole/);
    expect(invokers[0].resources).toContain(`<${fnId('FunctionsDataFunction')}.Arn>`);
  });

  it('log to their own log groups with a retention', () => {
    const fns = Object.values(resourcesOfType(template(), 'AWS::Lambda::Function'));
    const groups = resourcesOfType(template(), 'AWS::Logs::LogGroup');
    for (const fn of fns) {
      const group = groups[fn.Properties!.LoggingConfig.LogGroup.Ref];
      expect(group.Properties!.RetentionInDays).toBe(90);
    }
  });
});

describe('jobs function', () => {
  it('runs on a one-minute schedule, 15 minutes at most, with no Lambda or EventBridge retries', () => {
    const jobs = fnId('FunctionsJobsFunction');
    const fn = resourcesOfType(template(), 'AWS::Lambda::Function')[jobs];
    expect(fn.Properties).toMatchObject({ Timeout: 900, MemorySize: 4096 });
    const rules = Object.values(resourcesOfType(template(), 'AWS::Events::Rule')).filter((r) =>
      (r.Properties!.Targets as { Arn: unknown }[]).some((t) => JSON.stringify(t.Arn) === JSON.stringify({ 'Fn::GetAtt': [jobs, 'Arn'] })),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0].Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect(rules[0].Properties!.Targets).toEqual([
      expect.objectContaining({ Arn: { 'Fn::GetAtt': [jobs, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 300 } }),
    ]);
    template().hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: jobs }, MaximumRetryAttempts: 0 });
    const [permission] = Object.values(resourcesOfType(template(), 'AWS::Lambda::Permission')).filter(
      (p) => p.Properties!.Principal === 'events.amazonaws.com' && flat(p.Properties!.FunctionName).includes(jobs),
    );
    expect(permission.Properties!.FunctionName).toEqual({ 'Fn::GetAtt': [jobs, 'Arn'] });
    expect(flat(permission.Properties!.SourceArn)).toMatch(/^<JobsScheduleRule[A-Z0-9]+\.Arn>$/);
  });

  it('may use the registry and warehouse prefixes and the work queue, nothing else: no vending', () => {
    const role = logicalId(template(), 'AWS::IAM::Role', 'FunctionsJobsRole');
    const statements = identityStatements(template()).filter((s) => s.roles.includes(role));
    const actions = statements.flatMap((s) => asArray(s.statement.Action));
    expect(actions.some((a) => a.startsWith('sts:'))).toBe(false);
    expect(actions).toContain('dynamodb:UpdateItem');
    const s3Resources = statements
      .filter((s) => asArray(s.statement.Action).some((a) => a.startsWith('s3:')))
      .flatMap((s) => asArray(s.statement.Resource).map(flat));
    for (const r of s3Resources) expect(r).toMatch(/^<Storage(Registry|Warehouse)[A-Z0-9]+\.Arn>(\/(registry|warehouse)\/\*)?$/);
    expect(s3Resources.some((r) => r.endsWith('/registry/*'))).toBe(true);
    expect(s3Resources.some((r) => r.endsWith('/warehouse/*'))).toBe(true);
  });
});

describe('IAM', () => {
  const s3ObjectAction = (a: string) => /^s3:(Get|Put|Delete|Abort|ListMultipartUploadParts|Restore|Replicate)/.test(a) && a !== 's3:GetBucketLocation';

  it('has no Allow statement on Resource "*" except X-Ray\'s two write actions, which IAM cannot scope', () => {
    const xray = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
    for (const { owner, statement } of identityStatements(template())) {
      if (statement.Effect !== 'Allow') continue;
      if (asArray(statement.Action).every((a) => xray.includes(a as string))) continue;
      expect(asArray(statement.Resource).map(flat), `${owner}: ${JSON.stringify(statement)}`).not.toContain('*');
    }
  });

  it('scopes every S3 object action to the registry or warehouse prefix', () => {
    let checked = 0;
    for (const { owner, statement } of identityStatements(template())) {
      if (statement.Effect !== 'Allow' || !asArray(statement.Action).some(s3ObjectAction)) continue;
      for (const resource of asArray(statement.Resource).map(flat)) {
        if (owner.startsWith('AuthAuthorizer')) {
          // The authorizer reads key and principal records only (docs/governance.md).
          expect(resource, owner).toMatch(/^<StorageRegistry[A-Z0-9]+\.Arn>\/registry\/(apikeys|principals)\/\*$/);
          expect(asArray(statement.Action), owner).toEqual(['s3:GetObject']);
          checked++;
          continue;
        }
        // The maintenance passes may also write their own reports under registry/reports/<pass>/,
        // and the fan-out passes their pending markers under registry/p/*/maint/pending/<pass>/;
        // the change relay appends to the change log and keeps its state (registry/changes/, changes-relay/).
        const own = '(reports\\/[a-z]+\\/|p\\/\\*\\/maint\\/pending\\/(sweep|index)\\/|changes\\/|changes-relay\\/)?';
        expect(resource, owner).toMatch(new RegExp(`^<Storage(Registry|Warehouse)[A-Z0-9]+\\.Arn>\\/(registry|warehouse)\\/${own}\\*$`));
        if (resource.includes('Registry')) expect(resource).toMatch(new RegExp(`\\/registry\\/${own}\\*$`));
        if (resource.includes('Warehouse')) expect(resource).toMatch(/\/warehouse\/\*$/);
        checked++;
      }
      expect(asArray(statement.Action).every((a) => !a.includes('*')), owner).toBe(true);
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  it('limits listing to the prefixes', () => {
    let listing = 0;
    for (const { owner, statement } of identityStatements(template())) {
      if (!asArray(statement.Action).includes('s3:ListBucket')) continue;
      listing++;
      expect(statement.Condition, owner).toEqual({ StringLike: { 's3:prefix': [expect.stringMatching(/^(registry|warehouse)\/\*$/)] } });
    }
    expect(listing, 'no ListBucket statement found: nothing was checked').toBeGreaterThan(0);
  });

  it('lets only the catalog functions assume the vending role, whose ceiling is the warehouse prefix', () => {
    const roles = resourcesOfType(template(), 'AWS::IAM::Role');
    const vendingId = logicalId(template(), 'AWS::IAM::Role', 'FunctionsVendingRole');
    const trusted = roles[vendingId].Properties!.AssumeRolePolicyDocument.Statement.flatMap((s: any) =>
      asArray(s.Principal.AWS).map(flat),
    );
    const metaRole = logicalId(template(), 'AWS::IAM::Role', 'FunctionsMetaRole');
    const dataRole = logicalId(template(), 'AWS::IAM::Role', 'FunctionsDataRole');
    expect(trusted.sort()).toEqual([`<${dataRole}.Arn>`, `<${metaRole}.Arn>`].sort());
    expect(roles[vendingId].Properties!.MaxSessionDuration).toBe(3600);

    const vendingResources = identityStatements(template())
      .filter((s) => s.roles.includes(vendingId) && s.statement.Effect === 'Allow')
      .flatMap((s) => asArray(s.statement.Resource).map(flat));
    expect(vendingResources.length).toBeGreaterThan(0);
    for (const r of vendingResources) expect(r).toMatch(/^<StorageWarehouse/);
    expect(vendingResources).toContain(vendingResources.find((r) => r.endsWith('/warehouse/*')));
  });

  it('denies the vending role the registry bucket explicitly, in its own policy', () => {
    // An identity-policy Deny: a bucket-policy statement naming the role would make the
    // stateful stack depend on the stateless one (the role) and vice versa.
    const vendingId = logicalId(template(), 'AWS::IAM::Role', 'FunctionsVendingRole');
    const registryId = logicalId(template(), 'AWS::S3::Bucket', 'StorageRegistry');
    const denies = identityStatements(template()).filter((s) => s.roles.includes(vendingId) && s.statement.Effect === 'Deny');
    expect(denies).toHaveLength(1);
    expect(denies[0].statement.Action).toBe('s3:*');
    expect(asArray(denies[0].statement.Resource).map(flat).sort()).toEqual([`<${registryId}.Arn>`, `<${registryId}.Arn>/*`]);
  });

  it('gives the authorizer read access to the admin key and the key and principal records only', () => {
    const roleId = logicalId(template(), 'AWS::IAM::Role', 'AuthAuthorizerRole');
    const secretId = logicalId(template(), 'AWS::SecretsManager::Secret', 'AuthAdminKey');
    const statements = identityStatements(template()).filter((s) => s.roles.includes(roleId));
    const secretStatements = statements.filter((s) => asArray(s.statement.Action).some((a) => a.startsWith('secretsmanager:')));
    expect(secretStatements.map((s) => s.statement.Resource)).toEqual([{ Ref: secretId }]);
    const s3 = statements.filter((s) => asArray(s.statement.Action).some((a) => a.startsWith('s3:')));
    expect(s3.map((s) => asArray(s.statement.Action))).toEqual([['s3:GetObject']]);
    expect(asArray(s3[0].statement.Resource).map(flat).map((r) => r.replace(/^<[^>]+>/, ''))).toEqual(['/registry/apikeys/*', '/registry/principals/*']);
  });

  it('gives the functions that enqueue, describe and run jobs item-level access to the work queue and its named index', () => {
    const tableId = logicalId(template(), 'AWS::DynamoDB::GlobalTable', 'WorkQueueTable');
    const jobRoles = ['FunctionsMetaRole', 'FunctionsDataRole', 'FunctionsJobsRole'].map((r) => logicalId(template(), 'AWS::IAM::Role', r));
    const dynamo = identityStatements(template()).filter((s) => asArray(s.statement.Action).some((a) => a.startsWith('dynamodb:')));
    const queueRoles = dynamo.flatMap((s) => s.roles);
    for (const role of jobRoles) expect(queueRoles).toContain(role);
    for (const { roles, statement } of dynamo) {
      expect(roles.every((r) => jobRoles.includes(r) || r.startsWith('Maintenance'))).toBe(true);
      expect(asArray(statement.Action)).not.toContain('dynamodb:Scan');
      if (roles.every((r) => /^Maintenance(Sweep|Index)Role/.test(r))) {
        // The fan-out passes only read a job and put a new one: the table, not its index.
        expect(asArray(statement.Action).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
        expect(asArray(statement.Resource).map(flat)).toEqual([`<${tableId}.Arn>`]);
      } else expect(asArray(statement.Resource).map(flat).sort()).toEqual([`<${tableId}.Arn>`, `<${tableId}.Arn>/index/gsi1`]);
    }
  });

  it('attaches no AWS managed policy to the function roles', () => {
    for (const [id, role] of Object.entries(resourcesOfType(template(), 'AWS::IAM::Role'))) {
      if (id.startsWith('ApiCloudWatchRole')) continue; // API Gateway's account logging role (see nag acknowledgement)
      expect(role.Properties!.ManagedPolicyArns, id).toBeUndefined();
    }
  });
});

describe('storage', () => {
  it('applies bucket hygiene to every bucket the stack creates', () => {
    const buckets = resourcesOfType(template(), 'AWS::S3::Bucket');
    const policies = Object.values(resourcesOfType(template(), 'AWS::S3::BucketPolicy'));
    expect(Object.keys(buckets)).toHaveLength(3);
    for (const [id, bucket] of Object.entries(buckets)) {
      expect(bucket.Properties!.PublicAccessBlockConfiguration, id).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties!.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
      expect(bucket.Properties!.LifecycleConfiguration.Rules, id).toContainEqual(
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: expect.any(Number) } }),
      );
      expect(bucket.DeletionPolicy, id).toBe('Retain');
      expect(bucket.UpdateReplacePolicy, id).toBe('Retain');
      const policy = policies.find((p) => p.Properties!.Bucket.Ref === id);
      expect(policy?.Properties?.PolicyDocument.Statement, id).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('versions the registry and the warehouse, noncurrent versions expiring (the warehouse\'s after the trash grace, at least a day)', () => {
    const buckets = resourcesOfType(template(), 'AWS::S3::Bucket');
    const registry = buckets[logicalId(template(), 'AWS::S3::Bucket', 'StorageRegistry')].Properties!;
    const warehouse = buckets[logicalId(template(), 'AWS::S3::Bucket', 'StorageWarehouse')].Properties!;
    expect(registry.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(registry.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
    );
    // Idempotency keys outlive their longest window (30 days) by a day, then S3 removes them.
    expect(registry.LifecycleConfiguration.Rules).toContainEqual({ Id: 'expire-idempotency-keys', Prefix: 'registry/idem/', ExpirationInDays: 31, Status: 'Enabled' });
    expect(warehouse.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(warehouse.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 1 }, ExpiredObjectDeleteMarker: true }),
    );
    for (const b of [registry, warehouse]) expect(flat(b.LoggingConfiguration.DestinationBucketName)).toMatch(/^<StorageAccessLogs/);
  });

  it('keeps the warehouse\'s noncurrent versions for the trash grace, and leaves it unversioned when told', () => {
    const warehouseOf = (config: Parameters<typeof synthRask>[0]) => {
      const t = synthRask(config).template;
      return resourcesOfType(t, 'AWS::S3::Bucket')[logicalId(t, 'AWS::S3::Bucket', 'StorageWarehouse')].Properties!;
    };
    expect(warehouseOf({ trashGraceDays: 14 }).LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 14 } }),
    );
    const off = warehouseOf({ warehouseVersioning: false });
    expect(off.VersioningConfiguration).toBeUndefined();
    expect(JSON.stringify(off.LifecycleConfiguration.Rules)).not.toContain('NoncurrentVersionExpiration');
  }, 120_000);

  it('keeps the work queue on demand, with TTL and point-in-time recovery, retained', () => {
    const [table] = Object.values(resourcesOfType(template(), 'AWS::DynamoDB::GlobalTable'));
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
    });
    expect(table.Properties!.Replicas[0].PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
  });

  it('generates the admin key into Secrets Manager', () => {
    template().hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: 48, ExcludePunctuation: true }),
    });
  });
});

describe('alarms', () => {
  it('alarm on API 5xx and on every function error', () => {
    const alarms = Object.values(resourcesOfType(template(), 'AWS::CloudWatch::Alarm')).map((a) => a.Properties!);
    expect(alarms).toContainEqual(expect.objectContaining({ Namespace: 'AWS/ApiGateway', MetricName: '5XXError' }));
    const errorAlarms = alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === 'Errors');
    expect(errorAlarms).toHaveLength(4 + MAINTENANCE_PASSES.length + 1); // … and the change relay
    for (const a of alarms) expect(a.TreatMissingData).toBe('notBreaching');
  });
});
