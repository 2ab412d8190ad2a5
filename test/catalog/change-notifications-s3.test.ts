// @covers CreateNamespace, DeclareTable, CreateTableVersion
/**
 * The change relay's notification path on AWS (lib/maintenance/change-notifications.ts, as
 * functions/change-relay.ts builds it), over the S3 fake and the EventBridge fake: the fake
 * records every object write with its version id and a sequencer, which the test hands to the
 * relay as S3 Event Notifications ("Object Created") the way the template's rules filter them
 * (the change log's prefix in the registry bucket; `…/_versions/*.manifest` in the warehouse
 * bucket).
 *
 * - A log entry's notification puts that entry, read at the exact version named, on the bus;
 *   with notifications on, the scheduled scan publishes nothing itself (one path to the bus).
 * - A manifest the catalog committed (claimed by its door's event) yields nothing; one put
 *   straight into a registered table's `_versions/` becomes one `via: storage` event in the log,
 *   which its own notification then takes to the bus; the safety-net scan does not announce it
 *   again. A manifest of an unregistered location is ignored.
 * - A notification delivered twice, or a batch offered again after the bus refused it, puts the
 *   same ids on the bus (delivery at least once; one change per id).
 */
import { randomUUID } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAwsApp } from '../../lib/app/aws.js';
import { createAwsRelay, isSqsBatch, relaySqsBatch, type AwsRelay } from '../../lib/app/aws-relay.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { loadAwsConfig, loadMaintenanceConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import type { ObjectCreated } from '../../lib/maintenance/change-notifications.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { callAsAdmin } from '../support/admin-call.js';
import { s3ObjectCreatedEvent } from '../support/aws-http-fake.js';
import { busChanges, loggedChanges } from '../support/change-log-reads.js';
import { createEventBridgeFake, type EventBridgeFake } from '../support/eventbridge-fake.js';
import { createS3Fake, type ObjectCreatedRecord, type S3Fake } from '../support/s3-fake.js';

const REGISTRY = 'registry-bucket';
const WH = 'wh-bucket';
const BUS = 'rask-bus';
const ENV = { RASK_REGISTRY_BUCKET: REGISTRY, RASK_WAREHOUSE_BUCKET: WH, AWS_REGION: 'us-east-1', RASK_EVENT_BUS_NAME: BUS, RASK_CHANGE_NOTIFICATIONS: 'true' };

/** What the template's rules let through (infra/constructs/change-relay.ts, NOTIFIED). */
const notified = (c: ObjectCreatedRecord) =>
  (c.bucket === REGISTRY && c.key.startsWith('registry/changes/')) || (c.bucket === WH && c.key.startsWith('warehouse/') && /\/_versions\/.*\.manifest$/.test(c.key));
const asNote = (c: ObjectCreatedRecord): ObjectCreated => ({ bucket: c.bucket, key: c.key, versionId: c.versionId, sequencer: c.sequencer, time: c.time });

describe('S3 Event Notifications through the change relay (S3 and EventBridge fakes)', () => {
  let s3: S3Fake;
  let eb: EventBridgeFake;
  let router: Router;
  let relay: AwsRelay;
  let delivered = 0;
  const later = (ms = 120_000) => vi.setSystemTime(Date.now() + ms);
  const classMock = mockClient(EventBridgeClient);

  const call = async (path: string, body: unknown) => {
    const res = await callAsAdmin(router, 'POST', path, body);
    expect(res.status, res.text).toBe(200);
    return JSON.parse(res.text || 'null');
  };
  const logged = () => loggedChanges(s3, REGISTRY);
  const onBus = () => busChanges(eb, BUS);
  /** The notifications of every write since the last delivery, as the rules pass them on. */
  const pending = () => {
    const all = s3.created();
    const fresh = all.slice(delivered).filter(notified).map(asNote);
    delivered = all.length;
    return fresh;
  };
  /** Delivers notifications until none is left (the relay's own appends notify too). */
  const drain = async () => {
    const reports = [];
    for (let notes = pending(); notes.length > 0; notes = pending()) reports.push(await relay.notified(notes));
    return reports;
  };

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    s3 = createS3Fake();
    eb = createEventBridgeFake();
    ({ router } = await createAwsApp(loadAwsConfig(ENV), metaHandlers, s3.client));
    relay = await createAwsRelay(loadMaintenanceConfig(ENV), { client: s3.client, eventBridge: eb.client, sleep: async () => {} });
    later();
    await relay.run(Date.now() + 60_000); // the scan's first cycle: notes where every table stands
  });
  afterAll(() => {
    classMock.restore();
    vi.useRealTimers();
  });

  it('a log entry’s notification puts that entry on the bus; the scan publishes nothing itself', async () => {
    await call('/v1/namespace/sales/create', { id: ['sales'] });
    await call('/v1/table/sales%24orders/declare', { id: ['sales', 'orders'] });
    later();
    // The scan reads the log (claims, recovery) but, with notifications on, sends nothing.
    expect(await relay.run(Date.now() + 60_000)).toMatchObject({ unpublished: 0, storageCommits: 0 });
    expect(eb.calls()).toHaveLength(0);
    const [report] = await drain();
    expect(report).toMatchObject({ published: 2, storageCommits: 0, failed: [], problems: [] });
    expect(onBus().map((e) => [e.type, e.id])).toEqual(logged().map((e) => [e.type, e.id]));
    expect(eb.accepted(BUS).map((a) => [a.entry.Source, a.entry.DetailType])).toEqual(logged().map((e) => [e.source, e.type]));
  });

  it('reads the exact version the notification names', async () => {
    const [entry] = s3.created().filter((c) => c.key.startsWith('registry/changes/'));
    s3.clearRequests();
    const before = onBus().length;
    await relay.notified([asNote(entry)]);
    const gets = s3.requests().filter((r) => r.op === 'GET' && r.key === entry.key);
    expect(gets).toHaveLength(1);
    expect(s3.mock.commandCalls(GetObjectCommand).at(-1)?.args[0].input).toMatchObject({ Key: entry.key, VersionId: entry.versionId });
    // At least once: the same change again, with its id.
    expect(onBus().slice(before).map((e) => e.id)).toEqual([JSON.parse(s3.bucketContents(REGISTRY).get(entry.key)!.toString()).id]);
  });

  it('the catalog’s own manifest yields nothing; one put straight into _versions/ becomes one storage event, on the bus through its own notification', async () => {
    const declared = await call('/v1/table/sales%24orders/describe', { id: ['sales', 'orders'] });
    const tableKey = (declared.location as string).slice(`s3://${WH}/`.length);
    // Version 1 through the catalog (managed versioning: the client stages, the catalog commits).
    const staged = `${tableKey}/_versions/${manifestName(1, 'V2')}-${randomUUID()}`;
    const put = await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: staged, Body: Buffer.from('manifest v1') }));
    await call('/v1/table/sales%24orders/version/create', { id: ['sales', 'orders'], version: 1, manifest_path: staged, e_tag: put.ETag, manifest_size: 11, naming_scheme: 'V2' });
    // Version 2 straight to storage, and a manifest of a dataset no table is registered at.
    await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: `${tableKey}/_versions/${manifestName(2, 'V2')}`, Body: Buffer.from('manifest v2') }));
    await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: `warehouse/elsewhere/x.lance/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('not ours') }));
    later();
    const reports = await drain();
    expect(reports[0]).toMatchObject({ storageCommits: 1, claimed: 1, failed: [], problems: [] });
    expect(reports[0].ignored).toBeGreaterThanOrEqual(1); // the unregistered location (and the staged name)
    // The storage event's own notification took it to the bus in the next batch.
    expect(reports.at(-1)).toMatchObject({ published: 1 });
    const versions = onBus().filter((e) => e.subject === 'table:sales.orders' && e.data.version !== undefined);
    expect(versions.map((e) => [e.data.version, e.data.details?.via ?? e.data.operation])).toEqual([
      [1, 'CreateTableVersion'],
      [2, 'storage'],
    ]);
    // The safety-net scan, once it judges version 2, finds it claimed by the storage event.
    later(300_000);
    expect(await relay.run(Date.now() + 60_000)).toMatchObject({ storageCommits: 0 });
    later(300_000);
    expect(await relay.run(Date.now() + 60_000)).toMatchObject({ storageCommits: 0 });
    expect(pending()).toEqual([]);
    // One to one: each id once in the log; the bus holds the same ids (the re-read above: a duplicate).
    const ids = logged().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...new Set(onBus().map((e) => e.id))].sort()).toEqual([...ids].sort());
  });

  it('a manifest younger than the settle window is judged only once it is old enough', async () => {
    const sleeps: number[] = [];
    const waiting = await createAwsRelay(loadMaintenanceConfig(ENV), { client: s3.client, eventBridge: eb.client, sleep: async (ms) => void sleeps.push(ms) });
    const tableKey = String((await call('/v1/table/sales%24orders/describe', { id: ['sales', 'orders'] })).location).slice(`s3://${WH}/`.length);
    await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: `${tableKey}/_versions/${manifestName(3, 'V2')}`, Body: Buffer.from('manifest v3') }));
    const report = await waiting.notified(pending());
    expect(report).toMatchObject({ storageCommits: 1 });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(25_000);
    expect(sleeps[0]).toBeLessThanOrEqual(30_000);
    later();
    await drain();
  });

  it('a bus that refuses: every entry of the batch is offered again, and the retry delivers the same ids', async () => {
    await call('/v1/namespace/ops/create', { id: ['ops'] });
    later();
    const notes = pending();
    eb.failCalls(3); // every attempt of the one batch
    const refused = await relay.notified(notes);
    expect(refused.published).toBe(0);
    expect(refused.failed).toEqual(notes.map((_, i) => i));
    const retried = await relay.notified(refused.failed.map((i) => notes[i]));
    expect(retried).toMatchObject({ published: 1, failed: [] });
    expect(onBus().at(-1)).toMatchObject({ type: 'dev.rask.namespace.created', subject: 'namespace:ops' });
  });

  it('one write notified twice in a batch is taken once', async () => {
    await call('/v1/namespace/twice/create', { id: ['twice'] });
    later();
    const [note] = pending();
    const before = onBus().length;
    expect(await relay.notified([note, note])).toMatchObject({ published: 1, ignored: 1 });
    expect(onBus()).toHaveLength(before + 1);
  });

  it('a queue batch: only the records whose work failed come back as batchItemFailures; a message that is no notification is dropped', async () => {
    await call('/v1/namespace/batch1/create', { id: ['batch1'] });
    await call('/v1/namespace/batch2/create', { id: ['batch2'] });
    later();
    const notes = pending();
    expect(notes).toHaveLength(2);
    // As the queue hands them over: each body the EventBridge event S3 sent.
    const record = (messageId: string, body: unknown) => ({ messageId, body: JSON.stringify(body), eventSource: 'aws:sqs' });
    const asEvent = (n: ObjectCreated) => s3ObjectCreatedEvent({ bucket: n.bucket, key: n.key, size: 1, etag: 'e', versionId: n.versionId, sequencer: n.sequencer, time: n.time });
    const batch = { Records: [record('m-1', asEvent(notes[0])), record('m-junk', { hello: 'world' }), record('m-2', asEvent(notes[1]))] };
    expect(isSqsBatch(batch)).toBe(true);
    expect(isSqsBatch({ 'detail-type': 'Scheduled Event' })).toBe(false);
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    const before = onBus().length;
    eb.failCalls(3);
    expect(await relaySqsBatch(relay, batch, quiet)).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-2' }] });
    expect(onBus()).toHaveLength(before);
    expect(await relaySqsBatch(relay, batch, quiet)).toEqual({ batchItemFailures: [] });
    expect(onBus().slice(before).map((e) => e.subject)).toEqual(['namespace:batch1', 'namespace:batch2']);
  });
});
