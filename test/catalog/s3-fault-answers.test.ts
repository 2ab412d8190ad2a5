// @covers CreateNamespace, DescribeNamespace, DeclareTable, DescribeTable, DropTable, RenameTable
/**
 * What a door answers when S3 fails under it (issue #35), through the metadata Lambda's own
 * composition (createAwsApp + the API Gateway handler, with the production S3 client settings of
 * lib/app/aws-s3.ts) over the stateful S3 fake, one placed fault at a time
 * (test/support/s3-faults.ts, inside the SDK's retry loop). The port-level rules are pinned in
 * test/contract/object-store.suite.ts; these show that they reach the client as the right answer.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { createS3Client } from '../../lib/app/aws-s3.js';
import { loadAwsConfig } from '../../lib/config.js';
import { lambdaHandler } from '../../lib/http/apigw-adapter.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { lambdaContext } from '../support/lambda-context.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';
import { attachS3Fake, createS3Faults, interceptS3Clients, type FaultRequest, type S3Faults } from '../support/s3-faults.js';

const REGISTRY = 'reg-bucket';
const WAREHOUSE = 'wh-bucket';
const quiet = { error: () => undefined, warn: () => undefined };

function event(method: string, path: string, body?: unknown): APIGatewayProxyEvent {
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers: { 'content-type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: { delimiter: '$' },
    multiValueQueryStringParameters: { delimiter: ['$'] },
    pathParameters: null,
    stageVariables: null,
    // What API Gateway's authorizer hands the function for the bootstrap admin key.
    requestContext: { requestId: randomUUID(), authorizer: { principal: 'admin', platformAdmin: 'true', via: 'admin-key' } } as never,
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

interface Door {
  readonly status: number;
  readonly code?: number;
  readonly headers: Record<string, string>;
  readonly body: any;
}

const answer = (res: APIGatewayProxyResult): Door => {
  const body = res.body ? JSON.parse(res.body) : undefined;
  return { status: res.statusCode, code: body?.code, headers: (res.headers ?? {}) as Record<string, string>, body };
};

/** A registry record's key ends in `/t/+n/<ns>` (namespace) or `/<ns>/+t/<table>` (table); `prot/+n/<ns>` is its protection. */
const record = (suffix: string, op: FaultRequest['op'], extra: (r: FaultRequest) => boolean = () => true) => (r: FaultRequest) =>
  r.bucket === REGISTRY && r.op === op && r.key.endsWith(suffix) && extra(r);

describe('doors over failing S3 (metadata Lambda composition, production S3 client settings)', () => {
  let fake: S3Fake;
  let faults: S3Faults;
  let call: (method: string, path: string, body?: unknown) => Promise<Door>;

  beforeEach(async () => {
    // Signing needs credentials; the fake never checks them.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'fake');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'fake');
    fake = createS3Fake();
    faults = createS3Faults({ seed: 35 });
    const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: REGISTRY, RASK_WAREHOUSE_BUCKET: WAREHOUSE, AWS_REGION: 'us-east-1' });
    const { router } = await createAwsApp(config, metaHandlers, attachS3Fake(createS3Client(config), fake, faults), undefined, { logger: quiet });
    const handler = lambdaHandler(async () => router, quiet);
    call = async (method, path, body) => answer(await handler(event(method, path, body)));
    expect((await call('POST', '/v1/namespace/ns/create', { id: ['ns'] })).status).toBe(200);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    fake.mock.restore();
  });

  const describeTable = (name: string) => call('POST', `/v1/table/ns%24${name}/describe`, { id: ['ns', name] });
  const claims = () => [...fake.bucketContents(REGISTRY).keys()].filter((k) => k.endsWith('/+c'));

  it('CreateNamespace whose put-if-absent applied but whose answer was lost answers 200, not "already exists"', async () => {
    faults.place(record('/t/+n/fresh', 'PUT'), { kind: 'timeout', afterApply: true });
    expect(await call('POST', '/v1/namespace/fresh/create', { id: ['fresh'] })).toMatchObject({ status: 200 });
    expect(faults.pending()).toBe(0);
    expect((await call('POST', '/v1/namespace/fresh/describe', { id: ['fresh'] })).status).toBe(200);
  });

  it('DeclareTable whose record write applied but whose answer was lost answers 200 and keeps its location claim', async () => {
    faults.place(record('/ns/+t/t', 'PUT'), { kind: 'reset', afterApply: true });
    const declared = await call('POST', '/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    expect(declared).toMatchObject({ status: 200 });
    expect(faults.pending()).toBe(0);
    expect((await describeTable('t')).body.location).toBe(declared.body.location);
    expect(claims()).toHaveLength(1);
  });

  it('DropTable whose record delete applied but whose answer was lost answers 200, not "not found", and leaves no claim', async () => {
    expect((await call('POST', '/v1/table/ns%24d/declare', { id: ['ns', 'd'] })).status).toBe(200);
    faults.place(record('/ns/+t/d', 'DELETE'), { kind: 'timeout', afterApply: true });
    expect(await call('POST', '/v1/table/ns%24d/drop', { id: ['ns', 'd'] })).toMatchObject({ status: 200 });
    expect(faults.pending()).toBe(0);
    expect((await describeTable('d')).code).toBe(4);
    expect(claims()).toEqual([]);
  });

  it('RenameTable whose destination If-Match PUT meets 409 ConditionalRequestConflict retries it: the renamed table is there', async () => {
    expect((await call('POST', '/v1/table/ns%24a/declare', { id: ['ns', 'a'] })).status).toBe(200);
    faults.place(record('/ns/+t/b', 'PUT', (r) => r.input.IfMatch !== undefined), { kind: 'conflict' });
    expect(await call('POST', '/v1/table/ns%24a/rename', { id: ['ns', 'a'], new_table_name: 'b' })).toMatchObject({ status: 200 });
    expect(faults.pending()).toBe(0);
    expect((await describeTable('b')).status).toBe(200);
    expect((await describeTable('a')).code).toBe(4);
  });

  it('answers throttling that outlasts the SDK`s retries with 503 / code 17 and Retry-After, and nothing changes', async () => {
    faults.place(record('/t/+n/ns', 'GET'), { kind: 'slowdown' }, 3);
    const res = await call('POST', '/v1/namespace/ns/describe', { id: ['ns'] });
    expect(res).toMatchObject({ status: 503, code: 17 });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The SDK made its three attempts (standard mode), all throttled.
    expect(faults.injected().map((f) => f.request.attempt)).toEqual([1, 2, 3]);
    // No bucket or key in what the client is told.
    expect(JSON.stringify(res.body)).not.toMatch(/reg-bucket|registry\//);
  });

  it('answers S3 5xx and timeouts that outlast the SDK`s retries with 503 / code 17, never 500 / 18', async () => {
    for (const kind of ['internal', 'timeout', 'reset'] as const) {
      faults.place(record('/ns/+t/x', 'PUT'), { kind }, 3);
      // The write's outcome is unknown, so the port reads the key back; that read fails too.
      faults.place(record('/ns/+t/x', 'GET'), { kind }, 3);
      const res = await call('POST', '/v1/table/ns%24x/declare', { id: ['ns', 'x'] });
      expect(res, kind).toMatchObject({ status: 503, code: 17 });
      expect(res.headers['retry-after']).toBeDefined();
    }
  });
});

describe('a door over S3 that stops answering', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('answers 503 / code 17 at its deadline: the SDK`s retries stop there, and so does the attempt in flight', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'fake');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'fake');
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 35 });
    const config = loadAwsConfig({
      RASK_REGISTRY_BUCKET: REGISTRY,
      RASK_WAREHOUSE_BUCKET: WAREHOUSE,
      AWS_REGION: 'us-east-1',
      RASK_COMMIT_DEADLINE_MS: '600',
    });
    const { router } = await createAwsApp(config, metaHandlers, attachS3Fake(createS3Client(config), fake, faults), undefined, { logger: quiet });
    const handler = lambdaHandler(async () => router, quiet);
    expect((await handler(event('POST', '/v1/namespace/ns/create', { id: ['ns'] }))).statusCode).toBe(200);
    // Every attempt hangs for 400 ms and then times out: three of them would take 1.2 s and more.
    faults.place(record('/t/+n/ns', 'GET'), { kind: 'timeout', delayMs: 400 }, 10);
    const started = performance.now();
    const res = answer(await handler(event('POST', '/v1/namespace/ns/describe', { id: ['ns'] })));
    const elapsed = performance.now() - started;
    expect(res).toMatchObject({ status: 503, code: 17 });
    expect(res.headers['retry-after']).toBeDefined();
    expect(elapsed).toBeLessThan(600 + 250);
    expect(faults.injected().length).toBeLessThanOrEqual(2);
    fake.mock.restore();
  });
});

describe('the metadata Lambda entry (functions/api-meta.ts) over throttled S3', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('answers 503 / code 17 with Retry-After, its own S3 client doing the SDK`s retries', async () => {
    Object.assign(process.env, {
      RASK_REGISTRY_BUCKET: REGISTRY,
      RASK_WAREHOUSE_BUCKET: WAREHOUSE,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'fake',
      AWS_SECRET_ACCESS_KEY: 'fake',
      RASK_LOG_LEVEL: 'silent',
      // The retries-spent mode of the issue, through the configuration.
      RASK_S3_MAX_ATTEMPTS: '1',
    });
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 35 });
    const uninstall = interceptS3Clients(fake, faults);
    try {
      vi.resetModules();
      const { handler } = (await import('../../functions/api-meta.js')) as unknown as {
        handler: (e: APIGatewayProxyEvent, c: unknown) => Promise<APIGatewayProxyResult>;
      };
      expect((await handler(event('POST', '/v1/namespace/ns/create', { id: ['ns'] }), lambdaContext())).statusCode).toBe(200);
      faults.place((r) => r.op === 'GET' && r.key.endsWith('/t/+n/ns'), { kind: 'slowdown' });
      const res = answer(await handler(event('POST', '/v1/namespace/ns/describe', { id: ['ns'] }), lambdaContext()));
      expect(res).toMatchObject({ status: 503, code: 17 });
      expect(res.headers['retry-after']).toBe('2');
      expect(faults.injected()).toHaveLength(1); // RASK_S3_MAX_ATTEMPTS=1: no SDK retry
    } finally {
      uninstall();
    }
  });
});
