// @covers DeclareTable, DescribeTable, RegisterTable
/**
 * The three credential-vending fixes from the operability review (issue 13, item 4), through the
 * real router over the S3 fake with STS mocked:
 *  - reads get read-only credentials: DescribeTable vends `read` unless the caller says it is
 *    about to write (`x-rask-access: readwrite`); declare stays read-write;
 *  - IAM wildcard / variable characters never reach a session policy, neither from a
 *    registered location nor from anything else (the policy builder refuses them too);
 *  - nothing vended ⇒ `storage_options` absent (the spec types it as a non-nullable object).
 */
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { sessionPolicy } from '../../lib/adapters/aws/session-policy.js';
import { StsCredentialVendor } from '../../lib/adapters/aws/sts-vendor.js';
import { buildApp } from '../../lib/app/build.js';
import type { Router } from '../../lib/http/router.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import { ipcRows } from '../data/fixtures.js';
import { ensureNamespace, TableApi } from '../support/data-http.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';
import { schemaProblems } from '../support/schema-check.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { mintedCredentials } from '../support/sts.js';

const ROLE = 'arn:aws:iam::123456789012:role/rask-vending';
const WH = 'wh-bucket';
const sts = mockClient(STSClient);
afterAll(() => sts.restore());

interface Statement {
  Sid: string;
  Action: string | string[];
  Resource: string;
}
const policies = () =>
  sts.commandCalls(AssumeRoleCommand).map((c) => JSON.parse(c.args[0].input.Policy!) as { Statement: Statement[] });
const actionsOf = (p: { Statement: Statement[] }) => p.Statement.flatMap((s) => [s.Action].flat()).sort();

async function s3Router(fake: S3Fake, vend = true): Promise<Router> {
  const { router } = await buildApp({
    registryStore: new S3ObjectStore({ client: fake.client, bucket: 'registry-bucket', prefix: 'registry/' }),
    storageFor: (root) => {
      if (root.kind !== 's3') throw new Error('s3 only');
      return new S3ObjectStore({ client: fake.client, bucket: root.bucket, prefix: root.prefix });
    },
    project: 'default',
    warehouse: 'default',
    warehouseRoot: { kind: 's3', bucket: WH, prefix: 'warehouse/', region: 'us-east-1' },
    managedVersioning: true,
    trashGraceDays: 0,
    handlers: metaHandlers,
    maxBodyBytes: 1 << 20,
    vendor: vend ? new StsCredentialVendor({ client: new STSClient({ region: 'us-east-1' }), roleArn: ROLE }) : noCredentials,
  });
  return router;
}

function caller(router: Router) {
  return async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await router({
      method: 'POST',
      rawPath: path,
      rawQuery: 'delimiter=%24',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k-123', ...headers },
      body: Buffer.from(JSON.stringify(body)),
      requestId: randomUUID(),
    });
    return { status: res.status, json: JSON.parse(res.body.toString() || 'null') };
  };
}

describe('vending on S3', () => {
  let fake: S3Fake;
  let call: ReturnType<typeof caller>;
  let issued = 0;

  beforeAll(async () => {
    fake = createS3Fake();
    sts.on(AssumeRoleCommand).callsFake(async (input: AssumeRoleCommandInput) => mintedCredentials(++issued, Date.now(), input));
    call = caller(await s3Router(fake));
    expect((await call('/v1/namespace/ns/create', { id: ['ns'] })).status).toBe(200);
  });
  afterAll(() => fake.mock.restore());
  beforeEach(() => sts.resetHistory());

  it('declare vends read-write: the caller is about to write the dataset', async () => {
    const res = await call('/v1/table/ns%24w/declare', { id: ['ns', 'w'] });
    expect(res.status).toBe(200);
    expect(res.json.storage_options.aws_access_key_id).toMatch(/^ASIA/);
    expect(actionsOf(policies()[0])).toContain('s3:PutObject');
  });

  it('describe vends read-only by default: no write or delete action in the session policy', async () => {
    await call('/v1/table/ns%24r/declare', { id: ['ns', 'r'] });
    sts.resetHistory();
    const res = await call('/v1/table/ns%24r/describe', { id: ['ns', 'r'] });
    expect(res.status).toBe(200);
    expect(res.json.storage_options.aws_access_key_id).toMatch(/^ASIA/);
    expect(policies()).toHaveLength(1);
    const actions = actionsOf(policies()[0]);
    expect(actions).toContain('s3:GetObject');
    expect(actions.filter((a) => /Put|Delete|Abort/.test(a))).toEqual([]);
    // A read-only vend is a separate cache entry: it never hands out the declare's read-write keys.
    const declared = await call('/v1/table/ns%24r2/declare', { id: ['ns', 'r2'] });
    const described = await call('/v1/table/ns%24r2/describe', { id: ['ns', 'r2'] });
    expect(described.json.storage_options.aws_access_key_id).not.toBe(declared.json.storage_options.aws_access_key_id);
  });

  it('describe vends read-write when the caller says it is about to write (x-rask-access: readwrite)', async () => {
    await call('/v1/table/ns%24u/declare', { id: ['ns', 'u'] });
    // A different caller, so nothing is cached for it yet and the vend shows in the STS history.
    sts.resetHistory();
    const res = await call('/v1/table/ns%24u/describe', { id: ['ns', 'u'] }, { 'x-rask-access': 'readwrite', 'x-api-key': 'writer' });
    expect(res.status).toBe(200);
    expect(policies()).toHaveLength(1);
    expect(actionsOf(policies()[0])).toContain('s3:PutObject');
  });

  it('refuses an unknown x-rask-access value with 400 / 13', async () => {
    const res = await call('/v1/table/ns%24u/describe', { id: ['ns', 'u'] }, { 'x-rask-access': 'admin' });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe(13);
    expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(0);
  });

  it('registers the same kind of location without wildcards (the fixture is a real dataset)', async () => {
    await fake.client.send(new PutObjectCommand({ Bucket: WH, Key: 'warehouse/plain/x.lance/_versions/1.manifest', Body: 'm' }));
    const res = await call('/v1/table/ns%24plain/register', { id: ['ns', 'plain'], location: `s3://${WH}/warehouse/plain/x.lance` });
    expect(res.status).toBe(200);
    await call('/v1/table/ns%24plain/describe', { id: ['ns', 'plain'] });
    expect(policies()[0].Statement.map((s) => s.Resource)).toContain(`arn:aws:s3:::${WH}/warehouse/plain/x.lance/*`);
  });

  it.each([
    ['a star', `s3://${WH}/warehouse/*`],
    ['a star inside the path', `s3://${WH}/warehouse/tables/*/x.lance`],
    ['a question mark', `s3://${WH}/warehouse/tables/x?.lance`],
    ['a policy variable', `s3://${WH}/warehouse/\${aws:username}/x.lance`],
    ['a relative wildcard', 'tables/*'],
  ])('refuses a registered location with %s (400 / 13) and writes nothing', async (_what, location) => {
    // A real dataset at that key (S3 keys may hold these characters), so only the wildcard refuses it.
    const rel = location.replace(`s3://${WH}/warehouse/`, '');
    await fake.client.send(new PutObjectCommand({ Bucket: WH, Key: `warehouse/${rel}/_versions/1.manifest`, Body: 'm' }));
    const res = await call('/v1/table/ns%24wild/register', { id: ['ns', 'wild'], location });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe(13);
    expect(res.json.error).toMatch(/wildcard/);
    expect((await call('/v1/table/ns%24wild/exists', { id: ['ns', 'wild'] })).status).toBe(404);
    expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(0);
  });
});

describe('the session policy builder refuses IAM wildcard and variable characters (backstop)', () => {
  it.each([
    ['prefix', { bucket: WH, prefix: 'warehouse/*' }],
    ['prefix', { bucket: WH, prefix: 'warehouse/t?' }],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, written literally on purpose.
    ['prefix', { bucket: WH, prefix: 'warehouse/${aws:userid}' }],
    ['bucket', { bucket: 'wh-*', prefix: 'warehouse/t.lance' }],
  ])('in the %s: %o', (_where, scope) => {
    expect(() => sessionPolicy({ ...scope, mode: 'read', partition: 'aws' })).toThrow(/wildcard|variable/);
  });

  it('builds a policy for an ordinary table prefix', () => {
    const policy = JSON.parse(sessionPolicy({ bucket: WH, prefix: 'warehouse/tables/ab12/t.lance', mode: 'read', partition: 'aws' }));
    expect(policy.Statement.map((s: Statement) => s.Resource)).toContain(`arn:aws:s3:::${WH}/warehouse/tables/ab12/t.lance/*`);
  });
});

describe('storage_options is absent, not null, when nothing is vended', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await ensureNamespace(s, 'so');
  });
  afterAll(() => s?.stop());

  it('DeclareTable, CreateTable and DescribeTable answer responses that match the spec schema', async () => {
    const declared = await new TableApi(s, ['so', 'd']).post('declare');
    expect(declared.status).toBe(200);
    expect(declared.json()).not.toHaveProperty('storage_options');
    expect(schemaProblems('DeclareTableResponse', declared.json())).toEqual([]);

    const created = await new TableApi(s, ['so', 'c']).arrow('create', ipcRows(3));
    expect(created.status).toBe(200);
    expect(created.json()).not.toHaveProperty('storage_options');
    expect(schemaProblems('CreateTableResponse', created.json())).toEqual([]);

    for (const name of ['d', 'c']) {
      const described = await new TableApi(s, ['so', name]).post('describe', { vend_credentials: true });
      expect(described.status).toBe(200);
      expect(described.json()).not.toHaveProperty('storage_options');
      expect(schemaProblems('DescribeTableResponse', described.json())).toEqual([]);
    }
  });

  it('on S3 without a vending role, and with vend_credentials: false', async () => {
    const fake = createS3Fake();
    try {
      const call = caller(await s3Router(fake, false));
      await call('/v1/namespace/n2/create', { id: ['n2'] });
      const declared = await call('/v1/table/n2%24t/declare', { id: ['n2', 't'] });
      expect(declared.json).not.toHaveProperty('storage_options');
      expect(schemaProblems('DeclareTableResponse', declared.json)).toEqual([]);
      const described = await call('/v1/table/n2%24t/describe', { id: ['n2', 't'], vend_credentials: false });
      expect(described.json).not.toHaveProperty('storage_options');
      expect(schemaProblems('DescribeTableResponse', described.json)).toEqual([]);
    } finally {
      fake.mock.restore();
    }
  });

  it('the schema check itself rejects the null the old code answered', () => {
    expect(schemaProblems('DescribeTableResponse', { location: '/x', storage_options: null })).toEqual([
      'DescribeTableResponse.storage_options: null where the spec says object',
    ]);
  });
});
