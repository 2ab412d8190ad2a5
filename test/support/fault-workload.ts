/**
 * The fault-injection suite's workload (issue #35, "What to build" 6): the metadata Lambda's
 * composition (createAwsApp) over the stateful S3 fake, its S3 client's own middleware stack
 * (retries included) served with seeded random faults (test/support/s3-faults.ts), and 8
 * concurrent clients each driving a seeded mix of doors in a namespace of its own: namespaces
 * (a child with a table, cascade-dropped), declare / register / rename / drop (purge or to trash)
 * / undrop tables, protection, forced renames and drops, version commits.
 *
 * Each client keeps a model of its names from the answers it got: a 200 is applied, a 503 / 17
 * makes the names it touched unknown, any other answer must be the spec's code for the case the
 * model says (else it is a misleading answer: an error for a change that happened, or "exists" /
 * "not found" contradicting what was acknowledged). After the run, faults off, one read of every
 * name: every acknowledged effect must be visible (an unknown name adopts what the read shows),
 * and the registry must pass the crash tests' invariants (test/support/table-invariants.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { createAwsApp } from '../../lib/app/aws.js';
import { awsStorage } from '../../lib/app/storage.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { loadAwsConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import { type AdminAnswer, callAsAdmin } from './admin-call.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { prng } from './prng.js';
import { createS3Faults, faultyS3Client, type S3Faults } from './s3-faults.js';
import { createS3Fake } from './s3-fake.js';
import { allClaims, allTableRecords, allTrash, assertTableInvariants } from './table-invariants.js';
import { reconcileWith } from '../../lib/maintenance/reconcile.js';
import { runJobsOnce } from '../../lib/jobs/worker.js';
import { PURGE_TABLE, purgeTableRunner } from '../../lib/jobs/runners/purge.js';

export interface RunOptions {
  readonly seed: number;
  readonly p: number;
  /** false: the SDK makes one attempt per request (AWS_MAX_ATTEMPTS=1, "retries spent"). */
  readonly sdkRetries: boolean;
  readonly clients: number;
  readonly doorsPerClient: number;
}

export interface RunReport {
  readonly options: RunOptions;
  doors: number;
  ok: number;
  /** 503 / 17 with Retry-After. */
  unavailable: number;
  /** 503 without Retry-After, or any other 5xx that is not 503 / 17. */
  badUnavailable: number;
  /** 500 / 18. */
  internal: number;
  /** 409 / 14 where the case does not call for it (each client has its own names: only faults contend). */
  concurrent: number;
  /** The spec's code for the case the model says (5 for a taken name, 4 for a missing one, 19 protected…). */
  expectedErrors: number;
  /** An error contradicting the model (an error for a change that happened, a wrong code). */
  misleading: string[];
  /** After the run: an acknowledged effect not visible. */
  lost: string[];
  /** After the run: registry invariants that do not hold after one read of every name. */
  violationsAfterRead: string[];
  /** Location claims after one read that no live or trashed table accounts for, by state (one violation may be several). */
  claimsLeftAfterRead: Record<string, number>;
  /** …and after the repair paths that are not reads: reconcile (repair) and the purge_table jobs. */
  violations: string[];
  /** S3 attempts and faults injected. */
  attempts: number;
  faults: number;
}

type TableState = 'live' | 'absent' | 'trash' | 'unknown';

type Answer = AdminAnswer;

const NAMES = ['t0', 't1', 't2', 't3'];

/** The doors in flight, for a run that stops with promises pending (fault-run-main.ts reports them). */
export const inFlight = new Set<string>();

export async function runFaultWorkload(options: RunOptions): Promise<RunReport> {
  const fake = createS3Fake();
  const faults: S3Faults = createS3Faults({ seed: options.seed, p: 0 });
  const client = faultyS3Client(fake, DEBUG ? traced(faults) : faults, {
    maxAttempts: options.sdkRetries ? 3 : 1,
    // The SDK's own schedule backs off 50 ms–1 s per retry: the same attempts without the sleep.
    retryStrategy: new ConfiguredRetryStrategy(options.sdkRetries ? 3 : 1, 0),
  });
  const config = loadAwsConfig({
    RASK_REGISTRY_BUCKET: 'registry-bucket',
    RASK_WAREHOUSE_BUCKET: 'wh-bucket',
    AWS_REGION: 'us-east-1',
    RASK_TRASH_GRACE_DAYS: '7',
  });
  // RegisterTable adopts only datasets inside the default warehouse's own root (docs/governance.md,
  // "Storage allotment"): the workload writes its datasets there.
  const warehousePrefix = (awsStorage(config).warehouseRoot as { prefix: string }).prefix;
  const quiet = { logger: { error: () => {}, warn: () => {} } };
  const app: { router: Router; services: CatalogServices } = await createAwsApp(config, metaHandlers, client, undefined, quiet);
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, query = ''): Promise<Answer> => callAsAdmin(app.router, method, path, body, query);

  const report: RunReport = emptyReport(options);
  // Set-up without faults: one namespace per client.
  for (let c = 0; c < options.clients; c++) {
    const res = await call('POST', `/v1/namespace/c${c}/create`, { id: [`c${c}`] });
    if (res.status !== 200) throw new Error(`set-up failed: ${JSON.stringify(res.body)}`);
  }
  // Warm-up without faults, in a namespace of its own: every door's code runs once before the
  // faults start. Cold, on a loaded machine (six runs at V8's baseline tier beside other work),
  // a process's first doors took longer than the request's 25 s deadline (lib/deadline.ts); a
  // door past its deadline starts no S3 request, so it could not take back what it had written
  // (a DeclareTable's fresh claim after a 409), which is a starved CPU, not an S3 fault.
  const warm = new Client(options.clients, options.seed * 1000 + 999, call, fake, emptyReport(options), warehousePrefix);
  const made = await call('POST', `/v1/namespace/c${options.clients}/create`, { id: [`c${options.clients}`] });
  if (made.status !== 200) throw new Error(`set-up failed: ${JSON.stringify(made.body)}`);
  await warm.run(WARM_UP_DOORS);
  faults.setProbability(options.p);
  faults.clearLog();

  const clients = Array.from({ length: options.clients }, (_, c) => new Client(c, options.seed * 1000 + c, call, fake, report, warehousePrefix));
  await Promise.all(clients.map((cl) => cl.run(options.doorsPerClient)));

  report.attempts = faults.attempts().length;
  report.faults = faults.injected().length;
  faults.setProbability(0);
  for (const cl of clients) await cl.verify();
  const check = async (into: string[]) => {
    try {
      await assertTableInvariants(app.services);
    } catch (err) {
      into.push((err as Error).message.split('\n')[0]);
    }
  };
  await check(report.violationsAfterRead);
  report.claimsLeftAfterRead = await leftoverClaims(app.services);
  if (process.env.RASK_FAULT_DEBUG && report.violationsAfterRead.length > 0) {
    const [tables, claims, trash] = await Promise.all([allTableRecords(app.services), allClaims(app.services), allTrash(app.services)]);
    process.stderr.write(`${JSON.stringify({ tables: tables.map((t) => [t.id, t.uid, t.path]), claims: claims.map((c) => [c.ids, c.uid, c.path, c.state]), trash: trash.map((t) => [t.id, t.uid, t.path]) })}\n`);
    const accounted = new Set([...tables, ...trash].map((t) => `${t.warehouse}/${t.path}`));
    const named = report.violationsAfterRead.join(' ');
    for (const c of claims.filter((x) => !accounted.has(`${x.warehouse}/${x.path}`) || named.includes(x.path))) {
      process.stderr.write(`--- leftover ${c.state} ${c.path} ${c.uid} ${JSON.stringify(c.ids)}\n`);
      for (const t of trace.filter((x) => safeDecode(x.key).includes(c.path) || x.key.includes(c.uid) || x.body.includes(c.uid))) {
        process.stderr.write(`  ${t.at} ms ${t.door} ${t.command} ${t.key} ${t.fault}\n`);
      }
    }
  }
  // What no read reaches (a claim left on a path nobody asks for, a purge cut short) is on record
  // for reconcile and the purge_table jobs (docs/protocols.md, "Repair paths").
  await reconcileWith({ stuckAfterMs: 0 })(app.services, { repair: true });
  await runJobsOnce(app.services, { owner: 'fault-suite', budgetMs: 60_000, runners: { [PURGE_TABLE]: purgeTableRunner }, log: () => {} });
  await check(report.violations);
  fake.mock.restore();
  return report;
}

/** Doors the warm-up client runs, faults off, before the faults start (runFaultWorkload). */
const WARM_UP_DOORS = 30;

function emptyReport(options: RunOptions): RunReport {
  return {
    options,
    doors: 0,
    ok: 0,
    unavailable: 0,
    badUnavailable: 0,
    internal: 0,
    concurrent: 0,
    expectedErrors: 0,
    misleading: [],
    lost: [],
    violationsAfterRead: [],
    claimsLeftAfterRead: {},
    violations: [],
    attempts: 0,
    faults: 0,
  };
}

class Client {
  private readonly random: () => number;
  private readonly ns: string;
  private readonly tables = new Map<string, TableState>(NAMES.map((n) => [n, 'absent']));
  /** Names whose table is protected (known), or unknown (undefined = unprotected). */
  private readonly protection = new Map<string, boolean | 'unknown'>();
  private child: 'live' | 'absent' | 'unknown' = 'absent';
  private readonly versions = new Map<string, number>();

  constructor(
    readonly index: number,
    seed: number,
    private readonly call: (method: 'GET' | 'POST', path: string, body?: unknown, query?: string) => Promise<Answer>,
    private readonly fake: ReturnType<typeof createS3Fake>,
    private readonly report: RunReport,
    private readonly warehousePrefix: string,
  ) {
    this.random = prng(seed);
    this.ns = `c${index}`;
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.random() * xs.length)];
  }

  private path(name: string, door = ''): string {
    return `/v1/table/${this.ns}%24${name}${door}`;
  }

  async run(doors: number): Promise<void> {
    const kinds: [string, number][] = [
      ['declare', 4],
      ['register', 1],
      ['rename', 3],
      ['drop', 2],
      ['purge', 1],
      ['undrop', 2],
      ['protect', 1],
      ['version', 2],
      ['child', 1],
      ['cascade', 1],
      ['describe', 1],
    ];
    const total = kinds.reduce((s, [, w]) => s + w, 0);
    for (let i = 0; i < doors; i++) {
      let r = this.random() * total;
      const kind = kinds.find(([, w]) => (r -= w) < 0)?.[0] ?? 'describe';
      const label = `${this.ns} #${i} ${kind}`;
      inFlight.add(label);
      await doorOf.run(label, () => this.door(kind));
      inFlight.delete(label);
    }
  }

  /** Judges one answer: counts it, and says whether the door took effect (true/false) or is unknown. */
  private judge(what: string, res: Answer, expected: readonly number[]): boolean | 'unknown' {
    this.report.doors++;
    if (res.status === 200) {
      this.report.ok++;
      return true;
    }
    const code = res.body.code;
    if (res.status === 503 && code === 17 && Number(res.headers['retry-after']) > 0) {
      this.report.unavailable++;
      if (DEBUG) process.stderr.write(`503: ${what}: ${String(res.body.error)}\n`);
      return 'unknown';
    }
    if (code === 18) {
      this.report.internal++;
      return 'unknown';
    }
    if (res.status >= 500) {
      this.report.badUnavailable++;
      return 'unknown';
    }
    if (code !== undefined && expected.includes(code)) {
      this.report.expectedErrors++;
      return false;
    }
    if (code === 14) {
      this.report.concurrent++;
      if (process.env.RASK_FAULT_DEBUG) console.log(`14: ${what}: ${String(res.body.error)}`);
      return 'unknown';
    }
    this.report.misleading.push(`${what}: ${res.status} / ${code} ${String(res.body.error ?? '')}`);
    return 'unknown';
  }

  private async door(kind: string): Promise<void> {
    const name = this.pick(NAMES);
    const state = this.tables.get(name)!;
    const known = state !== 'unknown';
    switch (kind) {
      case 'declare': {
        const res = await this.call('POST', this.path(name, '/declare'), { id: [this.ns, name] });
        // 5 is right only for a name the model holds (or may hold).
        const outcome = this.judge(`declare ${name} (${state})`, res, state === 'live' || !known ? [5] : []);
        if (outcome === true) this.setTable(name, 'live', false);
        else if (outcome === 'unknown') this.setTable(name, 'unknown', 'unknown');
        return;
      }
      case 'register': {
        const location = `ext/${this.ns}-${randomUUID().slice(0, 8)}.lance`;
        await this.fake.client.send(
          new PutObjectCommand({ Bucket: 'wh-bucket', Key: `${this.warehousePrefix}${location}/_versions/${manifestName(1, 'V2')}`, Body: Buffer.from('m') }),
        );
        const res = await this.call('POST', this.path(name, '/register'), { id: [this.ns, name], location });
        const outcome = this.judge(`register ${name} (${state})`, res, state === 'live' || !known ? [5] : []);
        if (outcome === true) this.setTable(name, 'live', false);
        else if (outcome === 'unknown') this.setTable(name, 'unknown', 'unknown');
        return;
      }
      case 'rename': {
        const to = this.pick(NAMES.filter((n) => n !== name));
        const toState = this.tables.get(to)!;
        const force = this.random() < 0.5;
        const res = await this.call('POST', this.path(name, '/rename'), { id: [this.ns, name], new_table_name: to }, force ? '&force=true' : '');
        const expected = [
          ...(state !== 'live' ? [4] : []),
          ...(toState === 'live' || toState === 'unknown' ? [5] : []),
          ...(!force && this.protection.get(name) !== false && this.protection.has(name) ? [19] : []),
        ];
        const outcome = this.judge(`rename ${name} (${state}) → ${to} (${toState})`, res, expected);
        if (outcome === true) {
          this.setTable(to, 'live', this.protection.get(name) ?? false);
          this.setTable(name, 'absent', false);
          this.versions.set(to, this.versions.get(name) ?? 0);
        } else if (outcome === 'unknown') {
          this.setTable(to, 'unknown', 'unknown');
          this.setTable(name, 'unknown', 'unknown');
        }
        return;
      }
      case 'drop':
      case 'purge': {
        const force = this.random() < 0.5;
        const res = await this.call('POST', this.path(name, '/drop'), { id: [this.ns, name] }, `${kind === 'purge' ? '&purge=true' : ''}${force ? '&force=true' : ''}`);
        const expected = [...(state !== 'live' ? [4] : []), ...(!force && this.protection.has(name) && this.protection.get(name) !== false ? [19] : [])];
        const outcome = this.judge(`${kind} ${name} (${state})`, res, expected);
        if (outcome === true) this.setTable(name, kind === 'purge' ? 'absent' : 'trash', false);
        else if (outcome === 'unknown') this.setTable(name, 'unknown', 'unknown');
        return;
      }
      case 'undrop': {
        const res = await this.call('POST', this.path(name, '/undrop'), { id: [this.ns, name] });
        // Nothing in trash (4), or the name re-used (5); an earlier drop's trash may still hold other tables of the name.
        const outcome = this.judge(`undrop ${name} (${state})`, res, state === 'trash' ? [5] : [4, 5]);
        // The undropped table is the same table (same uid): a protection record of it may apply again.
        if (outcome === true) this.setTable(name, 'live', 'unknown');
        else if (outcome === 'unknown') this.setTable(name, 'unknown', 'unknown');
        return;
      }
      case 'protect': {
        const on = this.random() < 0.7;
        const res = await this.call('POST', this.path(name, '/protection'), { protected: on });
        const outcome = this.judge(`protect ${name}=${on} (${state})`, res, state !== 'live' ? [4] : []);
        if (outcome === true) this.protection.set(name, on);
        else if (outcome === 'unknown') this.protection.set(name, 'unknown');
        return;
      }
      case 'version': {
        if (state !== 'live') return this.describeOne(name);
        const described = await this.call('POST', this.path(name, '/describe'), { id: [this.ns, name] });
        if (described.status !== 200) {
          this.judge(`describe before version ${name}`, described, []);
          return;
        }
        const location = String(described.body.location ?? '');
        const tableKey = location.slice('s3://wh-bucket/'.length);
        const version = (this.versions.get(name) ?? 0) + 1;
        const key = `${tableKey}/_versions/${manifestName(version, 'V2')}-${randomUUID()}`;
        const staged = await this.fake.client.send(new PutObjectCommand({ Bucket: 'wh-bucket', Key: key, Body: Buffer.from(`v${version}`) }));
        const res = await this.call('POST', this.path(name, '/version/create'), {
          id: [this.ns, name],
          version,
          manifest_path: key,
          e_tag: staged.ETag,
          manifest_size: Buffer.byteLength(`v${version}`),
          naming_scheme: 'V2',
        });
        // 5 / 14: version `version` is committed already (a registered or undropped table keeps
        // its versions, which this model does not track): the next attempt commits the one after.
        const outcome = this.judge(`version ${name} v${version}`, res, [5, 14]);
        if (outcome !== 'unknown') this.versions.set(name, version);
        return;
      }
      case 'child': {
        const child = `/v1/namespace/${this.ns}%24k`;
        const res = await this.call('POST', `${child}/create`, { id: [this.ns, 'k'] });
        const outcome = this.judge(`create child (${this.child})`, res, this.child !== 'absent' ? [2] : []);
        if (outcome === true) this.child = 'live';
        else if (outcome === 'unknown') this.child = 'unknown';
        if (this.child === 'live') {
          const t = await this.call('POST', `/v1/table/${this.ns}%24k%24x/declare`, { id: [this.ns, 'k', 'x'] });
          this.judge('declare in child', t, [5]);
        }
        return;
      }
      case 'cascade': {
        const res = await this.call('POST', `/v1/namespace/${this.ns}%24k/drop`, { id: [this.ns, 'k'], behavior: 'Cascade' });
        const outcome = this.judge(`cascade drop child (${this.child})`, res, this.child !== 'live' ? [1] : []);
        if (outcome === true) this.child = 'absent';
        else if (outcome === 'unknown') this.child = 'unknown';
        return;
      }
      default:
        return this.describeOne(name);
    }
  }

  private async describeOne(name: string): Promise<void> {
    const state = this.tables.get(name)!;
    const res = await this.call('POST', this.path(name, '/describe'), { id: [this.ns, name] });
    this.judge(`describe ${name} (${state})`, res, state === 'live' ? [] : [4]);
  }

  private setTable(name: string, state: TableState, protectedNow: boolean | 'unknown'): void {
    this.tables.set(name, state);
    if (protectedNow === false) this.protection.delete(name);
    else this.protection.set(name, protectedNow);
    if (state !== 'live' && state !== 'unknown') this.versions.delete(name);
  }

  /** Faults off: one read of every name; acknowledged effects must be visible. */
  async verify(): Promise<void> {
    for (const name of NAMES) {
      const state = this.tables.get(name)!;
      const res = await this.call('POST', this.path(name, '/describe'), { id: [this.ns, name] });
      const visible = res.status === 200;
      if (res.status !== 200 && res.status !== 404) this.report.lost.push(`${this.ns}.${name}: describe answered ${res.status} with faults off`);
      if (state === 'live' && !visible) this.report.lost.push(`${this.ns}.${name}: acknowledged live, reads 404`);
      if ((state === 'absent' || state === 'trash') && visible) this.report.lost.push(`${this.ns}.${name}: acknowledged ${state}, reads as live`);
      // The name's trash is read too: one read of each object a door may have left half-done.
      const tasks = await this.call('GET', this.path(name, '/tasks'));
      const inTrash = Array.isArray(tasks.body.tasks) && tasks.body.tasks.length > 0;
      if (state === 'trash' && !inTrash) this.report.lost.push(`${this.ns}.${name}: acknowledged in trash, no trash entry`);
      const prot = this.protection.get(name);
      if (visible && prot === true) {
        const p = await this.call('GET', this.path(name, '/protection'));
        if (p.body.protected !== true) this.report.lost.push(`${this.ns}.${name}: acknowledged protected, reads unprotected`);
      }
    }
    // The child's table too: a declare there may have left a note in its trash (trash.ts, fileWithdrawal).
    await this.call('GET', `/v1/table/${this.ns}%24k%24x/tasks`);
    const child = await this.call('POST', `/v1/namespace/${this.ns}%24k/describe`, { id: [this.ns, 'k'] });
    if (this.child === 'live' && child.status !== 200) this.report.lost.push(`${this.ns}.k: acknowledged namespace, reads ${child.status}`);
    if (this.child === 'absent' && child.status === 200) this.report.lost.push(`${this.ns}.k: acknowledged cascade drop, namespace still there`);
    // Listing each namespace settles any drop left `dropping` (requireNamespace), as a client's next read would.
    await this.call('GET', `/v1/namespace/${this.ns}/table/list`);
  }
}

const DEBUG = !!process.env.RASK_FAULT_DEBUG;
/** RASK_FAULT_DEBUG: every S3 attempt with the door it served and its fault, to trace a leftover back to its door. */
const doorOf = new AsyncLocalStorage<string>();
const trace: { door: string; command: string; key: string; body: string; fault: string; at: number }[] = [];
const started = Date.now();
const safeDecode = (key: string) => {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
};
function traced(faults: S3Faults): S3Faults {
  return {
    ...faults,
    decide(request) {
      const fault = faults.decide(request);
      const body = request.input.Body;
      trace.push({
        door: doorOf.getStore() ?? '-',
        command: request.command,
        key: request.key,
        body: typeof body === 'string' ? body : Buffer.isBuffer(body) || body instanceof Uint8Array ? Buffer.from(body).toString() : '',
        fault: fault ? `${fault.kind}${fault.afterApply ? '-after' : ''}` : '',
        at: Date.now() - started,
      });
      return fault;
    },
  };
}

/** Claims on a location that is neither a live table's nor a trashed one's, counted by state. */
async function leftoverClaims(services: CatalogServices): Promise<Record<string, number>> {
  const [tables, claims, trash] = await Promise.all([allTableRecords(services), allClaims(services), allTrash(services)]);
  const accounted = new Set([...tables, ...trash].map((t) => `${t.warehouse}/${t.path}`));
  const left: Record<string, number> = {};
  for (const c of claims) if (!accounted.has(`${c.warehouse}/${c.path}`)) left[c.state] = (left[c.state] ?? 0) + 1;
  return left;
}

/** One line per run for docs/testing.md. */
export function summarize(r: RunReport): string {
  const o = r.options;
  return [
    `p=${o.p.toFixed(2)}`,
    o.sdkRetries ? 'SDK retries' : 'no SDK retries',
    `doors=${r.doors}`,
    `ok=${r.ok}`,
    `503/17=${r.unavailable}`,
    `spec-code=${r.expectedErrors}`,
    `14=${r.concurrent}`,
    `500/18=${r.internal}`,
    `other-5xx=${r.badUnavailable}`,
    `misleading=${r.misleading.length}`,
    `lost=${r.lost.length}`,
    `violations-after-read=${r.violationsAfterRead.length}`,
    `claims-left-after-read=${JSON.stringify(r.claimsLeftAfterRead)}`,
    `violations=${r.violations.length}`,
    `attempts=${r.attempts}`,
    `faults=${r.faults}`,
  ].join(' ');
}
