import 'aws-sdk-client-mock-vitest/extend';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_POLICY_CHARS } from '../../lib/adapters/aws/session-policy.js';
import { principalOf, StsCredentialVendor } from '../../lib/adapters/aws/sts-vendor.js';
import type { CatalogError } from '../../lib/errors.js';
import type { VendRequest } from '../../lib/ports/credential-vendor.js';
import type { StorageRoot } from '../../lib/ports/storage-root.js';
import { mintedCredentials } from '../support/sts.js';

const ROLE = 'arn:aws:iam::123456789012:role/rask-vending';
const ROOT: StorageRoot = { kind: 's3', bucket: 'wh-bucket', prefix: 'warehouse/', region: 'eu-west-1' };
const TABLE = 'tables/0123abcd/orders.lance';
const HOUR = 3_600_000;

interface Statement {
  Sid: string;
  Effect: string;
  Action: string | string[];
  Resource: string;
  Condition?: unknown;
}

describe('StsCredentialVendor', () => {
  const sts = mockClient(STSClient);
  let now: number;
  let issued: number;
  /** Errors the next AssumeRole calls throw, in order. */
  let failures: Error[];

  beforeEach(() => {
    sts.reset();
    now = Date.parse('2026-01-01T00:00:00Z');
    issued = 0;
    failures = [];
    // Every call mints distinct keys that expire DurationSeconds from "now".
    sts.on(AssumeRoleCommand).callsFake(async (input: AssumeRoleCommandInput) => {
      const failure = failures.shift();
      if (failure) throw failure;
      return mintedCredentials(++issued, now, input);
    });
  });
  afterEach(() => sts.reset());

  const vendor = (extra: Partial<ConstructorParameters<typeof StsCredentialVendor>[0]> = {}) =>
    new StsCredentialVendor({ client: new STSClient({ region: 'eu-west-1' }), roleArn: ROLE, now: () => now, ...extra });
  const request = (over: Partial<VendRequest> = {}): VendRequest => ({
    identity: { apiKey: 'super-secret-api-key' },
    root: ROOT,
    tablePath: TABLE,
    mode: 'readwrite',
    ...over,
  });
  const lastInput = () => sts.commandCalls(AssumeRoleCommand).at(-1)!.args[0].input;
  const policyOf = (input: AssumeRoleCommandInput) => JSON.parse(input.Policy!) as { Statement: Statement[] };
  const actions = (s: Statement) => [s.Action].flat().sort();

  it('answers string-valued Lance storage options from AssumeRole, for at most an hour', async () => {
    const options = await vendor().vend(request());
    expect(options).toEqual({
      aws_access_key_id: 'ASIA1',
      aws_secret_access_key: 'secret-1',
      aws_session_token: 'token-1',
      aws_region: 'eu-west-1',
      expires_at_millis: String(now + HOUR),
    });
    for (const value of Object.values(options!)) expect(typeof value).toBe('string');
    expect(lastInput()).toMatchObject({ RoleArn: ROLE, DurationSeconds: 3600 });
    await vendor({ durationSeconds: 43_200 }).vend(request({ tablePath: 'tables/x/other.lance' }));
    expect(lastInput().DurationSeconds).toBe(3600); // role chaining caps sessions at one hour
  });

  it('scopes a read-write session to the table prefix: objects, listing under it, bucket location', async () => {
    await vendor().vend(request());
    const { Statement } = policyOf(lastInput());
    const objects = 'arn:aws:s3:::wh-bucket/warehouse/tables/0123abcd/orders.lance/*';
    expect(Statement.map((s) => [s.Sid, actions(s), s.Resource])).toEqual([
      ['ReadTable', ['s3:GetObject', 's3:GetObjectVersion'], objects],
      ['WriteTable', ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:PutObject'], objects],
      ['ListTable', ['s3:ListBucket'], 'arn:aws:s3:::wh-bucket'],
      ['LocateBucket', ['s3:GetBucketLocation'], 'arn:aws:s3:::wh-bucket'],
    ]);
    expect(Statement.find((s) => s.Sid === 'ListTable')!.Condition).toEqual({
      StringLike: { 's3:prefix': ['warehouse/tables/0123abcd/orders.lance', 'warehouse/tables/0123abcd/orders.lance/*'] },
    });
    expect(Statement.every((s) => s.Effect === 'Allow')).toBe(true);
    expect(lastInput().Policy!.length).toBeLessThanOrEqual(MAX_POLICY_CHARS);
  });

  it('gives a read-only session no write action at all', async () => {
    await vendor().vend(request({ mode: 'read' }));
    const all = policyOf(lastInput()).Statement.flatMap(actions);
    expect(all.sort()).toEqual(['s3:GetBucketLocation', 's3:GetObject', 's3:GetObjectVersion', 's3:ListBucket']);
  });

  it('uses the partition of the region in every ARN', async () => {
    await vendor().vend(request({ root: { ...ROOT, region: 'cn-north-1' } }));
    for (const s of policyOf(lastInput()).Statement) expect(s.Resource).toMatch(/^arn:aws-cn:s3:::wh-bucket/);
  });

  it('caches per (principal, table, mode) until five minutes before expiry', async () => {
    const v = vendor();
    const first = await v.vend(request());
    expect(await v.vend(request())).toEqual(first);
    expect(issued).toBe(1);

    await v.vend(request({ mode: 'read' }));
    await v.vend(request({ tablePath: 'tables/ffff/other.lance' }));
    await v.vend(request({ identity: { apiKey: 'someone-else' } }));
    await v.vend(request({ identity: { bearerToken: 'super-secret-api-key' } }));
    expect(issued).toBe(5);

    now += HOUR - 5 * 60_000 - 1; // just inside the margin: still served from the cache
    expect((await v.vend(request()))!.aws_access_key_id).toBe('ASIA1');
    now += 1;
    const refreshed = await v.vend(request());
    expect(refreshed!.aws_access_key_id).toBe('ASIA6');
    expect(Number(refreshed!.expires_at_millis)).toBe(now + HOUR);
  });

  it('shares one STS call between concurrent requests for the same key', async () => {
    const v = vendor();
    const all = await Promise.all(Array.from({ length: 10 }, () => v.vend(request())));
    expect(issued).toBe(1);
    expect(new Set(all.map((o) => o!.aws_access_key_id)).size).toBe(1);
  });

  it('never sends or keys on the raw secret: the principal is a hash', async () => {
    await vendor().vend(request());
    const sent = JSON.stringify(lastInput());
    expect(sent).not.toContain('super-secret-api-key');
    expect(lastInput().RoleSessionName).toBe(`rask-${principalOf({ apiKey: 'super-secret-api-key' }).slice(0, 32)}`);
    expect(lastInput().RoleSessionName!.length).toBeLessThanOrEqual(64);
    expect(principalOf({ apiKey: 'a' })).not.toBe(principalOf({ bearerToken: 'a' }));
    expect(principalOf({ apiKey: 'a' })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('vends nothing for a local warehouse', async () => {
    expect(await vendor().vend(request({ root: { kind: 'file', path: '/data' } }))).toBeUndefined();
    expect(issued).toBe(0);
  });

  it('maps STS failures to catalog errors by kind, and does not cache them', async () => {
    const fail = (name: string, status: number) =>
      failures.push(Object.assign(new Error('denied'), { name, $metadata: { httpStatusCode: status } }));
    const v = vendor();
    fail('AccessDenied', 403);
    expect(((await v.vend(request()).catch((e) => e)) as CatalogError).code).toBe(18);
    fail('Throttling', 400);
    expect(((await v.vend(request()).catch((e) => e)) as CatalogError).code).toBe(21);
    fail('InternalFailure', 500);
    expect(((await v.vend(request()).catch((e) => e)) as CatalogError).code).toBe(17);
    expect((await v.vend(request()))!.aws_access_key_id).toMatch(/^ASIA/);
  });
});
