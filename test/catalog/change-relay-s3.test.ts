// @covers ListChanges, CreateNamespace, DeclareTable, CreateTableVersion
/**
 * The change feed on AWS, over the S3 fake and the EventBridge fake (docs/events.md, "Delivery",
 * "The relay"):
 * - a door's answer waits for its event to be in the change log (one S3 PUT under `changes/`),
 *   never for EventBridge: no PutEvents is sent while the doors run, even with a bus configured;
 * - the relay (lib/app/aws-relay.ts, as functions/change-relay.ts builds it) takes the log to the
 *   bus once per event, and a second cycle sends nothing more;
 * - a bus that refuses: the cursor stays, and the next cycle delivers the same ids (at least once);
 * - a manifest put straight into a declared table's `_versions/` (no catalog) becomes one
 *   `table.version.created` event with `via: storage` in the next cycle; the version the catalog
 *   committed itself (CreateTableVersion) is not announced twice.
 */
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { createAwsRelay, type AwsRelay } from '../../lib/app/aws-relay.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { loadAwsConfig, loadMaintenanceConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { callAsAdmin } from '../support/admin-call.js';
import { busChanges, loggedChanges } from '../support/change-log-reads.js';
import { createEventBridgeFake, type EventBridgeFake } from '../support/eventbridge-fake.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';

const REGISTRY = 'registry-bucket';
const WH = 'wh-bucket';
const BUS = 'rask-bus';
const ENV = { RASK_REGISTRY_BUCKET: REGISTRY, RASK_WAREHOUSE_BUCKET: WH, AWS_REGION: 'us-east-1', RASK_EVENT_BUS_NAME: BUS };

describe('the change log and the relay on AWS (S3 and EventBridge fakes)', () => {
  let s3: S3Fake;
  let eb: EventBridgeFake;
  let router: Router;
  let relay: AwsRelay;
  // Only Date is faked, for every party alike (doors, fakes, relay): jumping it ahead passes the
  // log's settle window (15 s) and the relay's (30 s) without waiting for them.
  const later = () => vi.setSystemTime(Date.now() + 120_000);
  const classMock = mockClient(EventBridgeClient);

  const call = async (path: string, body: unknown) => {
    const res = await callAsAdmin(router, 'POST', path, body);
    expect(res.status, res.text).toBe(200);
    return JSON.parse(res.text || 'null');
  };
  const logged = () => loggedChanges(s3, REGISTRY);
  const onBus = () => busChanges(eb, BUS);

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    s3 = createS3Fake();
    eb = createEventBridgeFake();
    ({ router } = await createAwsApp(loadAwsConfig(ENV), metaHandlers, s3.client));
    relay = await createAwsRelay(loadMaintenanceConfig(ENV), { client: s3.client, eventBridge: eb.client, sleep: async () => {} });
  });
  afterAll(() => {
    classMock.restore();
    vi.useRealTimers();
  });

  it('a door answers once its event is in the log, and sends nothing to EventBridge', async () => {
    s3.clearRequests();
    await call('/v1/namespace/sales/create', { id: ['sales'] });
    const puts = s3.requests().filter((r) => r.op === 'PUT' && r.key.startsWith('registry/changes/'));
    expect(puts).toHaveLength(1);
    // The append is the door's last request: it comes after the decisive write.
    expect(s3.requests().at(-1)).toBe(puts[0]);
    await call('/v1/table/sales%24orders/declare', { id: ['sales', 'orders'] });
    expect(classMock.calls()).toHaveLength(0);
    expect(eb.calls()).toHaveLength(0);
    expect(logged().map((e) => e.type)).toEqual(['dev.rask.namespace.created', 'dev.rask.table.declared']);
  });

  it('the relay puts each logged event on the bus once', async () => {
    later();
    const first = await relay.run(Date.now() + 60_000);
    expect(first).toMatchObject({ relayed: 2, unpublished: 0, storageCommits: 0 });
    expect(onBus().map((e) => e.id)).toEqual(logged().map((e) => e.id));
    expect(eb.accepted(BUS).map((a) => [a.entry.Source, a.entry.DetailType])).toEqual(logged().map((e) => [e.source, e.type]));
    later();
    expect(await relay.run(Date.now() + 60_000)).toMatchObject({ relayed: 0, storageCommits: 0 });
    expect(onBus()).toHaveLength(2);
  });

  it('a bus that refuses: the cursor stays, and the next cycle delivers the same ids', async () => {
    await call('/v1/namespace/ops/create', { id: ['ops'] });
    later();
    eb.failCalls(3); // every attempt of the one batch
    const refused = await relay.run(Date.now() + 60_000);
    expect(refused).toMatchObject({ relayed: 1, unpublished: 1 });
    expect(onBus()).toHaveLength(2);
    later();
    expect(await relay.run(Date.now() + 60_000)).toMatchObject({ relayed: 1, unpublished: 0 });
    expect(onBus().map((e) => e.id)).toEqual(logged().map((e) => e.id));
  });

  it('a manifest put straight into _versions/ becomes a version event in the next cycle; the catalog’s own version does not', async () => {
    const declared = await call('/v1/table/sales%24orders/describe', { id: ['sales', 'orders'] });
    const tableKey = (declared.location as string).slice(`s3://${WH}/`.length);
    // Version 1 through the catalog (managed versioning: the client stages, the catalog commits).
    const staged = `${tableKey}/_versions/${manifestName(1, 'V2')}-${randomUUID()}`;
    const put = await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: staged, Body: Buffer.from('manifest v1') }));
    await call('/v1/table/sales%24orders/version/create', { id: ['sales', 'orders'], version: 1, manifest_path: staged, e_tag: put.ETag, manifest_size: 11, naming_scheme: 'V2' });
    later();
    await relay.run(Date.now() + 60_000); // the table is noted; version 1 is claimed by its event
    // Version 2 straight to storage: a writer that never talks to the catalog.
    await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: `${tableKey}/_versions/${manifestName(2, 'V2')}`, Body: Buffer.from('manifest v2') }));
    later();
    const found = await relay.run(Date.now() + 60_000);
    expect(found.storageCommits).toBe(1);
    later();
    await relay.run(Date.now() + 60_000);
    const storage = onBus().filter((e) => e.data.details?.via === 'storage');
    expect(storage.map((e) => [e.type, e.subject, e.data.version])).toEqual([['dev.rask.table.version.created', 'table:sales.orders', 2]]);
    const versions = onBus().filter((e) => e.subject === 'table:sales.orders' && e.data.version !== undefined).map((e) => e.data.version);
    expect(versions).toEqual([1, 2]);
    // One to one: the log and the bus hold the same ids, each once.
    const ids = onBus().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(logged().map((e) => e.id));
  });
});
