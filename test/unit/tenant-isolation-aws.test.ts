// @covers CreateWarehouse, RegisterTable, DeclareTable, DescribeProject, UpdateProject
/**
 * Tenant isolation of storage on AWS (issue 24, finding 1): the metadata Lambda's composition
 * (createAwsApp with the meta handlers, identity from the authorizer context) over the stateful
 * S3 fake, STS mocked. Every project lives in one warehouse bucket, so what keeps project A out
 * of project B's prefix is the allotment (`<warehouse prefix>projects/<project>/`) and the
 * overlap check; the vended credentials follow the warehouse, so they stay inside A's prefix.
 */
import { createHash, randomUUID } from 'node:crypto';
import { AssumeRoleCommand, STSClient, type AssumeRoleCommandInput } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { loadAwsConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';
import { mintedCredentials } from '../support/sts.js';

const WH = 'wh-bucket';
const REG = 'reg-bucket';
const sts = mockClient(STSClient);
afterAll(() => sts.restore());

type Who = { principal: string; platformAdmin: boolean };
const ROOT: Who = { principal: 'root', platformAdmin: true };

describe('tenant isolation of storage (metadata Lambda composition over S3)', () => {
  let fake: S3Fake;
  let router: Router;
  const A_ADMIN: Who = { principal: 'a-admin', platformAdmin: false };
  const A_WRITER: Who = { principal: 'a-writer', platformAdmin: false };

  const call = async (who: Who, method: string, p: string, body?: unknown) => {
    const [rawPath, rawQuery = ''] = p.split('?');
    const res = await router({
      method,
      rawPath,
      rawQuery,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
      requestId: randomUUID(),
      authorizer: { principal: who.principal, platformAdmin: String(who.platformAdmin), via: 'api-key' },
    });
    const text = res.body.toString();
    return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
  };
  const ok = async (who: Who, method: string, p: string, body?: unknown) => {
    const r = await call(who, method, p, body);
    expect(r.status, r.text).toBe(200);
    return r.json;
  };
  /** Every object of both buckets with the hash of its bytes: the before/after proof. */
  // Every object but the change log, where each refusal's audit event is appended (docs/events.md, "Delivery").
  const everything = () =>
    [REG, WH]
      .flatMap((b) => [...fake.bucketContents(b)].filter(([k]) => !(b === REG && k.startsWith('registry/changes/'))).map(([k, v]) => `${b}/${k} ${createHash('sha256').update(v).digest('hex')}`))
      .sort();

  let bLocation: string;

  beforeAll(async () => {
    fake = createS3Fake();
    let issued = 0;
    sts.on(AssumeRoleCommand).callsFake(async (input: AssumeRoleCommandInput) => mintedCredentials(++issued, Date.now(), input));
    const config = loadAwsConfig({
      RASK_REGISTRY_BUCKET: REG,
      RASK_WAREHOUSE_BUCKET: WH,
      RASK_VENDING_ROLE_ARN: 'arn:aws:iam::123456789012:role/rask-vending',
      AWS_REGION: 'us-east-1',
    });
    ({ router } = await createAwsApp(config, metaHandlers, fake.client));
    for (const p of ['A', 'B']) await ok(ROOT, 'POST', '/v1/projects', { name: p });
    await ok(ROOT, 'POST', '/v1/warehouses', { name: 'main', project: 'B', storage_root: `s3://${WH}/warehouse/projects/B/main` });
    await ok(ROOT, 'POST', '/v1/warehouses', { name: 'main', project: 'A', storage_root: `s3://${WH}/warehouse/projects/A/main` });
    await ok(ROOT, 'POST', '/projects/B/v1/namespace/sales/create', {});
    bLocation = (await ok(ROOT, 'POST', '/projects/B/v1/table/sales%24orders/declare?delimiter=%24', {})).location;
    // B's data, as a client would have written it with its vended credentials.
    const key = `${bLocation.slice(`s3://${WH}/`.length)}/_versions/1.manifest`;
    await fake.client.send(new (await import('@aws-sdk/client-s3')).PutObjectCommand({ Bucket: WH, Key: key, Body: 'manifest bytes' }));
    await ok(ROOT, 'POST', '/projects/A/v1/namespace/ans/create', {});
    for (const [who, role] of [[A_ADMIN, 'admin'], [A_WRITER, 'writer']] as const) {
      await ok(ROOT, 'POST', '/v1/principals', { name: who.principal });
      await ok(ROOT, 'POST', '/v1/grants', { principal: who.principal, project: 'A', role });
    }
  });
  afterAll(() => fake?.mock.restore());

  it("a fresh deployment's default warehouse and the projects' allotments lie side by side under the warehouse prefix", async () => {
    expect((await ok(ROOT, 'GET', '/v1/warehouses/default')).storage_root).toBe(`s3://${WH}/warehouse/default/`);
    expect((await ok(A_ADMIN, 'GET', '/v1/projects/A')).storage_allotment).toEqual([`s3://${WH}/warehouse/projects/A/`]);
    expect(bLocation.startsWith(`s3://${WH}/warehouse/projects/B/main/`)).toBe(true);
  });

  for (const who of [A_ADMIN, A_WRITER]) {
    it(`as ${who.principal}: no warehouse over B's prefix, the registry, the default warehouse, the bucket or a look-alike prefix`, async () => {
      const before = everything();
      for (const root of [
        `s3://${WH}/warehouse/projects/B/main`,
        `s3://${WH}/warehouse/projects/B/main/tables/`,
        bLocation,
        `s3://${WH}/warehouse/projects/B`,
        `s3://${WH}/warehouse/projects`,
        `s3://${WH}/warehouse/projects/AB/x`, // shares "A" as a string prefix, not as a segment
        `s3://${WH}/warehouse/default`,
        `s3://${WH}/warehouse`,
        `s3://${WH}`,
        `s3://${REG}/registry`,
        `s3://${REG}`,
        's3://some-other-bucket/x',
      ]) {
        const r = await call(who, 'POST', '/projects/A/v1/warehouses', { name: 'evil', storage_root: root });
        expect(r.status, `${root}: ${r.text}`).toBe(403);
        expect(r.json.code).toBe(15);
        expect(r.json.error).not.toMatch(/project "B"|"sales"|"orders"/);
      }
      for (const location of [bLocation, `${bLocation}/`]) {
        const r = await call(who, 'POST', '/projects/A/v1/table/ans%24stolen/register?delimiter=%24', { location });
        expect([400, 403], r.text).toContain(r.status);
      }
      expect(everything()).toEqual(before);
    });
  }

  it("A's vended credentials stay inside A's prefix", async () => {
    sts.resetHistory();
    const declared = await ok(A_WRITER, 'POST', '/projects/A/v1/table/ans%24t/declare?delimiter=%24', {});
    expect(declared.location.startsWith(`s3://${WH}/warehouse/projects/A/main/`)).toBe(true);
    expect(declared.storage_options.aws_access_key_id).toMatch(/^ASIA/);
    const resources = sts
      .commandCalls(AssumeRoleCommand)
      .flatMap((c) => (JSON.parse(c.args[0].input.Policy!) as { Statement: { Resource: string | string[] }[] }).Statement.flatMap((s) => [s.Resource].flat()));
    expect(resources.length).toBeGreaterThan(0);
    for (const r of resources) expect(r.startsWith(`arn:aws:s3:::${WH}/warehouse/projects/A/main/`) || r === `arn:aws:s3:::${WH}`, r).toBe(true);
  });

  it('exactly one of 8 concurrent creates with overlapping prefixes wins', async () => {
    const base = `s3://${WH}/warehouse/projects/A/race`;
    // Pairwise overlapping (a chain): any two share storage.
    const roots = [base, `${base}/x`, `${base}/`, `${base}/x/y`, base, `${base}/x/y/z`, `${base}/x/`, `${base}/x/y/z/w`];
    const answers = await Promise.all(roots.map((root, i) => call(A_ADMIN, 'POST', '/projects/A/v1/warehouses', { name: `race${i}`, storage_root: root })));
    expect(answers.filter((a) => a.status === 200), answers.map((a) => a.text).join('\n')).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.json.code === 19)).toHaveLength(7);
  });

  it('only a platform administrator allots more, and only inside the declared storage', async () => {
    const shared = `s3://${WH}/warehouse/projects/shared/`;
    expect((await call(A_ADMIN, 'POST', '/v1/projects/A/update', { storage_roots: [shared] })).status).toBe(403);
    expect((await call(ROOT, 'POST', '/v1/projects/A/update', { storage_roots: [`s3://${REG}/elsewhere/`] })).status).toBe(400);
    expect((await ok(ROOT, 'POST', '/v1/projects/A/update', { storage_roots: [shared] })).storage_allotment).toEqual([`s3://${WH}/warehouse/projects/A/`, shared]);
    expect((await call(A_ADMIN, 'POST', '/projects/A/v1/warehouses', { name: 'team', storage_root: `${shared}team` })).status).toBe(200);
  });
});
