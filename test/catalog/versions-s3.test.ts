// @covers DeclareTable, DescribeTable, ListTableVersions, CreateTableVersion, DescribeTableVersion
import 'aws-sdk-client-mock-vitest/extend';
import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { StsCredentialVendor } from '../../lib/adapters/aws/sts-vendor.js';
import { createAwsApp } from '../../lib/app/aws.js';
import { buildApp } from '../../lib/app/build.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { loadAwsConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';
import { mintedCredentials } from '../support/sts.js';

/** The caller as API Gateway's authorizer establishes it (lib/governance/guard.ts, mode `authorizer`). */
const ADMIN_CONTEXT = { principal: 'admin', platformAdmin: 'true', via: 'admin-key' };

const ROLE = 'arn:aws:iam::123456789012:role/rask-vending';
const WH = 'wh-bucket';
const HOUR = 3_600_000;
/** One class-level STS stub for the file: a second mockClient(STSClient) would replace the first. */
const sts = mockClient(STSClient);
afterAll(() => sts.restore());

/**
 * The S3 path end to end below the transport: a real router and real handlers over
 * S3ObjectStore on the stateful S3 fake, STS mocked, requests shaped exactly like the official
 * client's (rest-conformance §2, §4, §6).
 */
describe('tables and managed versioning on S3 (through the fake)', () => {
  let fake: S3Fake;
  let router: Router;
  let now: number;
  let issued = 0;

  // A fresh bucket, router and STS stub for every test: each runs alone and in any order.
  beforeEach(async () => {
    fake = createS3Fake();
    now = Date.parse('2026-03-01T12:00:00Z');
    issued = 0;
    sts.reset();
    sts.on(AssumeRoleCommand).callsFake(async (input: AssumeRoleCommandInput) => {
      return mintedCredentials(++issued, now, input);
    });
    ({ router } = await buildApp({
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
      vendor: new StsCredentialVendor({ client: new STSClient({ region: 'us-east-1' }), roleArn: ROLE, now: () => now }),
    }));
  });
  afterEach(() => fake.mock.restore());

  /** One request as the official client sends it: `?delimiter=%24` first, JSON bodies. */
  async function call(path: string, body: unknown, query = '') {
    const res = await router({
      method: 'POST',
      rawPath: path,
      rawQuery: `delimiter=%24${query}`,
      headers: { 'content-type': 'application/json', 'x-api-key': 'k-123' },
      authorizer: ADMIN_CONTEXT,
      body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
      requestId: randomUUID(),
    });
    return { status: res.status, json: JSON.parse(res.body.toString() || 'null') };
  }
  const id = ['ns', 't'];
  const T = '/v1/table/ns%24t';
  let location: string;
  /** The table's key prefix inside the bucket, e.g. `warehouse/tables/<hex>/t.lance`. */
  let tableKey: string;

  /** What the client does before version/create: PUT the manifest to a staging key. */
  async function stage(version: number, body: string) {
    const key = `${tableKey}/_versions/${manifestName(version, 'V2')}-${randomUUID()}`;
    const res = await fake.client.send(new PutObjectCommand({ Bucket: WH, Key: key, Body: Buffer.from(body) }));
    return { key, etag: res.ETag!, size: Buffer.byteLength(body) };
  }
  const createVersion = (version: number, staged: { key: string; etag: string; size: number }) =>
    call(`${T}/version/create`, {
      id,
      version,
      manifest_path: staged.key,
      manifest_size: staged.size,
      e_tag: staged.etag,
      naming_scheme: 'V2',
    });

  /** Creates namespace ns and declares ns.t, as the client does before its first commit. */
  async function declare() {
    expect((await call('/v1/namespace/ns/create', { id: ['ns'] })).status).toBe(200);
    const res = await call(`${T}/declare`, { id });
    expect(res.status).toBe(200);
    location = res.json.location;
    tableKey = location.slice(`s3://${WH}/`.length);
    return res;
  }

  /** Declares ns.t and commits version 1 ('manifest-v1', 11 bytes). */
  async function withVersion1() {
    await declare();
    const staged = await stage(1, 'manifest-v1');
    expect((await createVersion(1, staged)).status).toBe(200);
    return staged;
  }

  it('declares on an s3:// location with vended, table-scoped credentials', async () => {
    const res = await declare();
    expect(location).toMatch(/^s3:\/\/wh-bucket\/warehouse\/tables\/[0-9a-f]{16}\/t\.lance$/);
    tableKey = location.slice(`s3://${WH}/`.length);
    expect(res.json.managed_versioning).toBe(true);
    expect(res.json.storage_options).toEqual({
      aws_access_key_id: 'ASIA1',
      aws_secret_access_key: 'secret-1',
      aws_session_token: 'token-1',
      aws_region: 'us-east-1',
      expires_at_millis: String(now + HOUR),
    });
    const policy = JSON.parse(sts.commandCalls(AssumeRoleCommand).at(-1)!.args[0].input.Policy!);
    const resources = policy.Statement.map((s: { Resource: string }) => s.Resource);
    expect(resources).toContain(`arn:aws:s3:::${WH}/${tableKey}/*`);
    expect(resources.every((r: string) => r === `arn:aws:s3:::${WH}` || r === `arn:aws:s3:::${WH}/${tableKey}/*`)).toBe(true);
  });

  it('describes from the registry, vending when vend_credentials is absent and refreshing when asked', async () => {
    await declare();
    const plain = await call(`${T}/describe`, { id });
    expect(plain.status).toBe(200);
    expect(plain.json).toMatchObject({ location, managed_versioning: true });
    // A plain describe reads: a read-only session of its own, not the declare's read-write one.
    expect(plain.json.storage_options.aws_access_key_id).toBe('ASIA2');
    expect((await call(`${T}/describe`, { id })).json.storage_options.aws_access_key_id).toBe('ASIA2'); // cached
    expect((await call(`${T}/describe`, { id, vend_credentials: false })).json).not.toHaveProperty('storage_options');

    // Lance refreshes 60 s before expires_at_millis with {"vend_credentials": true}.
    now += HOUR - 60_000;
    const refreshed = await call(`${T}/describe`, { id, vend_credentials: true });
    expect(refreshed.json.storage_options.aws_access_key_id).toBe('ASIA3');
    expect(Number(refreshed.json.storage_options.expires_at_millis)).toBe(now + HOUR);
  });

  it('lists no versions for the declared table (body null, descending&limit=1)', async () => {
    await declare();
    const res = await router({
      method: 'POST',
      rawPath: `${T}/version/list`,
      rawQuery: 'delimiter=%24&limit=1&descending=true',
      headers: { 'content-type': 'application/json' },
      authorizer: ADMIN_CONTEXT,
      body: Buffer.from('null'),
      requestId: 'r',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ versions: [] });
  });

  it('commits version 1: final key in the bucket, true size, etag, staging left for the orphan scan', async () => {
    await declare();
    const staged = await stage(1, 'manifest-v1');
    const res = await createVersion(1, staged);
    expect(res.status).toBe(200);
    const finalKey = `${tableKey}/_versions/${manifestName(1, 'V2')}`;
    expect(res.json.version).toMatchObject({ version: 1, manifest_path: finalKey, manifest_size: 11, e_tag: staged.etag });
    expect(Number.isInteger(res.json.version.timestamp_millis)).toBe(true);
    const bucket = fake.bucketContents(WH);
    expect(bucket.get(finalKey)?.toString()).toBe('manifest-v1');
    // No DELETE on the commit path (docs/managed-versioning.md, step 5).
    expect(bucket.get(staged.key)?.toString()).toBe('manifest-v1');
  });

  it('treats identical retries as success (re-staged bytes, or a gone staging file with the content etag)', async () => {
    await withVersion1();
    const again = await stage(1, 'manifest-v1');
    expect((await createVersion(1, again)).status).toBe(200);
    // The first attempt's staging file is gone; its md5 etag still proves the bytes.
    const gone = { key: `${tableKey}/_versions/${manifestName(1, 'V2')}-${randomUUID()}`, etag: again.etag, size: again.size };
    const res = await createVersion(1, gone);
    expect(res.status).toBe(200);
    expect(res.json.version.manifest_path).toBe(`${tableKey}/_versions/${manifestName(1, 'V2')}`);
  });

  it('answers the loser of version 1 with 409 / code 14 and keeps the winner\u2019s bytes', async () => {
    await withVersion1();
    const res = await createVersion(1, await stage(1, 'a-different-manifest'));
    expect(res.status).toBe(409);
    expect(res.json.code).toBe(14);
    expect(fake.bucketContents(WH).get(`${tableKey}/_versions/${manifestName(1, 'V2')}`)?.toString()).toBe('manifest-v1');
  });

  it('refuses a staging path given with the bucket or as a URI (object-store relative only)', async () => {
    await withVersion1();
    const staged = await stage(2, 'x');
    for (const path of [`${WH}/${staged.key}`, `s3://${WH}/${staged.key}`]) {
      const res = await createVersion(2, { ...staged, key: path });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe(13);
    }
  });

  describe('many concurrent commits of one version', () => {
    it('have exactly one winner; every other one answers 409 / 14', async () => {
      await withVersion1();
      const staged = await Promise.all(Array.from({ length: 16 }, (_, i) => stage(2, `writer-${i}`)));
      const results = await Promise.all(staged.map((s) => createVersion(2, s)));
      const winners = results.flatMap((r, i) => (r.status === 200 ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.status === 409 && r.json.code === 14)).toHaveLength(15);
      expect(fake.bucketContents(WH).get(`${tableKey}/_versions/${manifestName(2, 'V2')}`)?.toString()).toBe(
        `writer-${winners[0]}`,
      );
    });
  });

  it('finds the latest version with a single ListObjectsV2 call', async () => {
    await withVersion1();
    expect((await createVersion(2, await stage(2, 'manifest-v2'))).status).toBe(200);
    fake.mock.resetHistory();
    const res = await call(`${T}/version/list`, null, '&limit=1&descending=true');
    expect(res.json.versions.map((v: { version: number }) => v.version)).toEqual([2]);
    expect(fake.mock.commandCalls(ListObjectsV2Command, { Bucket: WH })).toHaveLength(1);
  });

  it('answers the multi-table batch doors with code 0 and the reason (docs/batch-commits.md)', async () => {
    for (const path of ['/v1/table/version/batch-create', '/v1/table/batch-commit']) {
      const res = await call(path, { entries: [], operations: [] });
      expect([res.status, res.json.code]).toEqual([406, 0]);
      expect(res.json.error).toMatch(/batch-commits\.md/);
    }
  });

  it('describes committed versions and answers 11 for others', async () => {
    await withVersion1();
    const one = await call(`${T}/version/describe`, { id, version: 1 });
    expect(one.json.version).toMatchObject({ version: 1, manifest_size: 11 });
    const none = await call(`${T}/version/describe`, { id, version: 9 });
    expect([none.status, none.json.code]).toEqual([404, 11]);
  });
});

describe('createAwsApp wires vending from RASK_VENDING_ROLE_ARN', () => {
  async function declareWith(env: Record<string, string>) {
    const fake = createS3Fake();
    sts.reset();
    sts.on(AssumeRoleCommand).resolves({
      Credentials: { AccessKeyId: 'A', SecretAccessKey: 'S', SessionToken: 'T', Expiration: new Date(Date.now() + HOUR) },
    });
    const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg', RASK_WAREHOUSE_BUCKET: WH, AWS_REGION: 'us-east-1', ...env });
    const { router } = await createAwsApp(config, metaHandlers, fake.client);
    const send = (path: string, body: unknown) =>
      router({ method: 'POST', rawPath: path, rawQuery: 'delimiter=%24', headers: { 'content-type': 'application/json' }, authorizer: ADMIN_CONTEXT, body: Buffer.from(JSON.stringify(body)), requestId: 'r' });
    await send('/v1/namespace/ns/create', { id: ['ns'] });
    const res = await send('/v1/table/ns%24t/declare', { id: ['ns', 't'] });
    fake.mock.restore();
    return JSON.parse(res.body.toString());
  }

  it('vends with the role when it is set', async () => {
    const out = await declareWith({ RASK_VENDING_ROLE_ARN: ROLE });
    expect(out.storage_options).toMatchObject({ aws_access_key_id: 'A', aws_session_token: 'T', aws_region: 'us-east-1' });
    expect(sts).toHaveReceivedCommandWith(AssumeRoleCommand, { RoleArn: ROLE });
  });

  it('vends nothing (storage_options omitted) without it', async () => {
    const out = await declareWith({});
    expect(out).not.toHaveProperty('storage_options');
    expect(sts).not.toHaveReceivedCommand(AssumeRoleCommand);
  });

  it('refuses a role ARN that is not one at start-up', () => {
    expect(() => loadAwsConfig({ RASK_REGISTRY_BUCKET: 'reg', RASK_WAREHOUSE_BUCKET: WH, RASK_VENDING_ROLE_ARN: 'my-role' })).toThrow(
      /RASK_VENDING_ROLE_ARN/,
    );
  });
});
