/**
 * How long a synchronous vector index build takes through the data engine (the exact call
 * CreateTableIndex makes), to place the API Gateway 29 s limit. Results go in docs/index-builds.md.
 *
 *   npx tsx bench/index-builds.ts [rows,rows,...] [dim] [index_type]
 *   taskset -c 0 npx tsx bench/index-builds.ts 10000,50000     # one CPU, close to a 2 GB Lambda
 *
 * Vectors are uniform random float32 (the worst case for k-means convergence is not what we
 * measure; default parameters are, since that is what a client sends without tuning).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LanceDataEngine } from '../lib/adapters/lance/engine.js';
import { readIndexRequest } from '../lib/data/index-request.js';
import { randomVectorsIpc } from '../test/support/random-vectors.js';

const rowsList = (process.argv[2] ?? '10000,50000,100000').split(',').map(Number);
const dim = Number(process.argv[3] ?? 128);
const indexType = process.argv[4] ?? 'IVF_PQ';

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'rask-index-bench-'));
  const engine = new LanceDataEngine();
  console.log(`# ${indexType}, ${dim}-d float32, default parameters; cpus visible to node: ${availableParallelism()}`);
  console.log('rows\tcreate_s\tindex_s\tindexed_rows');
  try {
    for (const rows of rowsList) {
      const location = path.join(root, `t${rows}.lance`);
      const body = randomVectorsIpc(rows, dim);
      let t0 = performance.now();
      await engine.createTable(location, body);
      const create = (performance.now() - t0) / 1000;
      t0 = performance.now();
      await engine.createIndex(location, readIndexRequest({ column: 'vec', index_type: indexType }));
      const index = (performance.now() - t0) / 1000;
      // Proves the build covered the table (an index that indexed nothing would time as fast).
      const { indexes } = await engine.listIndices(location);
      console.log(`${rows}\t${create.toFixed(2)}\t${index.toFixed(2)}\t${indexes[0]?.num_indexed_rows ?? 0}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
