/**
 * What one request through a Lambda entry writes (issue 13, item 1): a structured Powertools log
 * line (request id, correlation id = the API request id the error body names as `instance`,
 * cold start) and CloudWatch EMF metrics (per-operation latency and errors, CAS conflicts,
 * credential vends, job outcomes, authorizer denials) — and never a secret: not the API key,
 * not vended credentials, not the admin key.
 */
import { randomUUID } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { S3Client } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../support/lambda-context.js';
import { createS3Fake, s3Error, type S3Fake } from '../support/s3-fake.js';
import { mintedCredentials } from '../support/sts.js';

const API_KEY = 'sk-live-super-secret-api-key';
const ADMIN_KEY = 'admin-key-0123456789-abcdefgh';

/** Everything the handlers print to stdout/stderr while `fn` runs, one entry per JSON line. */
async function capture<T>(fn: () => Promise<T>): Promise<{ result: T; lines: Record<string, any>[]; text: string }> {
  const chunks: string[] = [];
  const grab = (chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(grab);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(grab);
  try {
    const result = await fn();
    const text = chunks.join('');
    const lines = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>);
    return { result, lines, text };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** The EMF blobs among the lines, as {metric name → value} with their dimension names. */
function emf(lines: Record<string, any>[]) {
  return lines
    .filter((l) => l._aws?.CloudWatchMetrics)
    .map((l) => {
      const directive = l._aws.CloudWatchMetrics[0];
      const names: string[] = directive.Metrics.map((m: { Name: string }) => m.Name);
      return {
        namespace: directive.Namespace as string,
        dimensions: directive.Dimensions[0] as string[],
        values: Object.fromEntries(names.map((n) => [n, l[n]])) as Record<string, number | number[]>,
        line: l,
      };
    });
}

function apiEvent(method: string, path: string, body?: unknown): APIGatewayProxyEvent {
  const requestId = randomUUID();
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: { delimiter: '$' },
    multiValueQueryStringParameters: { delimiter: ['$'] },
    pathParameters: null,
    stageVariables: null,
    requestContext: { requestId, authorizer: { principal: 'admin', platformAdmin: 'true', via: 'admin-key' } } as unknown as APIGatewayProxyEvent['requestContext'],
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

describe('the metadata function', () => {
  let fake: S3Fake;
  const sts = mockClient(STSClient);
  let meta: (e: APIGatewayProxyEvent, c: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyResult>;
  const saved = { ...process.env };

  beforeAll(async () => {
    Object.assign(process.env, {
      RASK_REGISTRY_BUCKET: 'reg-bucket',
      RASK_WAREHOUSE_BUCKET: 'wh-bucket',
      RASK_VENDING_ROLE_ARN: 'arn:aws:iam::123456789012:role/rask-vending',
      AWS_REGION: 'eu-west-1',
      RASK_LOG_LEVEL: 'info',
      // What Lambda sets for an on-demand container; Powertools reports cold starts only then.
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    });
    fake = createS3Fake({ target: S3Client });
    sts.on(AssumeRoleCommand).callsFake(async (input: AssumeRoleCommandInput) => mintedCredentials(1, Date.now(), input));
  });
  // A freshly loaded handler per test: Powertools keeps the cold-start flag on the logger and
  // metrics the module creates, so only a fresh module's first invocation is a cold start.
  beforeEach(async () => {
    vi.resetModules();
    meta = (await import('../../functions/api-meta.js')).handler as never;
  });
  afterAll(() => {
    fake.mock.restore();
    sts.restore();
    process.env = saved;
  });

  it('one request: a structured request line with request and correlation ids, and per-operation EMF', async () => {
    const event = apiEvent('POST', '/v1/namespace/obs/create', {});
    const { result, lines } = await capture(() => meta(event, lambdaContext({ awsRequestId: 'lambda-1' })));
    expect(result.statusCode).toBe(200);
    const request = lines.find((l) => l.message === 'request');
    expect(request).toMatchObject({
      level: 'INFO',
      service: 'rask-meta',
      method: 'POST',
      path: '/v1/namespace/obs/create',
      status: 200,
      requestId: event.requestContext.requestId,
      correlation_id: event.requestContext.requestId,
      function_request_id: 'lambda-1',
      cold_start: true,
    });
    expect(typeof request?.ms).toBe('number');
    // The authorization decision goes through the same logger (level, service, request id).
    expect(lines.find((l) => l.message === 'authorization')).toMatchObject({
      level: 'INFO',
      service: 'rask-meta',
      requestId: event.requestContext.requestId,
      operation: 'CreateNamespace',
      decision: 'allow',
    });

    const blobs = emf(lines);
    const op = blobs.find((b) => 'Latency' in b.values);
    expect(op?.namespace).toBe('rask');
    expect(op?.dimensions).toEqual(['service', 'operation']);
    expect(op?.line).toMatchObject({ service: 'meta', operation: 'CreateNamespace' });
    expect(op?.values).toMatchObject({ Requests: 1, ClientErrors: 0, ServerErrors: 0 });
    expect(blobs.some((b) => 'ColdStart' in b.values)).toBe(true);
  });

  it('an error: the line carries the code and the request id the body names as instance; ClientErrors = 1', async () => {
    // A warm container: an earlier invocation had the cold start.
    const warm = await capture(() => meta(apiEvent('GET', '/v1/namespace/%24/list'), lambdaContext()));
    expect(warm.result.statusCode).toBe(200);
    const event = apiEvent('POST', '/v1/table/missing%24t/describe', {});
    const { result, lines } = await capture(() => meta(event, lambdaContext()));
    const body = JSON.parse(result.body) as { code: number; instance: string };
    expect(result.statusCode).toBe(404);
    expect(lines.find((l) => l.message === 'request')).toMatchObject({ status: 404, code: body.code, requestId: body.instance, correlation_id: body.instance });
    const op = emf(lines).find((b) => 'Latency' in b.values);
    expect(op?.line.operation).toBe('DescribeTable');
    expect(op?.values).toMatchObject({ ClientErrors: 1, ServerErrors: 0 });
    expect(lines.find((l) => l.message === 'request')?.cold_start).toBe(false);
  });

  it('a declare that vends and loses one CAS race: CredentialVend and CasConflict metrics, no secret in any line', async () => {
    await capture(() => meta(apiEvent('POST', '/v1/namespace/vend/create', {}), lambdaContext()));
    // The table record's first put-if-absent loses a race (412), the retry wins. (A 409
    // ConditionalRequestConflict is no lost race: the S3 store retries it itself, issue #35.)
    fake.injectFailure('registry/p/default/t/vend/+t/t1', s3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold'), 'reg-bucket');
    const { result, lines, text } = await capture(() => meta(apiEvent('POST', '/v1/table/vend%24t1/declare', {}), lambdaContext()));
    expect(result.statusCode).toBe(200);
    const vended = JSON.parse(result.body).storage_options as Record<string, string>;
    expect(vended.aws_secret_access_key).toBe('secret-1');
    const op = emf(lines).find((b) => 'Latency' in b.values);
    expect(op?.line.operation).toBe('DeclareTable');
    expect(op?.values).toMatchObject({ CredentialVend: 1, CredentialVendSts: 1, CasConflict: 1 });
    for (const secret of [API_KEY, vended.aws_secret_access_key, vended.aws_session_token]) expect(text).not.toContain(secret);
  });
});

describe('the authorizer', () => {
  const sm = mockClient(SecretsManagerClient);
  const saved = { ...process.env };
  let authorizer: (e: APIGatewayRequestAuthorizerEvent, c: ReturnType<typeof lambdaContext>) => Promise<{ policyDocument: { Statement: { Effect: string }[] } }>;

  beforeAll(async () => {
    process.env.RASK_ADMIN_KEY_SECRET_ID = 'rask/admin-key';
    process.env.RASK_ADMIN_KEY_CACHE_SECONDS = '300';
    sm.on(GetSecretValueCommand).resolves({ SecretString: ADMIN_KEY });
    authorizer = (await import('../../functions/authorizer.js')).handler as never;
  });
  afterAll(() => {
    sm.restore();
    process.env = saved;
  });
  beforeEach(() => sm.resetHistory());
  afterEach(() => vi.restoreAllMocks());

  const authEvent = (key: string): APIGatewayRequestAuthorizerEvent =>
    ({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/GET/v1/namespace/list',
      headers: { 'x-api-key': key },
      requestContext: { requestId: 'api-req-9' },
    }) as unknown as APIGatewayRequestAuthorizerEvent;

  it('allows the key, denies another, reads the secret once within its max age, logs and counts without secrets', async () => {
    const { result: allowed, lines: l1, text: t1 } = await capture(() => authorizer(authEvent(ADMIN_KEY), lambdaContext()));
    const { result: denied, lines: l2, text: t2 } = await capture(() => authorizer(authEvent('wrong-key-but-also-secret-123'), lambdaContext()));
    expect(allowed.policyDocument.Statement[0].Effect).toBe('Allow');
    expect(denied.policyDocument.Statement[0].Effect).toBe('Deny');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    expect(emf(l1).find((b) => 'AuthorizerDenied' in b.values)?.values).toMatchObject({ AuthorizerDenied: 0, AuthorizerAllowed: 1 });
    expect(emf(l2).find((b) => 'AuthorizerDenied' in b.values)?.values).toMatchObject({ AuthorizerDenied: 1, AuthorizerAllowed: 0 });
    expect(l2.find((l) => l.message === 'authorizer deny')).toMatchObject({
      level: 'INFO',
      service: 'rask-authorizer',
      outcome: 'deny',
      reason: 'key does not match',
      correlation_id: 'api-req-9',
    });
    for (const text of [t1, t2]) {
      expect(text).not.toContain(ADMIN_KEY);
      expect(text).not.toContain('wrong-key-but-also-secret-123');
    }
  });
});

describe('the jobs function', () => {
  it('writes a count per job outcome, zeros included', async () => {
    const { Metrics } = await import('@aws-lambda-powertools/metrics');
    const { recordJobMetrics } = await import('../../lib/observability/jobs-metrics.js');
    const metrics = new Metrics({ namespace: 'rask', serviceName: 'jobs' });
    recordJobMetrics(metrics, { ran: 3, outcomes: { succeeded: 2, failed: 1 }, unreadable: 0, problems: 0, pruned: 0 });
    const { lines } = await capture(async () => metrics.publishStoredMetrics());
    expect(emf(lines)[0].values).toEqual({
      JobsSucceeded: 2,
      JobsRetrying: 0,
      JobsFailed: 1,
      JobsLost: 0,
      JobsReleased: 0,
      JobRecordsUnreadable: 0,
    });
  });

  it('publishes one job outcome at once, on its own line', async () => {
    const { Metrics } = await import('@aws-lambda-powertools/metrics');
    const { publishJobOutcome } = await import('../../lib/observability/jobs-metrics.js');
    const metrics = new Metrics({ namespace: 'rask', serviceName: 'jobs' });
    const { lines } = await capture(async () => publishJobOutcome(metrics, 'failed'));
    expect(emf(lines).map((b) => b.values)).toEqual([{ JobsFailed: 1 }]);
  });
});
