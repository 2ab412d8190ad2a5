/**
 * A write's answer time with an unreachable EventBridge bus (issue #27, docs/events.md,
 * "Delivery"): CreateNamespace through the metadata Lambda's composition (createAwsApp) over the
 * S3 fake with S3-like latency (reads 15 ms, writes and listings 30 ms), RASK_EVENT_BUS_NAME set
 * and the EventBridge endpoint a closed local port (connection refused, as an outage or a missing
 * VPC endpoint answers). Before the relay, the answer waited for PutEvents and its retries; with
 * the relay it waits for the change-log append only.
 *
 *   npx tsx bench/change-latency.ts [--writes 40]
 */
import { performance } from 'node:perf_hooks';
import { createAwsApp } from '../lib/app/aws.js';
import { loadAwsConfig } from '../lib/config.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';
import { callAsAdmin } from '../test/support/admin-call.js';
import { createS3Fake } from '../test/support/s3-fake.js';

process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = 'http://127.0.0.1:9';
process.env.AWS_ACCESS_KEY_ID ??= 'bench';
process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';

const writes = Number(process.argv[process.argv.indexOf('--writes') + 1] || 40) || 40;
const fake = createS3Fake();
const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: 'registry-bucket', RASK_WAREHOUSE_BUCKET: 'wh-bucket', AWS_REGION: 'us-east-1', RASK_EVENT_BUS_NAME: 'rask-bus' });
const quiet = { error: () => {}, warn: () => {} };
const { router } = await createAwsApp(config, metaHandlers, fake.client, undefined, { logger: quiet });
fake.setLatency((op) => (op === 'GET' || op === 'HEAD' ? 15 : 30));
const ms: number[] = [];
for (let i = 0; i < writes + 3; i++) {
  const t0 = performance.now();
  const res = await callAsAdmin(router, 'POST', `/v1/namespace/n${i}/create`, { id: [`n${i}`] });
  if (res.status !== 200) throw new Error(res.text);
  if (i >= 3) ms.push(performance.now() - t0); // the first calls load the clients
}
ms.sort((a, b) => a - b);
const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(0);
console.log(`CreateNamespace, unreachable bus, ${writes} writes: median ${q(0.5)} ms, p95 ${q(0.95)} ms, max ${ms.at(-1)!.toFixed(0)} ms`);
