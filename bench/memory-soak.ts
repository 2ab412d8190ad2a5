/**
 * Memory soak (issue #36): the local server, in a child process of its own so that its RSS is
 * its own, under a steady mixed multi-table load on loopback for RASK_SOAK_MINUTES (default 8):
 * metadata doors, inserts, merges, deletes, vector queries and counts, over raw HTTP and through
 * the official LanceDB client, by RASK_SOAK_WORKERS workers (default 12). Each worker keeps three
 * busy tables that gather versions (each replaced after RASK_SOAK_RECYCLE_WRITES writes, default
 * 150; the first ones after staggered shares of that, see `firstLifetime`) and one that it drops
 * and creates anew throughout.
 *
 * Every 15 s it prints the server's RSS (from /proc, so any server version can be measured), its
 * heap, external memory and LanceDB cache use (from the `memory` line the server prints with
 * RASK_MEMORY_STATS_MS; absent on servers that predate it), request rates and p50/p99 per
 * operation class. At the end it checks that every acknowledged write is there (row ids, tables,
 * listings) and exits non-zero when
 *   - RSS in the last minute is more than 25 % above minute 2 (for runs under 4 minutes: the
 *     second quarter stands for minute 2),
 *   - RSS rises from each quarter of the measured span (minute 2 to the end) to the next,
 *   - any class's p99 in the last minute is above twice its minute-2 p99 (dropBusy, which has
 *     hardly any calls in minute 2, against its own first minute with 20 calls; a window with
 *     fewer than 20 calls is reported as not judged),
 *   - any answer was a 5xx or any acknowledged write was lost (connection errors are reported).
 *
 *   npm run soak:memory                       # 8 minutes
 *   RASK_SOAK_MINUTES=2 npm run soak:memory   # a short run while developing
 *   RASK_SOAK_SERVER=/path/to/functions/local-server.ts npm run soak:memory   # another checkout
 *   RASK_SOAK_TRACE=/tmp/trace.json npm run soak:memory   # every call and sample, as JSON
 *
 * Not part of `npm test`. Linux only (RSS from /proc/<pid>/status).
 */
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct, Table, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NATIVE_ALLOCATOR_ENV } from '../lib/config.js';

const MINUTES = Number(process.env.RASK_SOAK_MINUTES ?? 8);
const WORKERS = Number(process.env.RASK_SOAK_WORKERS ?? 12);
const REPORT_MS = 15_000;
const SAMPLE_MS = 5_000;
const DIM = 16;
const SERVER = process.env.RASK_SOAK_SERVER ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'functions', 'local-server.ts');
if (!(MINUTES > 0) || !(WORKERS > 0)) throw new Error('RASK_SOAK_MINUTES and RASK_SOAK_WORKERS must be positive numbers');

// ---- rows ----

const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('vector', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);
const vectorOf = (i: number) => Array.from({ length: DIM }, (_, d) => Math.sin(i * 0.37 + d));

function ipc(ids: number[]): Buffer {
  const children = [vectorFromArray(ids.map(BigInt), new Int64()), vectorFromArray(ids.map(vectorOf), schema.fields[1].type)].map((v) => v.data[0]);
  const table = new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: ids.length, nullCount: 0, children }))]);
  return Buffer.from(tableToIPC(table, 'stream'));
}

// ---- the server ----

interface ServerSample {
  readonly t: number;
  readonly rss: number;
  readonly anon: number;
  readonly stats?: Record<string, number>;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'rask-soak-'));
const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
  cwd: path.dirname(path.dirname(SERVER)),
  env: {
    // The allocator settings `npm start` and the functions run with (lib/config.ts); the caller's
    // environment may override them, e.g. to measure glibc's defaults.
    ...NATIVE_ALLOCATOR_ENV,
    // The soak's own settings are not the server's (it would warn about unknown RASK_ variables).
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RASK_SOAK_'))),
    RASK_HOST: '127.0.0.1',
    RASK_PORT: '0',
    RASK_DATA_DIR: dataDir,
    RASK_LOG_FORMAT: 'json',
    RASK_LOG_LEVEL: 'info',
    RASK_MEMORY_STATS_MS: String(SAMPLE_MS),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
// However this process ends, the server does not outlive it.
process.once('exit', () => child.kill('SIGKILL'));
let lastStats: Record<string, number> | undefined;
let serverErrors = '';
const url = await new Promise<string>((resolve, reject) => {
  let buffer = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      const listening = /^rask listening on (\S+)/.exec(String(entry.message));
      if (listening) resolve(listening[1]);
      if (entry.message === 'memory') lastStats = entry as Record<string, number>;
      if (entry.level === 'ERROR') serverErrors += line + '\n';
    }
  });
  child.stderr!.on('data', (d: Buffer) => (serverErrors = (serverErrors + d.toString()).slice(-8000)));
  child.once('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready:\n${serverErrors}`)));
});

/** RSS, and its anonymous part (heap, native allocations) apart from mapped files, bytes. */
function rssOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

// ---- HTTP ----

const agent = new Agent({ keepAlive: true, maxSockets: WORKERS * 2 });
type Answer = { status: number; body: Buffer };

function http(method: 'GET' | 'POST', p: string, body?: Buffer | object): Promise<Answer> {
  const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = {};
  if (bytes) headers['content-length'] = String(bytes.length);
  if (bytes && !Buffer.isBuffer(body)) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(url + p, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

const tablePath = (ns: string, name: string, op: string, query = '') => `/v1/table/${ns}%24${name}/${op}?delimiter=%24${query ? `&${query}` : ''}`;

// ---- measurements ----

interface Call {
  readonly t: number;
  readonly op: string;
  readonly ms: number;
  /** A finer label than the class, for the trace only (RASK_SOAK_TRACE). */
  readonly detail?: string;
}
const calls: Call[] = [];
const samples: ServerSample[] = [];
const failures = { status5xx: 0, connection: 0, unexpected: 0, examples: [] as string[] };
const started = Date.now();
const elapsed = () => (Date.now() - started) / 1000;

async function timed<T>(op: string, f: () => Promise<T>, detail?: string): Promise<T> {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    calls.push({ t: elapsed(), op, ms: performance.now() - t0, detail });
  }
}

/** A request the workload expects to succeed: anything else is counted, and the answer returned. */
async function expectOk(op: string, f: () => Promise<Answer>, okStatuses = [200], detail?: string): Promise<Answer | undefined> {
  let answer: Answer;
  try {
    answer = await timed(op, f, detail);
  } catch (err) {
    failures.connection++;
    if (failures.examples.length < 10) failures.examples.push(`${op}: ${String(err)}`);
    return undefined;
  }
  if (okStatuses.includes(answer.status)) return answer;
  if (answer.status >= 500) failures.status5xx++;
  else failures.unexpected++;
  if (failures.examples.length < 10) failures.examples.push(`${op}: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
  return undefined;
}

// ---- the workload ----

interface Tracked {
  readonly name: string;
  readonly ids: Set<number>;
  /** Dropped and replaced by the churn op; the others live until `lifetime` writes. */
  readonly ephemeral: boolean;
  /** Writes after which a busy table is replaced (RECYCLE_WRITES, or less for the first ones). */
  readonly lifetime: number;
  writes: number;
  /** A write whose outcome is unknown (no answer, or an unexpected one): exact checks skip it. */
  uncertain: boolean;
}

interface WorkerState {
  readonly ns: string;
  readonly live: Map<string, Tracked>;
  readonly dropped: string[];
  nextId: number;
  nextTable: number;
}

const workers: WorkerState[] = Array.from({ length: WORKERS }, (_, w) => ({ ns: `w${w}`, live: new Map(), dropped: [], nextId: 0, nextTable: 0 }));
const deadline = started + MINUTES * 60_000;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];
const WEIGHTS: [string, number][] = [
  ['insert', 18],
  ['merge', 10],
  ['delete', 8],
  ['query', 14],
  ['count', 14],
  ['describe', 8],
  ['listTables', 5],
  ['listNamespaces', 3],
  ['clientCount', 5],
  ['clientList', 3],
  ['clientInsert', 4],
  ['churn', 2],
];
const WEIGHT_TOTAL = WEIGHTS.reduce((a, [, w]) => a + w, 0);
function nextOp(): string {
  let r = Math.random() * WEIGHT_TOTAL;
  for (const [op, w] of WEIGHTS) if ((r -= w) < 0) return op;
  return 'count';
}

/**
 * Each worker keeps LONG_LIVED busy tables, which gather versions the way a team's tables do
 * (each is replaced after RECYCLE_WRITES writes, so that its fragment count, and with it the
 * cost of a scan, stays in a steady range), and one ephemeral table that the churn op drops and
 * creates anew: tables are created and dropped throughout.
 *
 * The first busy tables' lifetimes are staggered: the k-th of the run's N lives (k+1)/N of
 * RECYCLE_WRITES. Created together and replaced after the same count, they used to age in
 * lockstep, so every latency and the request rate followed one saw-tooth with a period of
 * minutes, and "minute 2 against the last minute" compared two phases of it rather than a young
 * process with an old one (docs/benchmarks.md, "A workload that does not age in lockstep").
 * Staggered, the tables' ages are spread from the first replacement on.
 */
const LONG_LIVED = 3;
const RECYCLE_WRITES = Number(process.env.RASK_SOAK_RECYCLE_WRITES ?? 150);
let firstLives = 0;
function firstLifetime(): number {
  const k = firstLives++;
  return Math.max(1, Math.round((RECYCLE_WRITES * (k + 1)) / (WORKERS * LONG_LIVED)));
}

async function createTable(s: WorkerState, ephemeral: boolean, lifetime = RECYCLE_WRITES): Promise<void> {
  const name = `t${s.nextTable++}`;
  const ids = Array.from({ length: 20 }, () => s.nextId++);
  const ok = await expectOk('create', () => http('POST', tablePath(s.ns, name, 'create'), ipc(ids)));
  const tracked: Tracked = { name, ids: new Set(ok ? ids : []), ephemeral, lifetime, writes: 0, uncertain: !ok };
  s.live.set(name, tracked);
}

/**
 * Drops of busy tables are their own class, `dropBusy`: a drop deletes every file of the table's
 * history (about three per write), so its cost is set by the table's lifetime, not by how long
 * the server has run, and few busy tables reach theirs by minute 2. Counted with the churned
 * tables' drops, their arrival later in the run read as drops getting slower. Their p99 is judged
 * too, against their own first minute when minute 2 holds too few of them (see the verdict).
 */
async function dropTable(s: WorkerState, name: string): Promise<void> {
  const t = s.live.get(name);
  const op = t && !t.ephemeral ? 'dropBusy' : 'drop';
  const ok = await expectOk(op, () => http('POST', tablePath(s.ns, name, 'drop'), { id: [s.ns, name] }), [200], t ? `${t.writes} writes` : undefined);
  s.live.delete(name);
  if (ok) s.dropped.push(name);
}

/** After a write to `t`: a long-lived table that has had its share is replaced. */
async function wrote(s: WorkerState, t: Tracked): Promise<void> {
  if (t.ephemeral || ++t.writes < t.lifetime) return;
  await dropTable(s, t.name);
  await createTable(s, false);
}

async function step(s: WorkerState, db: lancedb.Connection): Promise<void> {
  const op = nextOp();
  const t = pick([...s.live.values()]);
  const existing = () => [...t.ids];
  switch (op) {
    case 'insert': {
      const ids = Array.from({ length: 20 }, () => s.nextId++);
      const ok = await expectOk('insert', () => http('POST', tablePath(s.ns, t.name, 'insert'), ipc(ids)));
      if (ok) ids.forEach((i) => t.ids.add(i));
      else t.uncertain = true;
      return wrote(s, t);
    }
    case 'merge': {
      const ids = [...existing().slice(0, 5), ...Array.from({ length: 5 }, () => s.nextId++)];
      const ok = await expectOk('merge', () =>
        http('POST', tablePath(s.ns, t.name, 'merge_insert', 'on=id&when_matched_update_all=true&when_not_matched_insert_all=true'), ipc(ids)),
      );
      if (ok) ids.forEach((i) => t.ids.add(i));
      else t.uncertain = true;
      return wrote(s, t);
    }
    case 'delete': {
      const ids = existing().slice(-3);
      if (ids.length === 0) return;
      const ok = await expectOk('delete', () => http('POST', tablePath(s.ns, t.name, 'delete'), { id: [s.ns, t.name], predicate: `id IN (${ids.join(', ')})` }));
      if (ok) ids.forEach((i) => t.ids.delete(i));
      else t.uncertain = true;
      return wrote(s, t);
    }
    case 'query': {
      await expectOk('query', () => http('POST', tablePath(s.ns, t.name, 'query'), { id: [s.ns, t.name], vector: { single_vector: vectorOf(s.nextId) }, k: 5 }));
      return;
    }
    case 'count': {
      await expectOk('count', () => http('GET', tablePath(s.ns, t.name, 'count_rows')));
      return;
    }
    case 'describe': {
      await expectOk('describe', () => http('POST', tablePath(s.ns, t.name, 'describe'), { id: [s.ns, t.name] }));
      return;
    }
    case 'listTables': {
      await expectOk('list', () => http('GET', `/v1/namespace/${s.ns}/table/list?delimiter=%24`));
      return;
    }
    case 'listNamespaces': {
      await expectOk('list', () => http('GET', '/v1/namespace/%24/list?delimiter=%24'));
      return;
    }
    case 'clientCount': {
      await clientCall('client', async () => {
        const table = await db.openTable(t.name, [s.ns]);
        try {
          await table.countRows();
        } finally {
          table.close();
        }
      });
      return;
    }
    case 'clientList': {
      await clientCall('client', () => db.tableNames([s.ns]));
      return;
    }
    case 'clientInsert': {
      const ids = Array.from({ length: 10 }, () => s.nextId++);
      const ok = await clientCall('clientInsert', async () => {
        const table = await db.openTable(t.name, [s.ns]);
        try {
          await table.add(ids.map((id) => ({ id: BigInt(id), vector: vectorOf(id) })));
        } finally {
          table.close();
        }
      });
      if (ok) ids.forEach((i) => t.ids.add(i));
      else t.uncertain = true;
      return wrote(s, t);
    }
    case 'churn': {
      const ephemeral = [...s.live.values()].find((x) => x.ephemeral);
      if (ephemeral) await dropTable(s, ephemeral.name);
      await createTable(s, true);
      return;
    }
  }
}

async function clientCall(op: string, f: () => Promise<unknown>): Promise<boolean> {
  try {
    await timed(op, f);
    return true;
  } catch (err) {
    const text = String(err);
    // The client reports an HTTP error with its status; a failed exchange as a reqwest error.
    if (/Failed to execute request|connection (reset|closed)|os error 104/i.test(text)) failures.connection++;
    else if (/\b(status|code)[ :=]*5\d\d\b|\b5\d\d (Internal|Service|Bad Gateway|Gateway)/i.test(text)) failures.status5xx++;
    else failures.unexpected++;
    if (failures.examples.length < 10) failures.examples.push(`${op}: ${text.slice(0, 300)}`);
    return false;
  }
}

async function runWorker(s: WorkerState): Promise<void> {
  await expectOk('create', () => http('POST', `/v1/namespace/${s.ns}/create?delimiter=%24`, { id: [s.ns] }));
  const db = await lancedb.connectNamespace('rest', { uri: url });
  for (let i = 0; i < LONG_LIVED; i++) await createTable(s, false, firstLifetime());
  await createTable(s, true);
  while (Date.now() < deadline) await step(s, db);
}

// ---- reporting ----

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const mb = (b: number | undefined) => (b === undefined || Number.isNaN(b) ? 'n/a' : `${(b / 2 ** 20).toFixed(1)}`);
const byOp = (from: number, to: number) => {
  const out = new Map<string, number[]>();
  for (const c of calls) if (c.t >= from && c.t < to) (out.get(c.op) ?? out.set(c.op, []).get(c.op)!).push(c.ms);
  return out;
};

function sample(): void {
  samples.push({ t: elapsed(), ...rssOf(child.pid!), stats: lastStats });
}

let lastReport = 0;
function report(): void {
  const now = elapsed();
  const s = samples.at(-1);
  const ops = byOp(lastReport, now);
  const count = [...ops.values()].reduce((a, xs) => a + xs.length, 0);
  const classes = [...ops.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, xs]) => `${op} ${quantile(xs, 0.5).toFixed(0)}/${quantile(xs, 0.99).toFixed(0)}`)
    .join(' ');
  const st = s?.stats;
  console.log(
    `[${now.toFixed(0).padStart(4)} s] rss ${mb(s?.rss)} MB (anon ${mb(s?.anon)}) heap ${mb(st?.heapUsed)} ext ${mb(st?.external)} ab ${mb(st?.arrayBuffers)} ` +
      `lance ${mb(st?.lanceCacheBytes)}/${mb(st?.lanceCacheBudgetBytes)} MB (${st?.lanceCacheItems ?? 'n/a'} items, ${st?.lanceSessionRenewals ?? 'n/a'} renewals, ${st?.uncollectedSessions ?? 'n/a'} sessions) handles ${st?.keptHandles ?? 'n/a'} ` +
      `loop max ${st?.eventLoopDelayMaxMs ?? 'n/a'} ms accepted ${st?.connectionsAccepted ?? 'n/a'} ` +
      `| ${(count / (now - lastReport)).toFixed(0)} req/s | p50/p99 ms: ${classes}`,
  );
  lastReport = now;
}

const sampler = setInterval(sample, SAMPLE_MS);
const reporter = setInterval(report, REPORT_MS);
sample();
console.log(`memory soak: ${MINUTES} min, ${WORKERS} workers, server pid ${child.pid} at ${url}, data in ${dataDir}`);
await Promise.all(workers.map(runWorker));
clearInterval(sampler);
clearInterval(reporter);
sample();
report();

// ---- what was acknowledged is there ----

let lost = 0;
let checkedTables = 0;
const lostExamples: string[] = [];
const loss = (what: string) => {
  lost++;
  if (lostExamples.length < 10) lostExamples.push(what);
};
for (const s of workers) {
  for (const t of s.live.values()) {
    if (t.uncertain) continue;
    checkedTables++;
    const res = await http('POST', tablePath(s.ns, t.name, 'query'), { id: [s.ns, t.name], k: 1_000_000, columns: ['id'] });
    if (res.status !== 200) {
      loss(`${s.ns}.${t.name}: query ${res.status}`);
      continue;
    }
    const got = new Set(Array.from(tableFromIPC(res.body).getChild('id')!.toArray() as BigInt64Array, Number));
    const missing = [...t.ids].filter((i) => !got.has(i));
    const extra = [...got].filter((i) => !t.ids.has(i));
    if (missing.length || extra.length) loss(`${s.ns}.${t.name}: ${missing.length} acknowledged rows missing, ${extra.length} unexpected`);
  }
  for (const name of s.dropped) {
    const res = await http('POST', tablePath(s.ns, name, 'describe'), { id: [s.ns, name] });
    if (res.status !== 404) loss(`${s.ns}.${name}: dropped, but describe answered ${res.status}`);
  }
  const listed = await http('GET', `/v1/namespace/${s.ns}/table/list?delimiter=%24`);
  const names = listed.status === 200 ? (JSON.parse(listed.body.toString()).tables as string[]).sort() : [];
  const expected = [...s.live.keys()].filter((n) => !s.live.get(n)!.uncertain).sort();
  const unexpected = names.filter((n) => !s.live.has(n));
  const absent = expected.filter((n) => !names.includes(n));
  if (unexpected.length || absent.length) loss(`${s.ns}: listing has ${unexpected.length} tables it should not, lacks ${absent.length}`);
}

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
agent.destroy();
rmSync(dataDir, { recursive: true, force: true });
// Every call and sample, for a closer look than the summary gives (which class, when, how long).
if (process.env.RASK_SOAK_TRACE) writeFileSync(process.env.RASK_SOAK_TRACE, JSON.stringify({ calls, samples }));

// ---- verdict ----

const runS = MINUTES * 60;
const [baseFrom, baseTo] = runS >= 240 ? [60, 120] : [runS / 4, runS / 2];
const lastFrom = runS - Math.min(60, runS / 4);
const meanRss = (from: number, to: number) => {
  const xs = samples.filter((s) => s.t >= from && s.t < to).map((s) => s.rss);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
};
const base = meanRss(baseFrom, baseTo);
const last = meanRss(lastFrom, Infinity);
const growth = last / base - 1;
const span = runS - baseFrom;
const quarters = [0, 1, 2, 3].map((q) => meanRss(baseFrom + (q * span) / 4, q === 3 ? Infinity : baseFrom + ((q + 1) * span) / 4));
// Rising: every quarter at least 1 % above the one before (noise between samples is below that).
const rising = quarters.every((q, i) => i === 0 || q > quarters[i - 1] * 1.01);
const slope = ((last - base) / 2 ** 20 / ((lastFrom + runS) / 2 - (baseFrom + baseTo) / 2)) * 60;

const baseOps = byOp(baseFrom, baseTo);
const lastOps = byOp(lastFrom, Infinity);
const p99Regressions: string[] = [];
const p99Table: string[] = [];
const notJudged: string[] = [];
// A class with too few calls in minute 2 (dropBusy: few busy tables are old enough yet) is judged
// against its own first minute instead: the first 60 s, in steps of 15 s from its first call,
// with at least 20 calls and ending before the last minute begins.
const firstCall = new Map<string, number>();
for (const c of calls) if (!firstCall.has(c.op)) firstCall.set(c.op, c.t);
const ownFirstMinute = (op: string): [number, number[]] => {
  for (let from = firstCall.get(op)!; from + 60 <= lastFrom; from += 15) {
    const xs = byOp(from, from + 60).get(op) ?? [];
    if (xs.length >= 20) return [from, xs];
  }
  return [firstCall.get(op)!, []];
};
for (const op of [...firstCall.keys()].sort()) {
  const late = (baseOps.get(op)?.length ?? 0) < 20 && op === 'dropBusy';
  const [from, xs] = late ? ownFirstMinute(op) : [baseFrom, baseOps.get(op) ?? []];
  const ys = lastOps.get(op) ?? [];
  const [b99, l99] = [quantile(xs, 0.99), quantile(ys, 0.99)];
  const window = late ? ` (baseline: its first minute, from ${from.toFixed(0)} s)` : '';
  p99Table.push(`${op} ${b99.toFixed(0)} → ${l99.toFixed(0)} ms (${xs.length}/${ys.length} calls)${window}`);
  if (xs.length >= 20 && ys.length >= 20) {
    if (l99 > 2 * b99) p99Regressions.push(op);
  } else notJudged.push(`${op} (${xs.length}/${ys.length} calls)`);
}

const total = calls.length;
const finalStats = samples.at(-1)?.stats;
console.log('\n---- summary ----');
console.log(`requests: ${total} in ${runS} s (${(total / runS).toFixed(0)}/s), ${WORKERS} workers; tables checked: ${checkedTables}`);
console.log(`RSS minute 2 (${baseFrom}-${baseTo} s): ${mb(base)} MB; last minute: ${mb(last)} MB; growth ${(growth * 100).toFixed(1)} % (${slope.toFixed(1)} MB/min)`);
console.log(`RSS by quarter from ${baseFrom} s: ${quarters.map((q) => mb(q)).join(' → ')} MB${rising ? ' (rising)' : ''}`);
console.log(`peak RSS ${mb(Math.max(...samples.map((s) => s.rss)))} MB; LanceDB cache at the end ${mb(finalStats?.lanceCacheBytes)} of ${mb(finalStats?.lanceCacheBudgetBytes)} MB`);
console.log(`p99 minute 2 → last minute: ${p99Table.join('; ')}`);
if (notJudged.length) console.log(`p99 not judged (fewer than 20 calls in a window): ${notJudged.join(', ')}`);
console.log(`5xx: ${failures.status5xx}; connection errors: ${failures.connection}; other unexpected answers: ${failures.unexpected}; lost acknowledged writes: ${lost}`);
for (const e of [...failures.examples, ...lostExamples]) console.log(`  ${e}`);
if (serverErrors) console.log(`server errors:\n${serverErrors.slice(-2000)}`);

const problems = [
  growth > 0.25 ? `RSS grew ${(growth * 100).toFixed(1)} % after minute 2 (limit 25 %)` : undefined,
  rising ? 'RSS rose in every quarter' : undefined,
  p99Regressions.length ? `p99 more than doubled for ${p99Regressions.join(', ')}` : undefined,
  failures.status5xx ? `${failures.status5xx} answers were 5xx` : undefined,
  lost ? `${lost} acknowledged writes lost` : undefined,
].filter(Boolean);
// A connection reset on a reused keep-alive socket (the official client's pool against the
// server's keep-alive timeout) is reported, not failed on: it is not about memory.
if (failures.connection) console.log(`WARN: ${failures.connection} connection errors (see above)`);
console.log(problems.length ? `FAIL: ${problems.join('; ')}` : 'PASS');
process.exit(problems.length ? 1 : 0);
