/**
 * Server-side data operations (what thin clients and push-down engines use): CreateTable,
 * InsertIntoTable and QueryTable over HTTP with Arrow IPC bodies. 10,000 rows of 128-d float32
 * vectors; the sides alternate for five rounds and each figure is the median. The sides:
 * - rask's local server, in a process of its own (bench/rask-server.ts);
 * - the fair peer: a bare node:http server in a process of its own that makes the same LanceDB
 *   calls and nothing else (bench/bare-lance-server.ts); rask and it swap order every round;
 * - LanceDB in-process (no HTTP at all);
 * - a bare node:http server in this process that only reads the body and answers canned bytes:
 *   what HTTP alone costs, and so the lowest ratio over in-process LanceDB any server could reach.
 *
 *   npx tsx bench/data-plane.ts [--rounds 5] [--creates 10]     (10 creates per round: with 5, one slow create moves a round by ±0.5)
 */
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const DIM = 128;
const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('vector', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);
export const vectorOf = (i: number) => Array.from({ length: DIM }, (_, d) => Math.sin(i * 0.37 + d));

export function rows(count: number, start = 0): Table {
  const ids = Array.from({ length: count }, (_, i) => start + i);
  const children = [vectorFromArray(ids.map(BigInt), new Int64()), vectorFromArray(ids.map(vectorOf), schema.fields[1].type)].map((v) => v.data[0]);
  return new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: count, nullCount: 0, children }))]);
}

/** Raw bytes with only Content-Length, as the official REST client sends Arrow bodies. */
export function post(url: string, body: Buffer, json = false): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-length': String(body.length) };
    if (json) headers['content-type'] = 'application/json';
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface DataPlaneResult {
  readonly workload: string;
  readonly ops: number;
  readonly raskMs: number;
  readonly lanceMs: number;
  /**
   * The same exchange with a server that only reads the body and answers with canned bytes of
   * the size rask answers: what HTTP alone costs. No server can take less than the peer plus
   * this, so (lanceMs + floorMs) / lanceMs is the lowest ratio any HTTP server could reach.
   */
  readonly floorMs: number;
  /** The fair peer: a bare node:http server making the same LanceDB calls, in its own process. */
  readonly bareMs: number;
  /** rask / bare server per round (the median's spread). */
  readonly perRound: readonly number[];
  /**
   * CPU time of each server's process per request (all its threads, LanceDB's included; from
   * /proc, summed over the rounds), or undefined where /proc is not there. On a loaded machine
   * this moves far less than the wall clock: waiting for a CPU is not counted.
   */
  readonly raskCpuMs?: number;
  readonly bareCpuMs?: number;
}

/** User + system CPU time of process `pid` so far, in ms (Linux /proc; undefined elsewhere). */
function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; utime, stime are 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
const CLOCK_TICKS = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

/** Starts `script <dir>` under tsx in a process of its own; resolves once it prints its URL. */
function startChild(script: string, dir: string): Promise<{ url: string; child: ChildProcess }> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', file, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\S+)/.exec(out);
      if (m) resolve({ url: m[1], child });
    });
  });
}

/** A node:http server that reads each body whole and answers `answer(path)`: nothing else. */
async function startFloorServer(answer: (path: string) => Buffer): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Buffer.concat(chunks); // one buffer of the whole body, as any server needs before decoding
      const body = answer(req.url ?? '/');
      res.writeHead(200, { 'content-length': String(body.length) }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('floor server has no port');
  return { url: `http://127.0.0.1:${address.port}`, server };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function per(ops: number, run: (i: number) => Promise<void>, started?: () => void): Promise<number> {
  // Warm-up, not timed: the first data request loads LanceDB (~0.5 s) and the second still JITs.
  await run(-2);
  await run(-1);
  started?.();
  const start = performance.now();
  for (let i = 0; i < ops; i++) await run(i);
  return (performance.now() - start) / ops;
}

export async function dataPlaneCosts(
  options: { creates?: number; appends?: number; queries?: number; rounds?: number } = {},
): Promise<DataPlaneResult[]> {
  const rounds = options.rounds ?? 5;
  const creates = options.creates ?? 10;
  const appends = options.appends ?? 20;
  const queries = options.queries ?? 50;
  const dir = await mkdtemp(path.join(tmpdir(), 'rask-bench-data-'));
  try {
    const big = Buffer.from(tableToIPC(rows(10_000), 'stream'));
    const hundred = (i: number) => rows(100, 10_000 + (i + 1) * 100);
    // The peer gets tables built by LanceDB's own helper (before the clock starts), so neither
    // side pays for turning JS objects into Arrow inside the timed loop.
    const plainRows = (count: number, start = 0) =>
      Array.from({ length: count }, (_, i) => ({ id: start + i, vector: vectorOf(start + i) }));
    const lanceTable = (count: number, start = 0) => lancedb.makeArrowTable(plainRows(count, start), { vectorColumns: { vector: new lancedb.VectorColumnOptions() } });
    const bigTable = lanceTable(10_000);
    const lanceHundreds = Array.from({ length: appends + 2 }, (_, i) => lanceTable(100, 10_000 + i * 100));
    const q = vectorOf(42);

    let floor: { url: string; server: Server } | undefined;
    const [server, bare] = await Promise.all([startChild('./rask-server.ts', path.join(dir, 'rask')), startChild('./bare-lance-server.ts', path.join(dir, 'bare'))]);
    const db = await lancedb.connect(path.join(dir, 'lance'));
    try {
      // One client for both servers: the same paths, query strings and bodies.
      const urlOf = (base: string) => (name: string, op: string) => `${base}/v1/table/bench%24${name}/${op}?delimiter=%24`;
      const url = urlOf(server.url);
      const bareUrl = urlOf(bare.url);
      const ok = (r: { status: number; body: Buffer }) => {
        if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 200)}`);
      };
      const hundreds = Array.from({ length: appends + 2 }, (_, i) => Buffer.from(tableToIPC(hundred(i - 2), 'stream')));
      const queryBody = Buffer.from(JSON.stringify({ vector: q, k: 10 }));
      // The append and query target of each side, 10,000 rows to start with.
      for (const base of [server.url, bare.url]) ok(await post(`${base}/v1/namespace/bench/create`, Buffer.from('{}'), true));
      ok(await post(url('c0', 'create'), big));
      ok(await post(bareUrl('c0', 'create'), big));
      await db.createTable('c0', bigTable);
      const table = await db.openTable('c0');
      // rask's own answers, so the floor server sends as many bytes back as rask does.
      const answers = {
        create: (await post(url('f0', 'create'), big)).body,
        insert: (await post(url('f0', 'insert'), hundreds[0])).body,
        query: (await post(url('c0', 'query'), queryBody, true)).body,
      };
      floor = await startFloorServer((p) => (p.includes('/query') ? answers.query : p.includes('/insert') ? answers.insert : answers.create));
      const floorBase = floor.url;
      const floorUrl = (op: string) => `${floorBase}/v1/table/bench%24floor/${op}?delimiter=%24`;

      // The sides alternate round by round (both grow c0 alike) and each figure is the median of
      // its rounds, so a burst of load on the shared machine does not decide a ratio.
      const rask = { create: [] as number[], append: [] as number[], query: [] as number[] };
      const lance = { create: [] as number[], append: [] as number[], query: [] as number[] };
      const http = { create: [] as number[], append: [] as number[], query: [] as number[] };
      const peer = { create: [] as number[], append: [] as number[], query: [] as number[] };
      // Server CPU time, summed over the rounds (ms), and the requests it was spent on.
      const cpu = { rask: { create: 0, append: 0, query: 0 }, bare: { create: 0, append: 0, query: 0 } };
      const opsOf = { create: 0, append: 0, query: 0 };
      let cpuKnown = cpuMsOf(server.child.pid) !== undefined && cpuMsOf(bare.child.pid) !== undefined;
      const timed = async (side: 'rask' | 'bare', key: keyof typeof opsOf, ops: number, run: (i: number) => Promise<void>) => {
        const pid = (side === 'rask' ? server : bare).child.pid;
        // The two warm-up calls are not counted: measure around the timed loop only.
        let before: number | undefined;
        const ms = await per(ops, run, () => (before = cpuMsOf(pid)));
        const after = cpuMsOf(pid);
        if (before === undefined || after === undefined) cpuKnown = false;
        else cpu[side][key] += after - before;
        if (side === 'rask') opsOf[key] += ops;
        return ms;
      };
      for (let round = 0; round < rounds; round++) {
        const raskRound = async () => {
          rask.create.push(await timed('rask', 'create', creates, async (i) => ok(await post(url(`r${round}n${i + 2}`, 'create'), big))));
          rask.append.push(await timed('rask', 'append', appends, async (i) => ok(await post(url('c0', 'insert'), hundreds[i + 2]))));
          rask.query.push(await timed('rask', 'query', queries, async () => ok(await post(url('c0', 'query'), queryBody, true))));
        };
        const bareRound = async () => {
          peer.create.push(await timed('bare', 'create', creates, async (i) => ok(await post(bareUrl(`r${round}n${i + 2}`, 'create'), big))));
          peer.append.push(await timed('bare', 'append', appends, async (i) => ok(await post(bareUrl('c0', 'insert'), hundreds[i + 2]))));
          peer.query.push(await timed('bare', 'query', queries, async () => ok(await post(bareUrl('c0', 'query'), queryBody, true))));
        };
        // rask and its fair peer swap order every round, so neither always follows the other.
        if (round % 2 === 0) await raskRound(), await bareRound();
        else await bareRound(), await raskRound();
        lance.create.push(await per(creates, async (i) => void (await db.createTable(`r${round}n${i + 2}`, bigTable))));
        lance.append.push(await per(appends, async (i) => void (await table.add(lanceHundreds[i + 2]))));
        lance.query.push(
          await per(queries, async () => {
            const hits = await table.search(q).limit(10).toArray();
            if (hits.length !== 10) throw new Error('wrong hits');
          }),
        );
        http.create.push(await per(creates, async () => ok(await post(floorUrl('create'), big))));
        http.append.push(await per(appends, async (i) => ok(await post(floorUrl('insert'), hundreds[i + 2]))));
        http.query.push(await per(queries, async () => ok(await post(floorUrl('query'), queryBody, true))));
      }
      const result = (workload: string, ops: number, key: keyof typeof rask): DataPlaneResult => ({
        workload,
        ops,
        raskMs: median(rask[key]),
        lanceMs: median(lance[key]),
        floorMs: median(http[key]),
        bareMs: median(peer[key]),
        perRound: rask[key].map((ms, i) => ms / peer[key][i]),
        ...(cpuKnown ? { raskCpuMs: cpu.rask[key] / opsOf[key], bareCpuMs: cpu.bare[key] / opsOf[key] } : {}),
      });
      return [
        result('CreateTable, 10,000 rows of 128-d', creates, 'create'),
        result('InsertIntoTable, 100 rows', appends, 'append'),
        result('QueryTable, vector k=10', queries, 'query'),
      ];
    } finally {
      floor?.server.close();
      db.close();
      server.child.kill('SIGTERM');
      bare.child.kill('SIGTERM');
      await Promise.all([server, bare].map(({ child }) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The markdown table `npm run bench` and this script print. */
export function dataPlaneTable(results: readonly DataPlaneResult[]): string {
  const lines = [
    '| workload | ops | rask ms/op | bare LanceDB server ms/op | rask / bare (per round) | server CPU ms/op, rask / bare | LanceDB in-process ms/op | rask / in-process | HTTP alone ms/op | lowest ratio over HTTP |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const bound = (r.lanceMs + r.floorMs) / r.lanceMs;
    const spread = `${Math.min(...r.perRound).toFixed(2)}–${Math.max(...r.perRound).toFixed(2)}`;
    const cpu =
      r.raskCpuMs === undefined || r.bareCpuMs === undefined
        ? 'n/a'
        : `${r.raskCpuMs.toFixed(2)} / ${r.bareCpuMs.toFixed(2)} (**${(r.raskCpuMs / r.bareCpuMs).toFixed(2)}×**)`;
    lines.push(
      `| ${r.workload} | ${r.ops} | ${r.raskMs.toFixed(2)} | ${r.bareMs.toFixed(2)} | **${(r.raskMs / r.bareMs).toFixed(2)}×** (${spread}) | ${cpu} | ` +
        `${r.lanceMs.toFixed(2)} | ${(r.raskMs / r.lanceMs).toFixed(2)}× | ${r.floorMs.toFixed(2)} | ${bound.toFixed(2)}× |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, creates: { type: 'string', default: '10' } } });
  console.log(dataPlaneTable(await dataPlaneCosts({ rounds: Number(values.rounds), creates: Number(values.creates) })));
}
