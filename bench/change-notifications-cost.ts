/**
 * What the change relay costs in requests with S3 Event Notifications (docs/events.md, "Cost on
 * AWS"), counted on the S3 and EventBridge fakes, never estimated. The fake records every object
 * write with its version id; the bench hands those the template's rules would pass on to the
 * relay (lib/app/aws-relay.ts, `notified`) in batches of the queue's size (100), the way the
 * notification queue does:
 *
 * 1. T DeclareTable changes through the metadata Lambda's composition: their log entries'
 *    notifications → S3 requests and PutEvents per change;
 * 2. M manifests put straight into M of those tables' `_versions/` (no catalog), notified in
 *    batches → requests per manifest (the table's claim and record, the log read for claims),
 *    then the storage events' own notifications;
 * 2b. a second round on the warm relay (T/2 more changes, M more manifests): the log is read for
 *    claims once per entry, from where the first round stopped;
 * 3. one idle scheduled cycle over the 1.5 T tables, notifications off (the scan was the bus leg,
 *    once a minute) and on (the safety net, every five minutes; it publishes nothing).
 *
 *   npx tsx bench/change-notifications-cost.ts [--tables 1000] [--manifests 100]
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createAwsApp } from '../lib/app/aws.js';
import { createAwsRelay } from '../lib/app/aws-relay.js';
import { manifestName } from '../lib/catalog/dataset/manifests.js';
import { loadAwsConfig, loadMaintenanceConfig } from '../lib/config.js';
import type { ObjectCreated } from '../lib/maintenance/change-notifications.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';
import { callAsAdmin } from '../test/support/admin-call.js';
import { createEventBridgeFake } from '../test/support/eventbridge-fake.js';
import { createS3Fake } from '../test/support/s3-fake.js';
import { countByOp as count, formatPerUnit as fmt } from '../test/support/s3-requests.js';

const arg = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(`--${name}`) + 1] || fallback) || fallback;
const T = arg('tables', 1000);
const M = Math.min(arg('manifests', 100), T);
const BATCH = 100;
const REGISTRY = 'registry-bucket';
const WH = 'wh-bucket';
const ENV = { RASK_REGISTRY_BUCKET: REGISTRY, RASK_WAREHOUSE_BUCKET: WH, AWS_REGION: 'us-east-1', RASK_EVENT_BUS_NAME: 'bus' };
const s3 = createS3Fake();
const eb = createEventBridgeFake();
const quiet = { error: () => {}, warn: () => {} };
const { router } = await createAwsApp(loadAwsConfig(ENV), metaHandlers, s3.client, undefined, { logger: quiet });
const ok = async (path: string, body: unknown) => {
  const res = await callAsAdmin(router, 'POST', path, body);
  if (res.status !== 200) throw new Error(res.text);
  return JSON.parse(res.text || 'null') as Record<string, unknown>;
};
// The relays' clock ahead of the store's: every append has passed the log's settle window and
// every manifest the relay's (30 s), so nothing waits.
let ahead = 120_000;
const now = () => new Date(Date.now() + ahead);
const options = { client: s3.client, eventBridge: eb.client, now, sleep: async () => {} };
const withNotifications = await createAwsRelay(loadMaintenanceConfig({ ...ENV, RASK_CHANGE_NOTIFICATIONS: 'true' }), options);
const scanOnly = await createAwsRelay(loadMaintenanceConfig(ENV), options);

/** What the rules pass on (infra/constructs/change-relay.ts): the log's entries, main-branch-or-not manifests. */
let seen = 0;
const notifications = (): ObjectCreated[] => {
  const all = s3.created();
  const fresh = all.slice(seen).filter((c) => (c.bucket === REGISTRY && c.key.startsWith('registry/changes/')) || (c.bucket === WH && /^warehouse\/.*\/_versions\/.*\.manifest$/.test(c.key)));
  seen = all.length;
  return fresh.map((c) => ({ bucket: c.bucket, key: c.key, versionId: c.versionId, sequencer: c.sequencer, time: c.time }));
};
const deliver = async (notes: ObjectCreated[]) => {
  let published = 0;
  let storageCommits = 0;
  let batches = 0;
  for (let at = 0; at < notes.length; at += BATCH) {
    const r = await withNotifications.notified(notes.slice(at, at + BATCH));
    if (r.failed.length > 0) throw new Error(`notifications failed: ${r.problems.join('; ')}`);
    published += r.published;
    storageCommits += r.storageCommits;
    batches++;
  }
  return { published, storageCommits, batches };
};

await ok('/v1/namespace/ns/create', { id: ['ns'] });
await withNotifications.run(Date.now() + 600_000); // the state; where each table stands
for (let i = 0; i < T; i++) await ok(`/v1/table/ns%24t${i}/declare`, { id: ['ns', `t${i}`] });

// 1. The doors' log entries.
s3.clearRequests();
let calls = eb.calls().length;
const doors = await deliver(notifications());
const doorRequests = s3.requests();
const doorPutEvents = eb.calls().length - calls;

// 2. Manifests straight to storage.
const locations: string[] = [];
for (let i = 0; i < M; i++) locations.push(String((await ok(`/v1/table/ns%24t${i}/describe`, { id: ['ns', `t${i}`] })).location).slice(`s3://${WH}/`.length));
for (const l of locations) await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: `${l}/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('manifest') }));
s3.clearRequests();
const direct = await deliver(notifications());
const manifestRequests = s3.requests();
s3.clearRequests();
calls = eb.calls().length;
const storageEvents = await deliver(notifications());
const storageRequests = s3.requests();
const storagePutEvents = eb.calls().length - calls;

// 2b. A second round on the warm relay: D more changes, then M more manifests. The log is read
// for claims from where the first round's reading stopped: once per entry, not once per manifest.
const D = Math.max(1, Math.floor(T / 2));
for (let i = 0; i < D; i++) await ok(`/v1/table/ns%24more${i}/declare`, { id: ['ns', `more${i}`] });
await deliver(notifications());
const more: string[] = [];
for (let i = M; i < Math.min(2 * M, T); i++) more.push(String((await ok(`/v1/table/ns%24t${i}/describe`, { id: ['ns', `t${i}`] })).location).slice(`s3://${WH}/`.length));
for (const l of more) await s3.client.send(new PutObjectCommand({ Bucket: WH, Key: `${l}/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('manifest') }));
s3.clearRequests();
const warm = await deliver(notifications());
const warmRequests = s3.requests();
const warmLogGets = warmRequests.filter((r) => r.op === 'GET' && r.key.startsWith('registry/changes/')).length;
await deliver(notifications());

// 3. Idle scheduled cycles over the T tables.
ahead += 600_000;
await scanOnly.run(Date.now() + 600_000);
await withNotifications.run(Date.now() + 600_000);
s3.clearRequests();
await scanOnly.run(Date.now() + 600_000);
const idleBefore = s3.requests();
s3.clearRequests();
calls = eb.calls().length;
await withNotifications.run(Date.now() + 600_000);
const idleAfter = s3.requests();
const idleAfterPutEvents = eb.calls().length - calls;

console.log(`${T} tables, ${T} DeclareTable changes, ${M} manifests straight to storage; batches of ${BATCH}`);
console.log(`  log-entry notifications: ${doors.published} published in ${doors.batches} batch(es); per change: S3 ${fmt(count(doorRequests), T)}; PutEvents calls ${(doorPutEvents / T).toFixed(3)}`);
console.log(`  manifest notifications: ${direct.storageCommits} storage commits in ${direct.batches} batch(es); per manifest: S3 ${fmt(count(manifestRequests), M)} (${manifestRequests.length} requests)`);
console.log(`  their storage events' notifications: ${storageEvents.published} published; per event: S3 ${fmt(count(storageRequests), M)}; PutEvents calls ${(storagePutEvents / M).toFixed(3)}`);
console.log(`  warm relay, ${D} more changes then ${more.length} more manifests: ${warm.storageCommits} storage commits; per manifest: S3 ${fmt(count(warmRequests), more.length)}; log entries read for claims ${warmLogGets} (the ${D} changes appended since the first round's reading: each read once)`);
console.log(`  an idle scheduled cycle over ${T + D} tables, notifications off (the bus leg, every minute): ${idleBefore.length} requests (${fmt(count(idleBefore), 1)})`);
console.log(`  an idle scheduled cycle over ${T + D} tables, notifications on (safety net, every 5 minutes): ${idleAfter.length} requests (${fmt(count(idleAfter), 1)}), PutEvents calls ${idleAfterPutEvents}`);
console.log(`  per hour of idle cycles: before ${idleBefore.length * 60}, after ${idleAfter.length * 12} requests`);
