/**
 * Server-side data operations (what thin clients and push-down engines use): CreateTable,
 * InsertIntoTable and QueryTable over HTTP with Arrow IPC bodies, against LanceDB in-process on
 * the same machine and data in the same run. 10,000 rows of 128-d float32 vectors; the sides
 * alternate for five rounds and each figure is the median. A third side sends the same requests
 * to a bare node:http server that only reads the body: what HTTP alone costs, and so the lowest
 * ratio any server over HTTP could reach.
 *
 *   npx tsx bench/data-plane.ts
 */
import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';

const DIM = 128;
const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('vector', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);
const vectorOf = (i: number) => Array.from({ length: DIM }, (_, d) => Math.sin(i * 0.37 + d));

function rows(count: number, start = 0): Table {
  const ids = Array.from({ length: count }, (_, i) => start + i);
  const children = [vectorFromArray(ids.map(BigInt), new Int64()), vectorFromArray(ids.map(vectorOf), schema.fields[1].type)].map((v) => v.data[0]);
  return new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: count, nullCount: 0, children }))]);
}

/** Raw bytes with only Content-Length, as the official REST client sends Arrow bodies. */
function post(url: string, body: Buffer, json = false): Promise<{ status: number; body: Buffer }> {
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

async function per(ops: number, run: (i: number) => Promise<void>): Promise<number> {
  // Warm-up, not timed: the first data request loads LanceDB (~0.5 s) and the second still JITs.
  await run(-2);
  await run(-1);
  const start = performance.now();
  for (let i = 0; i < ops; i++) await run(i);
  return (performance.now() - start) / ops;
}

export async function dataPlaneCosts(
  options: { creates?: number; appends?: number; queries?: number; rounds?: number } = {},
): Promise<DataPlaneResult[]> {
  const rounds = options.rounds ?? 5;
  const creates = options.creates ?? 5;
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
    const server = await startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: path.join(dir, 'rask'), RASK_LOG_LEVEL: 'warn' }));
    const db = await lancedb.connect(path.join(dir, 'lance'));
    try {
      const url = (name: string, op: string) => `${server.url}/v1/table/bench%24${name}/${op}?delimiter=%24`;
      const ok = (r: { status: number; body: Buffer }) => {
        if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 200)}`);
      };
      const hundreds = Array.from({ length: appends + 2 }, (_, i) => Buffer.from(tableToIPC(hundred(i - 2), 'stream')));
      const queryBody = Buffer.from(JSON.stringify({ vector: q, k: 10 }));
      // The append and query target of each side, 10,000 rows to start with.
      ok(await post(`${server.url}/v1/namespace/bench/create`, Buffer.from('{}'), true));
      ok(await post(url('c0', 'create'), big));
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
      for (let round = 0; round < rounds; round++) {
        rask.create.push(await per(creates, async (i) => ok(await post(url(`r${round}n${i + 2}`, 'create'), big))));
        rask.append.push(await per(appends, async (i) => ok(await post(url('c0', 'insert'), hundreds[i + 2]))));
        rask.query.push(await per(queries, async () => ok(await post(url('c0', 'query'), queryBody, true))));
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
      });
      return [
        result('CreateTable, 10,000 rows of 128-d', creates, 'create'),
        result('InsertIntoTable, 100 rows', appends, 'append'),
        result('QueryTable, vector k=10', queries, 'query'),
      ];
    } finally {
      floor?.server.close();
      db.close();
      await server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The markdown table `npm run bench` and this script print. */
export function dataPlaneTable(results: readonly DataPlaneResult[]): string {
  const lines = [
    '| workload | ops | rask (HTTP) ms/op | LanceDB in-process ms/op | ratio | HTTP alone ms/op | lowest ratio over HTTP |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const cells = [r.raskMs, r.lanceMs].map((ms) => ms.toFixed(2));
    const bound = (r.lanceMs + r.floorMs) / r.lanceMs;
    lines.push(`| ${r.workload} | ${r.ops} | ${cells.join(' | ')} | ${(r.raskMs / r.lanceMs).toFixed(2)}× | ${r.floorMs.toFixed(2)} | ${bound.toFixed(2)}× |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(dataPlaneTable(await dataPlaneCosts()));
}
