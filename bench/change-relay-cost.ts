/**
 * What the change feed costs in requests on AWS (docs/events.md, "Cost"), counted on the S3 fake
 * and the EventBridge fake, never estimated: N changes through the metadata Lambda's composition
 * (DeclareTable, so every change is also a table the relay scans), then relay cycles until the
 * bus has them all; then one idle cycle, whose requests are the fixed cost of a cycle over T
 * tables. Prints requests per change and per idle table-cycle.
 *
 *   npx tsx bench/change-relay-cost.ts [--changes 1000]
 */
import { createAwsApp } from '../lib/app/aws.js';
import { createAwsRelay } from '../lib/app/aws-relay.js';
import { loadAwsConfig, loadMaintenanceConfig } from '../lib/config.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';
import { callAsAdmin } from '../test/support/admin-call.js';
import { createEventBridgeFake } from '../test/support/eventbridge-fake.js';
import { createS3Fake } from '../test/support/s3-fake.js';
import { countByOp as count, formatPerUnit as fmt } from '../test/support/s3-requests.js';

const n = Number(process.argv[process.argv.indexOf('--changes') + 1] || 1000) || 1000;
const ENV = { RASK_REGISTRY_BUCKET: 'registry-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket', AWS_REGION: 'us-east-1', RASK_EVENT_BUS_NAME: 'bus' };
const s3 = createS3Fake();
const eb = createEventBridgeFake();
const quiet = { error: () => {}, warn: () => {} };
const { router } = await createAwsApp(loadAwsConfig(ENV), metaHandlers, s3.client, undefined, { logger: quiet });
const ok = async (path: string, body: unknown) => {
  const res = await callAsAdmin(router, 'POST', path, body);
  if (res.status !== 200) throw new Error(res.text);
};
await ok('/v1/namespace/ns/create', { id: ['ns'] });
// The relay's clock ahead of the store's: every append has passed the log's settle window. The
// first cycle runs on the store's clock, so the recovery's window (lib/maintenance/change-recovery.ts)
// starts before the changes below.
let ahead = 0;
const relay = await createAwsRelay(loadMaintenanceConfig(ENV), { client: s3.client, eventBridge: eb.client, now: () => new Date(Date.now() + ahead), sleep: async () => {} });
await relay.run(Date.now() + 600_000); // the first cycle: the state and the one namespace event

s3.clearRequests();
for (let i = 0; i < n; i++) await ok(`/v1/table/ns%24t${i}/declare`, { id: ['ns', `t${i}`] });
const appends = s3.requests().filter((r) => r.key.startsWith('registry/changes/'));
s3.clearRequests();
const callsBefore = eb.calls().length;
let cycles = 0;
while (eb.accepted('bus').length < n + 1 && cycles < 20) {
  ahead += 60_000;
  await relay.run(Date.now() + 600_000);
  cycles++;
}
const relayed = s3.requests();
const putEvents = eb.calls().length - callsBefore;
// One idle cycle: nothing new in the log, n declared tables (no manifests) to look at. Same
// clock offset as the last relaying cycle, so the recovery's window does not reach the changes yet.
s3.clearRequests();
await relay.run(Date.now() + 600_000);
const idle = s3.requests();
const idleReport = await (async () => {
  // The recovery's window (2 minutes behind the relay's clock) now holds the n changes: one
  // cycle reads each record written in it once; the next cycle's window is empty.
  s3.clearRequests();
  ahead += 120_000;
  const windowed = await relay.run(Date.now() + 600_000);
  const withWindow = s3.requests();
  s3.clearRequests();
  ahead += 60_000;
  await relay.run(Date.now() + 600_000);
  return { windowed, withWindow, emptyWindow: s3.requests() };
})();

console.log(`${n} changes (DeclareTable), relayed in ${cycles} cycle(s)`);
console.log(`  appends (on the doors' path), per change: ${fmt(count(appends), n)}`);
console.log(`  relay, per change: S3 ${fmt(count(relayed), n)}; PutEvents calls ${(putEvents / n).toFixed(3)}, entries ${((eb.accepted('bus').length - 1) / n).toFixed(3)}`);
console.log(`  one idle cycle over ${n} tables, per table: ${fmt(count(idle), n)} (${idle.length} requests)`);
const minus = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.entries(a).map(([op, c]) => [op, c - (b[op] ?? 0)]));
console.log(`  relay minus the table scan (the log's own part), per change: ${fmt(minus(count(relayed), count(idle)), n)}`);
console.log(`  a cycle whose recovery window holds the ${n} changes: ${idleReport.withWindow.length} requests, ${idleReport.windowed.recovered} recovered; an idle cycle after it (window empty): ${idleReport.emptyWindow.length} requests`);
console.log(`  the recovery's reads per change written (the difference): ${fmt(minus(count(idleReport.withWindow), count(idleReport.emptyWindow)), n)}`);
console.log(`  an idle cycle per table, the recovery's LIST of the tree included: ${fmt(count(idleReport.emptyWindow), n)}`);
