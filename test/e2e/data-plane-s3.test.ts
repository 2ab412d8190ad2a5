// @covers DeclareTable, DescribeTable
/**
 * The data plane on s3:// with vended credentials: the catalog declares a table in an S3
 * warehouse and vends table-scoped credentials (AssumeRole on the loopback AWS fake; the session
 * policy the vendor sent is what the fake's S3 enforces on every request, evaluated as IAM
 * would), and LanceDB itself, through the data engine, writes and
 * reads the table on a stateful S3 endpoint with exactly those credentials. A credential vended
 * for one table cannot touch another table's location.
 */
import { randomUUID } from 'node:crypto';
import { STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { StsCredentialVendor } from '../../lib/adapters/aws/sts-vendor.js';
import { buildApp } from '../../lib/app/build.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import type { Router } from '../../lib/http/router.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { decode, ipcRows } from '../data/fixtures.js';
import { evaluate, parseSessionPolicy } from '../deploy/iam.js';
import { startAwsHttpFake, type AwsHttpFake, type RecordedCall, type S3Authorization } from '../support/aws-http-fake.js';
import { createS3Fake } from '../support/s3-fake.js';

const ROLE = 'arn:aws:iam::123456789012:role/rask-vending';
const WH = 'wh-bucket';

let s3: AwsHttpFake;
let router: Router;
let seq = 0;

/** Only credentials AssumeRole issued, with their session token, within their session policy. */
const withinSessionPolicy = ({ session, sessionToken, action, resource, context }: S3Authorization) =>
  session !== undefined && sessionToken === session.sessionToken && evaluate(parseSessionPolicy(session.policy), { action, resource, context }).allowed;

beforeAll(async () => {
  s3 = await startAwsHttpFake({ authorize: withinSessionPolicy });
  const sts = new STSClient({ region: 'us-east-1', endpoint: s3.endpoint, credentials: s3.principal('catalog') });
  const registry = createS3Fake();
  ({ router } = await buildApp({
    registryStore: new S3ObjectStore({ client: registry.client, bucket: 'registry-bucket', prefix: 'registry/' }),
    storageFor: (root) => {
      if (root.kind !== 's3') throw new Error('s3 only');
      return new S3ObjectStore({ client: registry.client, bucket: root.bucket, prefix: root.prefix });
    },
    project: 'default',
    warehouse: 'default',
    warehouseRoot: { kind: 's3', bucket: WH, prefix: 'warehouse/', region: 'us-east-1' },
    // The client commits straight to S3 (no catalog-side copy of staged manifests).
    managedVersioning: false,
    trashGraceDays: 0,
    handlers: metaHandlers,
    maxBodyBytes: 1 << 20,
    vendor: new StsCredentialVendor({ client: sts, roleArn: ROLE, now: () => Date.now() }),
  }));
  await call('/v1/namespace/ns/create', { id: ['ns'] });
});
afterAll(async () => {
  await s3?.close();
});

async function call(path: string, body: unknown) {
  const res = await router({
    method: 'POST',
    rawPath: path,
    rawQuery: 'delimiter=%24',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
    requestId: randomUUID(),
  });
  return { status: res.status, json: JSON.parse(res.body.toString()) };
}

/** Declares ns.<name>: its s3:// location, its key prefix in the bucket and the vended options. */
async function declare(name: string) {
  const res = await call(`/v1/table/ns%24${name}/declare`, { id: ['ns', name] });
  expect(res.status).toBe(200);
  const location = res.json.location as string;
  expect(location).toMatch(new RegExp(`^s3://${WH}/warehouse/tables/[0-9a-f]{16}/${name}\\.lance$`));
  const options = res.json.storage_options as Record<string, string>;
  expect(s3.sessions.get(options.aws_access_key_id)?.roleArn).toBe(ROLE);
  return { location, prefix: location.slice(`s3://${WH}/`.length), options };
}

/** The data engine as a client would run it: the vended options, pointed at the fake endpoint. */
function engineWith(options: Record<string, string>): ReturnType<typeof wireEngine> {
  const { expires_at_millis: _expiry, ...credentials } = options;
  return wireEngine(new LanceDataEngine({
    storageOptions: { ...credentials, aws_endpoint: s3.endpoint, allow_http: 'true', aws_virtual_hosted_style_request: 'false' },
  }));
}

const keysUnder = (prefix: string) => s3.keys(WH).filter((k) => k.startsWith(`${prefix}/`));
/** Whether a call touched `prefix`: an object under it, or a listing of it. */
const touches = (c: RecordedCall, prefix: string) => c.resource.startsWith(`arn:aws:s3:::${WH}/${prefix}`) || (c.context['s3:prefix'] ?? '').startsWith(prefix);

describe('the data plane on s3:// with vended credentials', () => {
  it('writes, appends and reads a declared table with the credentials vended for it', async () => {
    const callsFrom = s3.calls.length; // requests of earlier tests (another test's 403s) are not this test's
    const t = await declare(`t${++seq}`);
    const engine = engineWith(t.options);
    expect(await engine.createTable(t.location, ipcRows(10), 'create')).toEqual({ version: 1 });
    await engine.insert(t.location, ipcRows(5, 10));
    expect(await engine.countRows(t.location)).toBe(15);
    const rows = decode(await engine.query(t.location, { k: 100, filter: 'id >= 12' })).toArray();
    expect(rows.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual([12, 13, 14]);
    // Everything Lance wrote is under the table's location, versions included.
    const written = keysUnder(t.prefix);
    expect(written.some((k) => k.includes('/_versions/'))).toBe(true);
    expect(written.some((k) => k.includes('/data/'))).toBe(true);
    expect(s3.calls.slice(callsFrom).filter((c) => c.status === 403)).toEqual([]);
  });

  it("cannot touch another table's location with one table's credentials", async () => {
    const mine = await declare(`mine${++seq}`);
    const theirs = await declare(`theirs${++seq}`);
    expect(theirs.options.aws_access_key_id).not.toBe(mine.options.aws_access_key_id);
    await expect(engineWith(mine.options).createTable(theirs.location, ipcRows(3), 'create')).rejects.toThrow();
    expect(keysUnder(theirs.prefix)).toEqual([]);
    expect(s3.calls.some((c) => touches(c, theirs.prefix) && c.status === 403)).toBe(true);
    // Its own credentials work there.
    expect(await engineWith(theirs.options).createTable(theirs.location, ipcRows(3), 'create')).toEqual({ version: 1 });
    expect(await engineWith(theirs.options).countRows(theirs.location)).toBe(3);
  });
});
