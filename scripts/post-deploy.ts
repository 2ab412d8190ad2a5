/**
 * First-deploy check (docs/deploy.md, "Right after `cdk deploy`"): drives a deployed catalog with
 * the official client exactly as a user would — namespace, table, write, read, search, drop —
 * then, on AWS, runs each scheduled function once. Every step prints what it proved or what its
 * failure most likely means; the exit code is the number of failed steps (0 = healthy).
 *
 *   npx tsx scripts/post-deploy.ts --outputs cdk-outputs.json        # after cdk deploy --outputs-file
 *   npx tsx scripts/post-deploy.ts --endpoint http://127.0.0.1:2333  # the local server (no key)
 *
 * Options: --endpoint URL, --api-key KEY (default: $RASK_API_KEY, or read from the stack's
 * admin-key secret), --outputs FILE, --stack NAME (default: Rask), --no-functions, --keep,
 * --no-task-tier, --task-rows N (default 20100), --task-timeout-minutes M (default 20).
 *
 * With the job task tier (a `JobTasksClusterName` output), one more step queues an index build
 * to the task tier and reports its latencies: RunTask → claim (Fargate's start, which nothing
 * offline can measure) and claim → done, with ECS's own provisioning / pull / start times.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as lancedb from '@lancedb/lancedb';

interface Step {
  readonly name: string;
  /** What a failure of this step most likely means, for the person reading the output. */
  readonly meaning: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: a step either returns a note or nothing (an async body without return).
  readonly run: () => Promise<string | void>;
}

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    'api-key': { type: 'string' },
    outputs: { type: 'string' },
    stack: { type: 'string', default: 'Rask' },
    'no-functions': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'no-task-tier': { type: 'boolean', default: false },
    'task-rows': { type: 'string', default: '20100' },
    'task-timeout-minutes': { type: 'string', default: '20' },
  },
});

const outputs: Record<string, string> = values.outputs
  ? ((JSON.parse(readFileSync(values.outputs, 'utf8')) as Record<string, Record<string, string>>)[values.stack!] ?? {})
  : {};
const endpoint = (values.endpoint ?? outputs.Endpoint)?.replace(/\/$/, '');
if (!endpoint) {
  console.error('post-deploy: no endpoint: pass --endpoint URL or --outputs <cdk deploy --outputs-file>');
  process.exit(2);
}

async function apiKey(): Promise<string | undefined> {
  if (values['api-key']) return values['api-key'];
  if (process.env.RASK_API_KEY) return process.env.RASK_API_KEY;
  if (!outputs.AdminKeySecretArn) return undefined;
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const secret = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: outputs.AdminKeySecretArn }));
  return secret.SecretString;
}

const key = await apiKey();
const headers = key ? { 'x-api-key': key } : undefined;
const connect = () => lancedb.connectNamespace('rest', { uri: endpoint, ...(headers ? { headers } : {}) });
const namespace = [`rask_post_deploy_${Date.now().toString(36)}`];
const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, 1, 0, 0] }));

const steps: Step[] = [
  {
    name: 'create a namespace',
    meaning: 'the API, the authorizer or the metadata function is not reachable: 401 = wrong key; 403/5xx from the gateway = integration or permission; a timeout = the endpoint URL',
    run: async () => {
      await (await connect()).createNamespace(namespace);
    },
  },
  {
    name: 'create a table with 10 rows',
    meaning: 'declaring or writing the first version failed: AccessDenied on S3 = the vending role or its session policy; an error naming Lambda = the data function or its layer',
    run: async () => {
      const table = await (await connect()).createTable('smoke', rows(0, 10), namespace);
      return `${await table.countRows()} rows`;
    },
  },
  {
    name: 'append 5 rows from a second connection',
    meaning: 'a commit through the catalog failed: CreateTableVersion (managed versioning) or read-write vending',
    run: async () => {
      const table = await (await connect()).openTable('smoke', namespace);
      await table.add(rows(10, 5));
      const n = await table.countRows();
      if (n !== 15) throw new Error(`expected 15 rows, counted ${n}`);
      return `${n} rows`;
    },
  },
  {
    name: 'vector search',
    meaning: 'reading data files with vended credentials failed (GetObject / ListBucket in the session policy)',
    run: async () => {
      const table = await (await connect()).openTable('smoke', namespace);
      const [hit] = await table.search([12, 1, 0, 0]).limit(1).toArray();
      if (hit?.id !== 12) throw new Error(`nearest row should be id 12, got ${JSON.stringify(hit?.id)}`);
      return 'nearest row found';
    },
  },
  {
    name: 'list and describe',
    meaning: 'listing the registry failed: s3:ListBucket on the registry prefix',
    run: async () => {
      const names = await (await connect()).tableNames(namespace);
      if (!names.includes('smoke')) throw new Error(`table not listed: ${JSON.stringify(names)}`);
      return `tables: ${names.join(', ')}`;
    },
  },
  {
    name: 'drop the table and the namespace',
    meaning: 'deleting failed: s3:DeleteObject on the registry or the warehouse prefix; a 409 = something else still lives in the namespace',
    run: async () => {
      if (values.keep) return 'kept (--keep)';
      const db = await connect();
      await db.dropTable('smoke', namespace);
      if ((await db.tableNames(namespace)).includes(TASK_TABLE)) await db.dropTable(TASK_TABLE, namespace);
      await db.dropNamespace(namespace);
      const left = await db.listNamespaces([]);
      if (left.namespaces.includes(namespace[0])) throw new Error('the namespace is still listed');
    },
  },
];

// ---- the job task tier (docs/deploy.md, "Right after `cdk deploy`": the task tier's latencies) ----

const TASK_TABLE = 'tier';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (from: string | Date | undefined, to: string | Date | undefined) =>
  from && to ? `${((new Date(to).getTime() - new Date(from).getTime()) / 1000).toFixed(1)} s` : '?';

/** A JSON operation over raw HTTP: the build's `transaction_id` and DescribeTransaction, which the client does not return. */
async function raw(p: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${endpoint}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(headers ?? {}) }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * Queues an IVF_PQ build the data function routes to the task tier, has the Jobs function
 * dispatch it (one invocation, as its schedule would a minute later), and follows it to its
 * end. The table must be over both the synchronous limit (20,000 cost-rows by default) and the
 * task tier's (2M by default: deploy with `-c rask:jobsTaskIndexCostRows=20000` or lower, or
 * pass a larger --task-rows), or the build is answered in the request or queued on the
 * function tier, and the step says so.
 */
async function taskTierLatency(): Promise<string> {
  const n = Number(values['task-rows']);
  const dim = 128;
  const db = await connect();
  const data = Array.from({ length: n }, (_, i) => ({ id: i, vector: Array.from({ length: dim }, () => Math.random() * 2 - 1) }));
  // Named `vector`, the client makes it a fixed-size float32 list (a plain list would have no dimension to estimate).
  await db.createTable(TASK_TABLE, data, namespace);
  const tableId = [...namespace, TASK_TABLE];
  const path = `/v1/table/${tableId.map(encodeURIComponent).join('%24')}/create_index?delimiter=%24`;
  const answer = await raw(path, { id: tableId, column: 'vector', index_type: 'IVF_PQ', name: 'v' });
  const id = answer.transaction_id;
  if (typeof id !== 'string') throw new Error(`the build of ${n} rows was answered in the request (${JSON.stringify(answer)}): raise --task-rows over the synchronous limit`);
  const describe = async () => (await raw(`/v1/transaction/${id}/describe`, {})) as { status: string; properties: Record<string, string> };
  const queued = await describe();
  if (queued.properties['rask.tier'] !== 'task') {
    throw new Error(`the build was queued on the ${queued.properties['rask.tier']} tier (${queued.properties['rask.tier_reason']}): deploy with -c rask:jobsTaskIndexCostRows=${n - 100} or pass --task-rows over the tier's limit`);
  }
  if (outputs.JobsFunctionName) {
    const { LambdaClient, InvokeCommand } = await import('@aws-sdk/client-lambda');
    const event = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {}, time: new Date().toISOString() };
    await new LambdaClient({}).send(new InvokeCommand({ FunctionName: outputs.JobsFunctionName, Payload: Buffer.from(JSON.stringify(event)) }));
  }
  // dispatched_at and the task are kept from the first sight: a second dispatch replaces them.
  let dispatchedAt: string | undefined;
  let task: string | undefined;
  const deadline = Date.now() + Number(values['task-timeout-minutes']) * 60_000;
  let view = queued;
  while (!['Succeeded', 'Failed', 'Canceled'].includes(view.status)) {
    if (Date.now() > deadline) throw new Error(`not done after ${values['task-timeout-minutes']} min: ${view.status} ${JSON.stringify(view.properties)}`);
    await sleep(2000);
    view = await describe();
    dispatchedAt ??= view.properties['rask.dispatched_at'];
    task ??= view.properties['rask.task'];
  }
  const p = view.properties;
  if (view.status !== 'Succeeded') throw new Error(`the task-tier build ended ${view.status}: ${p['rask.error'] ?? ''}`);
  if (!String(p['rask.worker']).startsWith('task:')) throw new Error(`built by ${p['rask.worker']}, not a task`);
  let ecs = '';
  const arn = task?.slice(task.indexOf(':') + 1);
  if (arn && outputs.JobTasksClusterName) {
    const { ECSClient, DescribeTasksCommand } = await import('@aws-sdk/client-ecs');
    const [t] = (await new ECSClient({}).send(new DescribeTasksCommand({ cluster: outputs.JobTasksClusterName, tasks: [arn] }))).tasks ?? [];
    if (t) ecs = `; ECS: created → pull ${seconds(t.createdAt, t.pullStartedAt)}, pull ${seconds(t.pullStartedAt, t.pullStoppedAt)}, pulled → running ${seconds(t.pullStoppedAt, t.startedAt)}`;
  }
  return (
    `queued → RunTask ${seconds(p['rask.created_at'], dispatchedAt)}, RunTask → claim ${seconds(dispatchedAt, p['rask.started_at'])}, ` +
    `claim → done ${seconds(p['rask.started_at'], p['rask.finished_at'])} (${n} × ${dim}-d, attempts ${p['rask.attempts']}, dispatches ${p['rask.dispatches']})${ecs}`
  );
}

if (outputs.JobTasksClusterName && !values['no-task-tier']) {
  // Before the drop, which removes its table with the namespace.
  steps.splice(steps.length - 1, 0, {
    name: 'an index build on the job task tier',
    meaning:
      'queued elsewhere = the tier limit (the message says which); stuck Queued = the Jobs function cannot RunTask or PassRole (its log); dispatched but never claimed = the task did not start (ECS stopped reason: image pull through the public subnet, the execution role, ENI capacity); Failed = the task role or the container log',
    run: taskTierLatency,
  });
}

// On AWS, every function that EventBridge schedules (their names are stack outputs ending in
// "FunctionName") runs once with a scheduled event; a FunctionError means it fails unattended.
const scheduled = Object.entries(outputs).filter(([name]) => /FunctionName$/.test(name) && !/^(Meta|Data|Authorizer)/.test(name));
if (!values['no-functions']) {
  for (const [output, functionName] of scheduled) {
    steps.push({
      name: `run ${functionName} once`,
      meaning: `${output} failed on a scheduled event: read its log group; AccessDenied = its role lacks an action the offline IAM coverage did not see`,
      run: async () => {
        const { LambdaClient, InvokeCommand } = await import('@aws-sdk/client-lambda');
        const event = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {}, time: new Date().toISOString() };
        const out = await new LambdaClient({}).send(
          new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(event)) }),
        );
        if (out.FunctionError) throw new Error(`${out.FunctionError}: ${Buffer.from(out.Payload ?? []).toString().slice(0, 500)}`);
        return `status ${out.StatusCode}`;
      },
    });
  }
}

let failed = 0;
console.log(`rask post-deploy check against ${endpoint}${key ? ' (with an API key)' : ''}`);
for (const step of steps) {
  const started = performance.now();
  try {
    const detail = await step.run();
    console.log(`ok   ${step.name}${detail ? ` — ${detail}` : ''} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${step.name}: ${error instanceof Error ? error.message : String(error)}\n     what it likely means: ${step.meaning}`);
  }
}
console.log(failed === 0 ? `${steps.length} checks passed` : `${failed} of ${steps.length} checks failed`);
process.exit(failed);
