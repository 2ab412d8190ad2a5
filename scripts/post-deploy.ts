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
 * admin-key secret), --outputs FILE, --stack NAME (default: Rask), --no-functions, --keep.
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
      await db.dropNamespace(namespace);
      const left = await db.listNamespaces([]);
      if (left.namespaces.includes(namespace[0])) throw new Error('the namespace is still listed');
    },
  },
];

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
