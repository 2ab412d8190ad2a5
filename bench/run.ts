/**
 * `npm run bench`: rask's local server driven by LanceDB's official REST client, against LanceDB's
 * in-process directory namespace (`connectNamespace('dir')`) doing the same work in the same run.
 * The peer has no network hop, no registry and no JSON, so the ratio is the price of a catalog
 * that arbitrates over HTTP; it is reported per workload rather than hidden in one number.
 *
 * Then: the S3 request table of the metadata operations (the same scenarios and budgets as
 * test/catalog/s3-request-budget.test.ts, through the metadata Lambda's composition over the S3
 * fake), the ListTables page cost at 100 and 10,000 tables (bench/listing.ts) and the
 * server-side data operations against LanceDB in-process (bench/data-plane.ts).
 *
 *   npm run bench -- [--n 200] [--tables 20] [--rows 1000] [--rounds 3] [--quick]   (--quick: catalog ratios only)
 */
import * as lancedb from '@lancedb/lancedb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';
import { measureMetadataOperations, requestTable } from '../test/support/request-budget.js';
import { dataPlaneCosts, dataPlaneTable } from './data-plane.js';
import { listingCosts } from './listing.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '200' },
    tables: { type: 'string', default: '20' },
    rows: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    quick: { type: 'boolean', default: false },
  },
});
const N = Number(values.n);
const TABLES = Number(values.tables);
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);

interface Result {
  workload: string;
  ops: number;
  ms: number;
}

async function time(workload: string, ops: number, run: () => Promise<void>): Promise<Result> {
  const start = performance.now();
  await run();
  return { workload, ops, ms: performance.now() - start };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function rows(n: number, offset = 0) {
  return Array.from({ length: n }, (_, i) => ({
    id: offset + i,
    name: `row ${offset + i}`,
    vector: Array.from({ length: 16 }, (_, d) => Math.sin(offset + i + d)),
  }));
}

async function workloads(db: lancedb.Connection, root: string): Promise<Result[]> {
  const out: Result[] = [];
  out.push(await time('createNamespace', N, async () => {
    await db.createNamespace([root]);
    for (let i = 0; i < N - 1; i++) await db.createNamespace([root, `ns${String(i).padStart(5, '0')}`]);
  }));
  out.push(await time('describeNamespace', N, async () => {
    for (let i = 0; i < N; i++) await db.describeNamespace([root, `ns${String(i % (N - 1)).padStart(5, '0')}`]);
  }));
  out.push(await time(`listNamespaces (${N - 1} children, pages of 50)`, 20, async () => {
    for (let r = 0; r < 20; r++) {
      let token: string | undefined;
      let seen = 0;
      do {
        const page = await db.listNamespaces([root], { limit: 50, ...(token ? { pageToken: token } : {}) });
        seen += page.namespaces.length;
        token = page.pageToken ?? undefined;
      } while (token);
      if (seen !== N - 1) throw new Error(`listed ${seen} of ${N - 1}`);
    }
  }));
  out.push(await time(`createTable (${ROWS} rows, 16-d vectors)`, TABLES, async () => {
    for (let i = 0; i < TABLES; i++) await db.createTable(`t${i}`, rows(ROWS), [root]);
  }));
  out.push(await time(`listTables (${TABLES} tables)`, 100, async () => {
    for (let r = 0; r < 100; r++) {
      const page = await db.tableNames([root], { limit: 1000 });
      if (page.length !== TABLES) throw new Error(`listed ${page.length} of ${TABLES} tables`);
    }
  }));
  out.push(await time('openTable + countRows', TABLES * 5, async () => {
    for (let r = 0; r < 5; r++) {
      for (let i = 0; i < TABLES; i++) {
        const t = await db.openTable(`t${i}`, [root]);
        if ((await t.countRows()) !== ROWS) throw new Error('wrong count');
      }
    }
  }));
  out.push(await time('add 100 rows (a commit each)', TABLES, async () => {
    for (let i = 0; i < TABLES; i++) await (await db.openTable(`t${i}`, [root])).add(rows(100, ROWS));
  }));
  out.push(await time('vector search k=10', TABLES * 5, async () => {
    for (let r = 0; r < 5; r++) {
      for (let i = 0; i < TABLES; i++) {
        const t = await db.openTable(`t${i}`, [root]);
        const hits = await t.search(rows(1)[0].vector).limit(10).toArray();
        if (hits.length !== 10) throw new Error('wrong hits');
      }
    }
  }));
  return out;
}

async function main() {
  const dir = await mkdtemp(path.join(tmpdir(), 'rask-bench-'));
  try {
    const server = await startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: path.join(dir, 'rask'), RASK_LOG_LEVEL: 'warn' }));
    const raskDb = await lancedb.connectNamespace('rest', { uri: server.url });
    const peerDb = await lancedb.connectNamespace('dir', { root: path.join(dir, 'dir') });
    // Both sides share this process (the client's JavaScript, LanceDB's native code), so each
    // first runs every workload once untimed in a namespace of its own: neither is timed while
    // the JIT is still compiling code the other then finds warm. Then the sides alternate for
    // ROUNDS rounds, each in a fresh namespace, and each figure is the median of its rounds:
    // a burst of load on the shared machine lands on one round of one side, not on the answer.
    await workloads(raskDb, 'warmup');
    await workloads(peerDb, 'warmup');
    const rask: Result[][] = [];
    const peer: Result[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rask.push(await workloads(raskDb, `bench${round}`));
      peer.push(await workloads(peerDb, `bench${round}`));
    }
    await server.close();

    console.log(`\nrask (REST over loopback) vs LanceDB dir namespace (in-process); N=${N}, tables=${TABLES}, rows=${ROWS}, median of ${ROUNDS} alternating rounds\n`);
    console.log('| workload | ops | rask ms/op | dir ms/op | rask / dir |');
    console.log('|---|---|---|---|---|');
    rask[0].forEach((r, i) => {
      const a = median(rask.map((round) => round[i].ms / round[i].ops));
      const b = median(peer.map((round) => round[i].ms / round[i].ops));
      console.log(`| ${r.workload} | ${r.ops} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(a / b).toFixed(2)}× |`);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (values.quick) return;

  const budget = await measureMetadataOperations();
  budget.restore();
  console.log('\nS3 requests per metadata operation (metadata Lambda composition over the S3 fake; ✗ = over budget)\n');
  console.log(requestTable(budget.results));

  const [small, first, last] = await listingCosts();
  console.log('\nListTables page cost on the filesystem store (limit 100, over HTTP)\n');
  console.log('| workload | ms/page |\n|---|---|');
  for (const c of [small, first, last]) console.log(`| ${c.workload} | ${c.ms.toFixed(2)} |`);
  console.log(`\npage 100 / page 1 at 10,000 tables: ${(last.ms / first.ms).toFixed(2)}; page 100 at 10,000 / page 1 at 100: ${(last.ms / small.ms).toFixed(2)}`);

  console.log('\nServer-side data operations over HTTP vs LanceDB in-process (10,000 rows of 128-d)\n');
  console.log(dataPlaneTable(await dataPlaneCosts()));
}

await main();
