/**
 * Deploy confidence without an AWS account (docs/deploy.md, "Before the first deploy").
 *
 * 1. Artifact smoke tests: each function of the synthesized assembly (`cdk.out`, from
 *    `npm run synth`) is loaded from its asset in a fresh Node process laid out as Lambda lays
 *    it out (layers under an /opt stand-in on NODE_PATH, nothing from the repository) and
 *    answers events routed the way the template routes them.
 * 2. IAM coverage: every AWS call those runs make is checked against the calling function's
 *    role in the same template (and vended sessions against the vending role narrowed by their
 *    session policy). A call the policy would not allow fails, naming function, action, resource.
 *
 * Runs from `.ci/run` after synth (`npm run test:deploy` by hand); it is not part of `npm test`,
 * which must not depend on a fresh synth. Loads LanceDB in child processes: ~30–60 s.
 */
import * as lancedb from '@lancedb/lancedb';
import { tableFromIPC } from 'apache-arrow';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { elfSectionNames } from './elf.js';
import { isPart } from './assembly.js';
import { decide, evaluate, parseSessionPolicy, rolePolicies, trustAllows, unusedGrants, type Request } from './iam.js';
import { apiEvent } from './api-events.js';
import { startGateway } from './gateway.js';
import { scheduledEvent, startWorld, type World } from './world.js';
import type { RecordedCall } from '../support/aws-http-fake.js';
import { ipcRows, vectorOf } from '../data/fixtures.js';

const CDK_OUT = path.resolve(process.env.RASK_CDK_OUT ?? 'cdk.out');
const ADMIN_KEY = 'smoke-admin-key-0123456789';

let world: World;

interface ApiAnswer {
  readonly statusCode: number;
  readonly headers?: Record<string, string>;
  readonly body: string;
  readonly isBase64Encoded?: boolean;
}

async function call(operation: string, path: string, options: Parameters<typeof apiEvent>[2] = {}): Promise<ApiAnswer> {
  const route = world.routes.get(operation);
  if (!route) throw new Error(`the API has no method for ${operation}`);
  const result = await world.invoke(route.fn, apiEvent(route.method as 'GET' | 'POST', path, options));
  if (!result.ok) throw new Error(`${route.fn.logicalId} failed on ${operation}: ${result.error}`);
  return result.value as ApiAnswer;
}

const json = (answer: ApiAnswer) => JSON.parse(answer.body) as Record<string, unknown>;
const rows = (ids: number[]) => ipcRows(ids.length, ids[0]);

beforeAll(async () => {
  world = await startWorld({
    cdkOut: CDK_OUT,
    secrets: (assembly) => {
      const secrets: Record<string, string> = {};
      for (const fn of assembly.functions) {
        const id = fn.environment.RASK_ADMIN_KEY_SECRET_ID;
        if (id) secrets[id] = ADMIN_KEY;
      }
      return secrets;
    },
  });
}, 120_000);

afterAll(async () => {
  await world?.close();
});

describe('synthesized artifacts answer sample events as deployed', () => {
  it('the template routes every API method to a function and schedules at least the jobs worker', () => {
    expect(world.routes.size).toBeGreaterThanOrEqual(50);
    expect(world.schedules.length).toBeGreaterThanOrEqual(1);
    expect(world.authorizer).toBeDefined();
  });

  it('the authorizer allows the admin key and denies a wrong or missing one', async () => {
    const authorizer = world.authorizer!;
    const event = (headers: Record<string, string>) => ({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/v1/namespace/x/create',
      headers,
      requestContext: { requestId: 'smoke-auth' },
    });
    const verdict = async (headers: Record<string, string>) => {
      const r = await world.invoke(authorizer, event(headers));
      if (!r.ok) throw new Error(r.error);
      return (r.value as { policyDocument: { Statement: { Effect: string }[] } }).policyDocument.Statement[0].Effect;
    };
    expect(await verdict({ 'x-api-key': ADMIN_KEY })).toBe('Allow');
    expect(await verdict({ Authorization: `Bearer ${ADMIN_KEY}` })).toBe('Allow');
    expect(await verdict({ 'x-api-key': 'not-the-key' })).toBe('Deny');
    expect(await verdict({})).toBe('Deny');
    expect(world.sandbox(authorizer).output()).not.toContain(ADMIN_KEY);
  });

  it('namespaces, a table created and queried through the data function with LanceDB from the layer', async () => {
    expect((await call('CreateNamespace', '/v1/namespace/smoke/create', { json: {} })).statusCode).toBe(200);
    expect(json(await call('ListNamespaces', '/v1/namespace/%24/list'))).toEqual({ namespaces: ['smoke'] });

    const created = await call('CreateTable', '/v1/table/smoke%24events/create', { binary: rows([1, 2, 3]) });
    expect(created.statusCode, created.body).toBe(200);
    expect(String(json(created).location)).toMatch(/^s3:\/\/fake-[a-z0-9-]+\/.+\.lance$/);

    const inserted = await call('InsertIntoTable', '/v1/table/smoke%24events/insert', { binary: rows([4, 5]) });
    expect(inserted.statusCode, inserted.body).toBe(200);
    expect((await call('CountTableRows', '/v1/table/smoke%24events/count_rows', { json: {} })).body).toBe('5');

    const query = await call('QueryTable', '/v1/table/smoke%24events/query', { json: { vector: vectorOf(1), k: 2, columns: ['id'] } });
    expect(query.statusCode, query.body).toBe(200);
    const found = tableFromIPC(Buffer.from(query.body, query.isBase64Encoded ? 'base64' : 'binary'));
    expect(found.numRows).toBe(2);
    expect([...found.getChild('id')!.toArray()].map(Number)).toContain(1);

    expect(json(await call('ListTables', '/v1/namespace/smoke/table/list'))).toMatchObject({ tables: ['events'] });
  });

  it('detailed describe: the metadata function invokes the data function by the name the template gives it', async () => {
    const described = await call('DescribeTable', '/v1/table/smoke%24events/describe', { json: { load_detailed_metadata: true } });
    expect(described.statusCode, described.body).toBe(200);
    expect(json(described)).toMatchObject({ version: 2 });
    expect(json(described).schema).toBeDefined();
    expect(world.fake.calls.some((c) => c.action === 'lambda:InvokeFunction' && c.status === 200)).toBe(true);
  });

  it('the official client, through an API Gateway stand-in, writes and reads with vended credentials', async () => {
    // The vended storage options name no endpoint (on AWS there is none to name); LanceDB's
    // object store takes it from the environment here, as it would any S3-compatible endpoint.
    Object.assign(process.env, { AWS_ENDPOINT: world.fake.endpoint, AWS_ALLOW_HTTP: 'true', AWS_VIRTUAL_HOSTED_STYLE_REQUEST: 'false', AWS_REGION: 'us-east-1' });
    const gateway = await startGateway(world);
    try {
      const db = await lancedb.connectNamespace('rest', { uri: gateway.url, headers: { 'x-api-key': ADMIN_KEY } });
      await db.createNamespace(['client']);
      const table = await db.createTable('items', [{ id: 1, vector: [0.1, 0.2] }, { id: 2, vector: [0.3, 0.4] }], ['client']);
      await table.add([{ id: 3, vector: [0.5, 0.6] }]);
      expect(await table.countRows()).toBe(3);
      const again = await (await lancedb.connectNamespace('rest', { uri: gateway.url, headers: { 'x-api-key': ADMIN_KEY } })).openTable('items', ['client']);
      expect(await again.countRows()).toBe(3);
      expect((await again.search([0.5, 0.6]).limit(1).toArray())[0].id).toBe(3);
      // A name with a slash: the client sends it as %2F inside the id, next to the %24 delimiter,
      // and the route's {id} segment must keep it encoded (docs/architecture.md, "The API").
      await db.createNamespace(['client', 'a/b']);
      const slashed = await db.createTable('t', [{ id: 7, vector: [1, 2] }], ['client', 'a/b']);
      expect((await slashed.search([1, 2]).limit(1).toArray())[0].id).toBe(7);
      expect(await db.tableNames(['client', 'a/b'])).toEqual(['t']);
      await db.dropTable('t', ['client', 'a/b']);
      await db.dropNamespace(['client', 'a/b']);
      await db.dropTable('items', ['client']);
      await db.dropNamespace(['client']);
      expect(gateway.routed.some((r) => r.includes('/v1/table/client%24a%2Fb%24t/')), gateway.routed.join('\n')).toBe(true);
      const anonymous = await lancedb.connectNamespace('rest', { uri: gateway.url });
      await expect(anonymous.tableNames(['client'])).rejects.toThrow();
      // API Gateway's own answers, from the document's gateway responses: the JSON error contract.
      const noKey = await fetch(`${gateway.url}/v1/namespace/client/list`);
      expect(noKey.status).toBe(401);
      expect(await noKey.json()).toMatchObject({ code: 16 });
      const noRoute = await fetch(`${gateway.url}/v1/no/such/route`, { method: 'POST', headers: { 'x-api-key': ADMIN_KEY } });
      expect(noRoute.status).toBe(404);
      expect(await noRoute.json()).toMatchObject({ code: 0, instance: expect.stringMatching(/^gw-/) });
    } finally {
      await gateway.close();
    }
    expect(world.fake.calls.some((c) => c.principal.startsWith('session:') && c.action === 's3:PutObject')).toBe(true);
  });

  it('S3 notifications through the synthesized relay: the doors\' events and a plain connect() writer\'s commit reach the bus and the pull log one to one (docs/events.md, "Delivery on AWS")', async () => {
    const relay = world.schedules.find((t) => isPart(t.fn.logicalId, 'ChangeRelay'));
    if (!relay) throw new Error('no schedule targets the change relay');
    // The scan is the safety net now; notifications carry the log to the bus.
    expect(relay.schedule).toBe('rate(5 minutes)');
    expect(world.queueRoutes.map((r) => [r.rule.replace(/[A-F0-9]{8}$/, '').replace(/^.*?(?=ChangeRelay)/, ''), r.fn.logicalId === relay.fn.logicalId])).toEqual([
      ['ChangeRelayLogNotifications', true],
      ['ChangeRelayManifestNotifications', true],
    ]);
    const env = relay.fn.environment;
    const reader = new S3Client({ endpoint: world.fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: world.fake.principal('deploy-test-reader') });
    const pullLog = async () => {
      const events: { id: string; type: string; subject: string; data: { version?: number; details?: { via?: string } } }[] = [];
      for (let token: string | undefined; ; ) {
        const page = await reader.send(new ListObjectsV2Command({ Bucket: env.RASK_REGISTRY_BUCKET, Prefix: `${env.RASK_REGISTRY_PREFIX}changes/`, ContinuationToken: token }));
        for (const o of page.Contents ?? []) events.push(JSON.parse(await (await reader.send(new GetObjectCommand({ Bucket: env.RASK_REGISTRY_BUCKET, Key: o.Key! }))).Body!.transformToString()));
        token = page.NextContinuationToken;
        if (!token) break;
      }
      return events;
    };
    const onBus = () => world.fake.busEvents.map((e) => e.detail as { id: string; subject: string; data: { version?: number; details?: { via?: string } } });
    // The doors answered without EventBridge; S3 recorded a notification of each write the template enables them for.
    expect(world.fake.busEvents).toEqual([]);
    const notifications = world.fake.s3Events as { 'detail-type': string; detail: { bucket: { name: string }; object: { key: string; 'version-id'?: string; sequencer: string } } }[];
    const logNotes = notifications.filter((e) => e.detail.bucket.name === env.RASK_REGISTRY_BUCKET && e.detail.object.key.startsWith(`${env.RASK_REGISTRY_PREFIX}changes/`));
    expect(logNotes.length).toBeGreaterThan(0);
    // The registry bucket is versioned: each notification names the version written.
    expect(logNotes.every((e) => typeof e.detail.object['version-id'] === 'string' && /^[0-9A-F]{18}$/.test(e.detail.object.sequencer))).toBe(true);
    const first = await world.deliverNotifications();
    expect(first.deadLetters).toEqual([]);
    expect(first.delivered).toBeGreaterThanOrEqual(logNotes.length);
    expect(new Set(onBus().map((e) => e.id))).toEqual(new Set((await pullLog()).map((e) => e.id)));

    // A table of its own (dropped at the end: the sweep test below counts smoke.events' fragments).
    const made = await call('CreateTable', '/v1/table/smoke%24direct/create', { binary: rows([1, 2]) });
    expect(made.statusCode, made.body).toBe(200);
    // A writer with the official client's plain connect(): no catalog, straight to the table's storage.
    const described = json(await call('DescribeTable', '/v1/table/smoke%24direct/describe', { json: {} }));
    const location = String(described.location);
    const writer = world.fake.principal('deploy-test-direct-writer');
    const db = await lancedb.connect(location.slice(0, location.lastIndexOf('/')), {
      storageOptions: { endpoint: world.fake.endpoint, allow_http: 'true', region: 'us-east-1', aws_access_key_id: writer.accessKeyId, aws_secret_access_key: writer.secretAccessKey, virtual_hosted_style_request: 'false' },
    });
    const direct = await db.openTable(location.slice(location.lastIndexOf('/') + 1).replace(/\.lance$/, ''));
    const before = await direct.version();
    // One of its own rows again, in the table's own schema.
    await direct.add(await direct.query().limit(1).toArrow());
    const committed = await direct.version();
    expect(committed).toBe(before + 1);
    // Both manifests were notified; the catalog's (CreateTable's) is claimed by its event, the writer's is not.
    const manifests = (world.fake.s3Events as typeof notifications).filter((e) => e.detail.object.key.startsWith(location.slice(`s3://${env.RASK_WAREHOUSE_BUCKET}/`.length)) && e.detail.object.key.endsWith('.manifest'));
    expect(manifests.length).toBeGreaterThanOrEqual(2);
    // The manifests and CreateTable's event; then the storage event the relay appended, through its own notification.
    expect((await world.deliverNotifications()).deadLetters).toEqual([]);
    expect((await world.deliverNotifications()).deadLetters).toEqual([]);
    const ofDirect = (events: ReturnType<typeof onBus>) => events.filter((e) => e.subject === 'table:smoke.direct').map((e) => [e.data.version, e.data.details?.via ?? 'catalog']);
    const logged = await pullLog();
    expect(ofDirect(logged)).toEqual([
      [before, 'catalog'],
      [committed, 'storage'],
    ]);
    // One to one after dedup by id: what the log holds is on the bus, nothing else, and no id twice in the log.
    expect(new Set(logged.map((e) => e.id)).size).toBe(logged.length);
    expect(new Set(onBus().map((e) => e.id))).toEqual(new Set(logged.map((e) => e.id)));
    expect(ofDirect([...new Map(onBus().map((e) => [e.id, e])).values()])).toEqual(ofDirect(logged));
    // The relay read each log entry at the version its notification named (the IAM coverage below checks the calls).
    expect(world.fake.calls.some((c) => c.principal === relay.fn.name && c.action === 's3:GetObjectVersion' && c.resource.includes('/changes/'))).toBe(true);
    // The scheduled safety-net scan runs clean beside them (its first cycle only notes where each table stands).
    const scanned = await world.invoke(relay.fn, relay.input ?? scheduledEvent(relay.rule));
    if (!scanned.ok) throw new Error(scanned.error);
    expect(scanned.value).toMatchObject({ storageCommits: 0, unpublished: 0 });
    reader.destroy();
    expect((await call('DropTable', '/v1/table/smoke%24direct/drop', { json: {} })).statusCode).toBe(200);
  }, 240_000);

  it('change events of those doors reached the stack\'s bus (docs/events.md)', () => {
    const types = world.fake.busEvents.map((e) => e.detailType);
    expect(types).toEqual(expect.arrayContaining(['dev.rask.namespace.created', 'dev.rask.table.created', 'dev.rask.table.rows.inserted', 'dev.rask.table.declared']));
    const bus = world.assembly.functions.find((f) => f.environment.RASK_EVENT_BUS_NAME)?.environment.RASK_EVENT_BUS_NAME;
    expect(new Set(world.fake.busEvents.map((e) => e.bus))).toEqual(new Set([bus]));
    expect(world.fake.busEvents[0].source).toBe('rask://default');
  });

  it('every scheduled function runs its scheduled event without failing', async () => {
    for (const target of world.schedules) {
      const result = await world.invoke(target.fn, target.input ?? scheduledEvent(target.rule));
      expect(result.ok ? 'ok' : result.error, `${target.fn.logicalId} on ${target.schedule}`).toBe('ok');
    }
  });

  it('the scheduled sweep and index build queue per-table jobs, and the jobs function runs them', async () => {
    const scheduled = (prefix: string) => {
      const target = world.schedules.find((t) => isPart(t.fn.logicalId, prefix));
      if (!target) throw new Error(`no schedule targets a ${prefix} function`);
      return target;
    };
    const jobs = scheduled('FunctionsJobs');
    const runJobs = async () => {
      const r = await world.invoke(jobs.fn, jobs.input ?? scheduledEvent(jobs.rule));
      if (!r.ok) throw new Error(r.error);
      return r.value as { ran: number; outcomes: Record<string, number> };
    };
    // Whatever the schedules above queued runs first, so each pass below queues a fresh job.
    await runJobs();

    const sweepFn = scheduled('MaintenanceSweep');
    const indexFn = scheduled('MaintenanceIndex');
    // They open no dataset: no layer to take LanceDB from.
    expect([sweepFn.fn.layerDirs, indexFn.fn.layerDirs]).toEqual([[], []]);
    const env = sweepFn.fn.environment;
    const reader = new S3Client({ endpoint: world.fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: world.fake.principal('deploy-test-reader') });
    const queued: string[] = [];
    const reports: string[] = [];
    for (const target of [sweepFn, indexFn]) {
      const r = await world.invoke(target.fn, scheduledEvent(target.rule));
      if (!r.ok) throw new Error(`${target.fn.logicalId}: ${r.error}`);
      const run = r.value as { summary: { jobs_queued: number }; report?: string };
      expect(run.summary.jobs_queued, target.fn.logicalId).toBe(1);
      const body = await (await reader.send(new GetObjectCommand({ Bucket: env.RASK_REGISTRY_BUCKET, Key: `${env.RASK_REGISTRY_PREFIX}${run.report}` }))).Body!.transformToString();
      const items = (JSON.parse(body) as { items: { table: string[]; job: string; transaction_id: string }[] }).items;
      expect(items.map((i) => [i.table, i.job])).toEqual([[['smoke', 'events'], 'queued']]);
      queued.push(items[0].transaction_id);
      reports.push(String(run.report));
      // Its maintenance.<pass>.completed event is in the pull log, appended by the pass's own role
      // (the IAM coverage below checks the PutObject on changes/); the relay takes it to the bus.
      const logged: { type: string; data: { request_id: string } }[] = [];
      const page = await reader.send(new ListObjectsV2Command({ Bucket: env.RASK_REGISTRY_BUCKET, Prefix: `${env.RASK_REGISTRY_PREFIX}changes/` }));
      for (const o of page.Contents ?? []) logged.push(JSON.parse(await (await reader.send(new GetObjectCommand({ Bucket: env.RASK_REGISTRY_BUCKET, Key: o.Key! }))).Body!.transformToString()));
      const pass = target === sweepFn ? 'sweep' : 'index';
      expect(logged.filter((e) => e.data.request_id === run.report).map((e) => e.type), target.fn.logicalId).toEqual([`dev.rask.maintenance.${pass}.completed`]);
      expect(world.fake.calls.some((c) => c.principal === target.fn.name && c.action === 's3:PutObject' && c.resource.includes('/changes/')), target.fn.logicalId).toBe(true);
    }
    reader.destroy();
    // Their log entries' S3 notifications take the passes' events to the bus, as any door's.
    expect((await world.deliverNotifications()).deadLetters).toEqual([]);
    const passEvents = world.fake.busEvents.map((e) => e.detail as { type: string; data: { request_id: string } }).filter((e) => e.type.startsWith('dev.rask.maintenance.'));
    expect(passEvents.filter((e) => reports.includes(e.data.request_id)).map((e) => e.type).sort()).toEqual(['dev.rask.maintenance.index.completed', 'dev.rask.maintenance.sweep.completed']);

    const ran = await runJobs();
    expect(ran).toMatchObject({ ran: 2, outcomes: { succeeded: 2 } });
    for (const id of queued) {
      const described = json(await call('DescribeTransaction', `/v1/transaction/${encodeURIComponent(id)}/describe`, { json: {} }));
      expect(described, id).toMatchObject({ status: 'Succeeded' });
    }
    // The sweep job compacted the table's two fragments in the warehouse, as the jobs role.
    expect(world.fake.calls.some((c) => c.principal === jobs.fn.name && c.action === 's3:PutObject' && c.resource.includes('/warehouse/'))).toBe(true);
    expect((await call('CountTableRows', '/v1/table/smoke%24events/count_rows', { json: {} })).body).toBe('5');
  });

  it('drops the table and the namespace', async () => {
    for (const name of ['events']) {
      const dropped = await call('DropTable', `/v1/table/smoke%24${name}/drop`, { json: {} });
      expect(dropped.statusCode, dropped.body).toBe(200);
    }
    expect((await call('DropNamespace', '/v1/namespace/smoke/drop', { json: {} })).statusCode).toBe(200);
    expect(json(await call('ListNamespaces', '/v1/namespace/%24/list'))).toEqual({ namespaces: [] });
  });
});

describe('IAM coverage: every recorded call is allowed by its function role', () => {
  const byFunction = () => {
    const calls = new Map<string, RecordedCall[]>();
    for (const c of world.fake.calls) calls.set(c.principal, [...(calls.get(c.principal) ?? []), c]);
    return calls;
  };

  it('the metadata function serves the web console from its own asset (docs/console.md)', async () => {
    const page = await call('ConsolePage', '/console');
    expect(page.statusCode).toBe(200);
    expect(page.headers?.['content-security-policy']).toContain("script-src 'self'");
    const html = Buffer.from(page.body, page.isBase64Encoded ? 'base64' : 'utf8').toString('utf8');
    expect(html).toContain('src="console/app.js"');
    const js = await call('ConsoleFile', '/console/app.js');
    expect([js.statusCode, js.headers?.['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect(Buffer.from(js.body, 'base64').length).toBeGreaterThan(10_000);
    expect((await call('ConsoleFile', '/console/nothing.js')).statusCode).toBe(404);
  });

  it('the runs above exercised every function and recorded calls for each', () => {
    const calls = byFunction();
    // An assembly synthesized with rask:functionMode=per-operation (RASK_CDK_OUT; docs/deploy.md)
    // has 83 operation functions in a nested stack: the runs reach the ones of the operations they
    // call, and the grouped meta function then serves only operations without a handler
    // (Unsupported, no AWS call). Every other function must still have been exercised.
    const perOperation = world.assembly.functions.filter((f) => f.stack.includes('/'));
    const expected = perOperation.length
      ? world.assembly.functions.filter((f) => !f.stack.includes('/') && !isPart(f.logicalId, 'FunctionsMeta'))
      : world.assembly.functions;
    for (const fn of expected) {
      expect(calls.get(fn.name)?.length ?? 0, `${fn.logicalId} made no AWS call`).toBeGreaterThan(0);
    }
    if (perOperation.length) {
      const exercised = perOperation.filter((f) => (calls.get(f.name)?.length ?? 0) > 0);
      console.log(`per-operation functions exercised: ${exercised.map((f) => f.logicalId.replace(/Function[0-9A-F]{8}$/, '')).join(', ')}`);
      expect(exercised.length).toBeGreaterThanOrEqual(10);
    }
  });

  it('no call is denied by the synthesized policies (functions and vended sessions)', () => {
    const denied: string[] = [];
    const hints: string[] = [];
    for (const fn of world.assembly.functions) {
      const policies = rolePolicies(world.assembly, fn.roleLogicalId);
      const calls = world.fake.calls.filter((c) => c.principal === fn.name);
      for (const c of calls) {
        const decision = decide(policies, c);
        if (!decision.allowed) denied.push(`${fn.logicalId}: ${c.action} on ${c.resource} ${JSON.stringify(c.context)} (${decision.reason})`);
        if (c.action === 'sts:AssumeRole') {
          const target = c.resource.split('/').pop()!;
          if (!trustAllows(rolePolicies(world.assembly, target).trust, policies.roleArn, policies.tags)) denied.push(`${fn.logicalId}: ${target}'s trust policy does not let it assume the role`);
        }
      }
      for (const unused of unusedGrants(policies, calls)) hints.push(`${fn.logicalId}: granted, not used here: ${unused}`);
    }
    let sessionCalls = 0;
    for (const [accessKey, session] of world.fake.sessions) {
      const vendingRole = session.roleArn.split('/').pop()!;
      const policies = rolePolicies(world.assembly, vendingRole);
      const sessionPolicy = session.policy === undefined ? undefined : parseSessionPolicy(session.policy);
      for (const c of world.fake.calls.filter((x) => x.principal === `session:${accessKey}`)) {
        sessionCalls++;
        const decision = decide(policies, c, sessionPolicy);
        if (!decision.allowed) denied.push(`vended session ${accessKey} (${session.assumedBy}): ${c.action} on ${c.resource} ${JSON.stringify(c.context)} (${decision.reason})`);
      }
    }
    console.log(`IAM coverage: ${world.fake.calls.length} calls checked, ${sessionCalls} of them with vended credentials.\nLeast-privilege hints:\n  ${hints.join('\n  ') || '(none)'}`);
    expect(denied).toEqual([]);
    expect(sessionCalls).toBeGreaterThan(0);
  });

  it('the evaluator notices a removed action (the check can fail)', () => {
    const meta = world.assembly.functions.find((f) => world.routes.get('CreateNamespace')?.fn === f)!;
    const policies = rolePolicies(world.assembly, meta.roleLogicalId);
    const put = world.fake.calls.find((c) => c.principal === meta.name && c.action === 's3:PutObject')! as Request;
    expect(decide(policies, put).allowed).toBe(true);
    const without = policies.identity.map((s) => ({ ...s, Action: [s.Action ?? []].flat().filter((a) => a !== 's3:PutObject') }));
    expect(evaluate(without, put)).toEqual({ allowed: false, reason: 'no-allow' });
  });
});

describe('a broken artifact is noticed', () => {
  it('the LanceDB layer carries a stripped native module (docs/deploy.md, "The LanceDB layer")', () => {
    const layers = [...new Set(world.assembly.functions.flatMap((f) => f.layerDirs))];
    expect(layers.length).toBeGreaterThan(0);
    for (const layer of layers) {
      const dir = path.join(layer, 'nodejs', 'node_modules', '@lancedb', 'lancedb-linux-x64-gnu');
      const natives = readdirSync(dir).filter((f) => f.endsWith('.node'));
      expect(natives.length, dir).toBeGreaterThan(0);
      for (const native of natives) {
        const sections = elfSectionNames(path.join(dir, native));
        expect(sections, native).toContain('.dynsym'); // what Node's loader resolves stays
        expect(sections.filter((s) => s === '.symtab' || s.startsWith('.debug')), native).toEqual([]);
      }
    }
  });

  it('the data function without LanceDB in its layer cannot serve a data operation', async () => {
    const broken = await startWorld({ cdkOut: CDK_OUT, dropFromLayers: ['@lancedb'] });
    try {
      const send = async (operation: string, path: string, options: Parameters<typeof apiEvent>[2]) => {
        const route = broken.routes.get(operation)!;
        return { route, result: await broken.invoke(route.fn, apiEvent(route.method as 'GET' | 'POST', path, options)) };
      };
      const ns = await send('CreateNamespace', '/v1/namespace/broken/create', { json: {} });
      expect(ns.result.ok && (ns.result.value as ApiAnswer).statusCode).toBe(200);
      const { route, result } = await send('CreateTable', '/v1/table/broken%24t/create', { binary: rows([1]) });
      const status = result.ok ? (result.value as ApiAnswer).statusCode : 'threw';
      expect(status).not.toBe(200);
      expect(broken.sandbox(route.fn).output()).toMatch(/@lancedb\/lancedb/);
    } finally {
      await broken.close();
    }
  });
});
