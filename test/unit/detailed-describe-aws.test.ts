// @covers DescribeTable
import { InvokeCommand, LambdaClient, type InvokeCommandInput } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tableToIPC, tableFromArrays } from 'apache-arrow';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lambdaInspector } from '../../lib/adapters/aws/lambda-inspector.js';
import { createAwsApp } from '../../lib/app/aws.js';
import { handleInspectEvent } from '../../lib/app/inspect-event.js';
import type { InspectEvent } from '../../lib/ports/dataset-inspector.js';
import { TableVersionNotFoundError } from '../../lib/errors.js';
import { loadAwsConfig } from '../../lib/config.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import type { DatasetInspector } from '../../lib/ports/dataset-inspector.js';
import { handler as dataFunction } from '../../functions/api-data.js';
import { lambdaContext } from '../support/lambda-context.js';
import { createS3Fake } from '../support/s3-fake.js';

/** The caller as API Gateway's authorizer establishes it (lib/governance/guard.ts, mode `authorizer`). */
const ADMIN_CONTEXT = { principal: 'admin', platformAdmin: 'true', via: 'admin-key' };

const lambda = mockClient(LambdaClient);
// Each test sets its own behaviour and reads only its own calls, in whatever order they run.
beforeEach(() => lambda.reset());
afterAll(() => lambda.restore());

/**
 * DescribeTable with load_detailed_metadata on AWS: the metadata function cannot load LanceDB,
 * so it invokes the data function with an inspection event. Here the invocation is mocked by
 * running the data side's handler in-process, so both halves of the exchange are real code.
 */
describe('detailed DescribeTable through the data function', () => {
  const logged: { message: string; fields: Record<string, unknown> }[] = [];
  const logger = { error: (message: string, fields: Record<string, unknown>) => void logged.push({ message, fields }) };
  const invokeWith = (inspector: DatasetInspector) =>
    lambda.on(InvokeCommand).callsFake(async (input: InvokeCommandInput) => {
      const event = JSON.parse(Buffer.from(input.Payload as Uint8Array).toString('utf8')) as InspectEvent;
      return { StatusCode: 200, Payload: Buffer.from(JSON.stringify(await handleInspectEvent(event, inspector, logger))) };
    });

  it('answers version and schema from the data side, over the S3 composition', async () => {
    const calls: unknown[] = [];
    invokeWith({
      async inspect(location, options) {
        calls.push({ location, options });
        return { version: 3, schema: { fields: [{ name: 'id', nullable: false, type: { type: 'int64' } }] } };
      },
    });
    const fake = createS3Fake();
    const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket', RASK_DATA_FUNCTION_NAME: 'rask-data' });
    const { router } = await createAwsApp(config, metaHandlers, fake.client, { inspector: lambdaInspector(new LambdaClient({}), 'rask-data') });
    const call = (p: string, body: object, rawQuery = '') =>
      router({ method: 'POST', rawPath: p, rawQuery, headers: { 'content-type': 'application/json' }, authorizer: ADMIN_CONTEXT, body: Buffer.from(JSON.stringify(body)), requestId: 'r' });

    const declared = JSON.parse((await call('/v1/table/t1/declare', {})).body.toString());
    const tablePath = declared.location.replace('s3://wh-bucket/warehouse/', '');
    // A committed manifest makes the table more than declared.
    await fake.client.send(
      new (await import('@aws-sdk/client-s3')).PutObjectCommand({
        Bucket: 'wh-bucket',
        Key: `warehouse/${tablePath}/_versions/18446744073709551612.manifest`,
        Body: 'm',
      }),
    );
    const res = await call('/v1/table/t1/describe', { version: 3 }, 'load_detailed_metadata=true');
    expect(res.status, res.body.toString()).toBe(200);
    const body = JSON.parse(res.body.toString());
    expect(body).toMatchObject({ version: 3, table: 't1', namespace: [], is_only_declared: false });
    expect(body.schema.fields[0].name).toBe('id');
    expect(calls).toEqual([{ location: declared.location, options: { version: 3 } }]);
    const sent = lambda.commandCalls(InvokeCommand).map((c) => c.args[0].input.FunctionName);
    expect(sent).toEqual(['rask-data']);
  });

  it('carries the data side\'s error code back to the caller', async () => {
    invokeWith({
      inspect: async () => {
        throw new TableVersionNotFoundError('no version 9');
      },
    });
    const inspector = lambdaInspector(new LambdaClient({}), 'rask-data');
    await expect(inspector.inspect('s3://wh/t.lance', { version: 9 })).rejects.toMatchObject({ code: 11, message: 'no version 9' });
  });

  it('an unexpected failure on the data side is code 18, logged through the function\'s logger', async () => {
    logged.length = 0;
    invokeWith({
      inspect: async () => {
        throw new Error('disk on fire');
      },
    });
    const inspector = lambdaInspector(new LambdaClient({}), 'rask-data');
    await expect(inspector.inspect('s3://wh/t.lance', {})).rejects.toMatchObject({ code: 18 });
    expect(logged).toEqual([{ message: 'inspection failed', fields: { err: 'Error: disk on fire' } }]);
  });

  it('turns a crashed data function into code 18', async () => {
    lambda.on(InvokeCommand).callsFake(async () => ({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: Buffer.from('{"errorMessage":"boom"}'),
    }));
    await expect(lambdaInspector(new LambdaClient({}), 'f').inspect('s3://x/y.lance', {})).rejects.toMatchObject({ code: 18 });
  });
});

describe('the data function answers inspection events with the real engine', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-inspect-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('opens a real dataset by location', async () => {
    const { sharedEngine } = await import('../../lib/adapters/lance/shared-engine.js');
    const location = path.join(dir, 'tables', 'abc', 'people.lance');
    const ipc = Buffer.from(tableToIPC(tableFromArrays({ id: BigInt64Array.from([1n, 2n]), name: ['a', 'b'] }), 'stream'));
    await sharedEngine().createTable(location, ipc, 'create');

    const ok = (await dataFunction({ rask: 'inspect', location, selection: {} }, lambdaContext())) as { ok: boolean; details: any };
    expect(ok.ok).toBe(true);
    expect(ok.details.version).toBe(1);
    expect(ok.details.schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'name']);

    const missing = (await dataFunction({ rask: 'inspect', location, selection: { version: 42 } }, lambdaContext())) as { ok: boolean; code: number };
    expect(missing).toMatchObject({ ok: false, code: 11 });
  });
});
