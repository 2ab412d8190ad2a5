/**
 * S3 attempts per metadata door while S3 fails (issue #35): the metadata Lambda's composition
 * (createAwsApp) with the production S3 client (lib/app/aws-s3.ts, RASK_S3_* defaults unless
 * given), over the S3 fake with the fault injector inside the SDK's retry loop
 * (test/support/s3-faults.ts), every attempt failing with probability p as S3 fails (all kinds
 * of ALL_FAULTS, applied-then-lost included). One client, doors one after another, so each
 * attempt is counted against the door that made it. Prints, per door: calls, answers by status
 * and code, S3 attempts (mean / max; without faults they equal the door's requests) and faults met.
 *
 *   npx tsx bench/s3-fault-attempts.ts [--p 0.05] [--rounds 40] [--seed 35] [--attempts 3]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createAwsApp } from '../lib/app/aws.js';
import { createS3Client } from '../lib/app/aws-s3.js';
import { loadAwsConfig } from '../lib/config.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';
import { createS3Fake } from '../test/support/s3-fake.js';
import { attachS3Fake, createS3Faults } from '../test/support/s3-faults.js';

const { values } = parseArgs({
  options: {
    p: { type: 'string', default: '0.05' },
    rounds: { type: 'string', default: '40' },
    seed: { type: 'string', default: '35' },
    attempts: { type: 'string', default: '3' },
  },
});

// Signing needs credentials; the fake never checks them.
process.env.AWS_ACCESS_KEY_ID ??= 'fake';
process.env.AWS_SECRET_ACCESS_KEY ??= 'fake';

const fake = createS3Fake();
const faults = createS3Faults({ seed: Number(values.seed) });
const config = loadAwsConfig({
  RASK_REGISTRY_BUCKET: 'reg-bucket',
  RASK_WAREHOUSE_BUCKET: 'wh-bucket',
  AWS_REGION: 'us-east-1',
  RASK_S3_MAX_ATTEMPTS: values.attempts,
});
const silent = { error: () => undefined, warn: () => undefined };
const { router } = await createAwsApp(config, metaHandlers, attachS3Fake(createS3Client(config), fake, faults), undefined, { logger: silent });

interface Row {
  calls: number;
  answers: Map<string, number>;
  attempts: number[];
  faults: number;
  ms: number[];
}
const rows = new Map<string, Row>();

async function door(name: string, method: string, path: string, body?: unknown): Promise<void> {
  const before = faults.attempts().length;
  const injected = faults.injected().length;
  const started = performance.now();
  const res = await router({
    method,
    rawPath: path,
    rawQuery: 'delimiter=%24',
    headers: { 'content-type': 'application/json' },
    authorizer: { principal: 'admin', platformAdmin: 'true', via: 'admin-key' },
    body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
    requestId: randomUUID(),
  });
  const row: Row = rows.get(name) ?? { calls: 0, answers: new Map(), attempts: [], faults: 0, ms: [] };
  rows.set(name, row);
  const code = res.status === 200 ? '' : `/${JSON.parse(res.body.toString()).code}`;
  const answer = `${res.status}${code}`;
  row.calls++;
  row.answers.set(answer, (row.answers.get(answer) ?? 0) + 1);
  row.attempts.push(faults.attempts().length - before);
  row.faults += faults.injected().length - injected;
  row.ms.push(performance.now() - started);
}

// The registry's backoff sleeps on unref'd timers (they must not hold a server open); here they
// may be all that is pending, and the script would exit mid-run.
const keepAlive = setInterval(() => undefined, 1000);
const started = performance.now();
faults.setProbability(Number(values.p));
for (let i = 0; i < Number(values.rounds); i++) {
  const ns = `ns${i}`;
  await door('CreateNamespace', 'POST', `/v1/namespace/${ns}/create`, { id: [ns] });
  await door('DeclareTable', 'POST', `/v1/table/${ns}%24t/declare`, { id: [ns, 't'] });
  await door('DescribeTable', 'POST', `/v1/table/${ns}%24t/describe`, { id: [ns, 't'] });
  await door('ListTables', 'GET', `/v1/namespace/${ns}/table/list`);
  await door('RenameTable', 'POST', `/v1/table/${ns}%24t/rename`, { id: [ns, 't'], new_table_name: 'u' });
  await door('DropTable (declared-only)', 'POST', `/v1/table/${ns}%24u/drop`, { id: [ns, 'u'] });
  await door('DeclareTable', 'POST', `/v1/table/${ns}%24v/declare`, { id: [ns, 'v'] });
  await door('DeregisterTable', 'POST', `/v1/table/${ns}%24v/deregister`, { id: [ns, 'v'] });
  await door('ListNamespaces', 'GET', '/v1/namespace/%24/list');
  await door('DropNamespace', 'POST', `/v1/namespace/${ns}/drop`, { id: [ns] });
}
const seconds = (performance.now() - started) / 1000;

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
console.log(`p = ${values.p}, SDK attempts = ${values.attempts}, seed ${values.seed}, ${values.rounds} rounds, ${seconds.toFixed(1)} s`);
console.log('| door | calls | answers | S3 attempts mean / max | faults met | ms p50 / max |');
console.log('|---|---|---|---|---|---|');
for (const [name, row] of rows) {
  const mean = row.attempts.reduce((a, b) => a + b, 0) / row.attempts.length;
  const answers = [...row.answers].map(([a, n]) => `${a} ×${n}`).join(', ');
  console.log(
    `| ${name} | ${row.calls} | ${answers} | ${mean.toFixed(2)} / ${Math.max(...row.attempts)} | ${row.faults} | ${pct(row.ms, 0.5).toFixed(0)} / ${Math.max(...row.ms).toFixed(0)} |`,
  );
}
clearInterval(keepAlive);
fake.mock.restore();
