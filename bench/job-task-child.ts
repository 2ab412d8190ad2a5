/**
 * A task-tier vector index build through the local child-process task runner (#34 item 3;
 * docs/benchmarks.md, "Through the child-process task runner"): the build the task tier runs,
 * measured as the task runs it, not in process.
 *
 *   nice -n 19 npx tsx bench/job-task-child.ts [rows] [dim] [index_type]
 *
 * The local server (its own data directory) holds one table of `rows` random `dim`-d float32
 * vectors; CreateTableIndex over HTTP queues the build (the synchronous limit is set to 100
 * rows) and routes it to the task tier by its estimate (RASK_JOBS_TASK_INDEX_COST_ROWS=1000).
 * The bench then starts the job's task with a ChildTaskRunner of its own, the command the
 * server uses (functions/job-task.ts under tsx) behind `/usr/bin/time -v`, and reports:
 * the child's wall time (spawn to exit), the build time the job record shows (started_at →
 * finished_at), MB/s of vector data over both, and the child's peak RSS. The server's job loop
 * is off (RASK_JOBS_INTERVAL_MS=0), so nothing else claims the job.
 *
 * Every 30 s it also prints the child's CPU seconds and RSS (from /proc) and the load average,
 * so a run stopped before its end still says how far it got (the 4M × 128-d run of 07:38 UTC
 * was stopped by hand after 23 min at load 18–24 with no figure but `ps`'s). Pass
 * `max_minutes` to have the child stop itself at that limit (RASK_JOB_TASK_MAX_MS: the job then ends with its timeout
 * code, as on Fargate).
 *
 *   nice -n 15 npx tsx bench/job-task-child.ts 4000000 128 IVF_PQ [max_minutes]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LanceDataEngine } from '../lib/adapters/lance/engine.js';
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';
import { randomVectorsIpc } from '../test/support/random-vectors.js';
import { load, runTimedTask } from './task-child-timing.js';

const rows = Number(process.argv[2] ?? 1_000_000);
const dim = Number(process.argv[3] ?? 128);
const indexType = process.argv[4] ?? 'IVF_PQ';
const maxMinutes = process.argv[5] === undefined ? undefined : Number(process.argv[5]);
const BATCH = 100_000;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rask-task-bench-'));
  const config = loadLocalConfig({
    RASK_PORT: '0',
    RASK_HOST: '127.0.0.1',
    RASK_DATA_DIR: dataDir,
    RASK_LOG_LEVEL: 'warn',
    RASK_JOBS_INTERVAL_MS: '0',
    RASK_SWEEP_INTERVAL_MS: '0',
    RASK_INDEX_INTERVAL_MS: '0',
    RASK_RECONCILE_INTERVAL_MS: '0',
    RASK_ORPHANS_INTERVAL_MS: '0',
    RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '100',
    RASK_JOBS_TASK_INDEX_COST_ROWS: '1000',
  });
  const server = await startLocalServer(config);
  const post = async (p: string, body: string | Buffer, type = 'application/json') => {
    const res = await fetch(server.url + p, { method: 'POST', body, headers: { 'content-type': type } });
    const text = await res.text();
    if (!res.ok) throw new Error(`${p}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  try {
    console.log(`# ${indexType}, ${rows} × ${dim}-d float32, default parameters; cpus: ${availableParallelism()}; load at start: ${load()}`);
    await post('/v1/namespace/bench/create', '{}');
    await post('/v1/table/bench%24vectors/create', randomVectorsIpc(1000, dim), 'application/vnd.apache.arrow.stream');
    const { location } = (await post('/v1/table/bench%24vectors/describe', '{}')) as { location: string };
    // The rest straight to the table's storage in large batches (a request body holds far less).
    const engine = new LanceDataEngine();
    const t0 = performance.now();
    for (let done = 1000; done < rows; done += BATCH) await engine.insert(location, randomVectorsIpc(Math.min(BATCH, rows - done), dim, done));
    console.log(`filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const queued = (await post('/v1/table/bench%24vectors/create_index', JSON.stringify({ column: 'vec', index_type: indexType, name: 'v' }))) as { transaction_id: string };
    const id = queued.transaction_id;
    const describe = async () => (await post(`/v1/transaction/${id}/describe`, '{}')) as { status: string; properties: Record<string, string> };
    const before = await describe();
    console.log(`queued ${id}: tier ${before.properties['rask.tier']} (${before.properties['rask.tier_reason']})`);
    if (before.properties['rask.tier'] !== 'task') throw new Error('the build was not routed to the task tier');

    // The server's own command (lib/app/server.ts, withLocalTaskTier), measured by time(1).
    const child = await runTimedTask(config, id, maxMinutes);
    const after = await describe();
    if (after.status !== 'Succeeded') throw new Error(`the job ended ${after.status}: ${JSON.stringify(after.properties)}\n${child.lines.slice(-30).join('\n')}`);
    const build = (Date.parse(after.properties['rask.finished_at']!) - Date.parse(after.properties['rask.started_at']!)) / 1000;
    const { indexes } = await engine.listIndices(location);
    const mb = (rows * dim * 4) / 1e6;
    console.log('rows\tdim\tchild_wall_s\tbuild_s\tMB\tMB_per_s_wall\tMB_per_s_build\tpeak_rss_MiB\tuser_s\tsys_s\tindexed_rows\tattempts\tworker');
    console.log(
      [
        rows,
        dim,
        child.wallS.toFixed(1),
        build.toFixed(1),
        mb.toFixed(0),
        (mb / child.wallS).toFixed(2),
        (mb / build).toFixed(2),
        child.peakRssMiB,
        child.userS,
        child.sysS,
        indexes[0]?.num_indexed_rows ?? 0,
        after.properties['rask.attempts'],
        after.properties['rask.worker'],
      ].join('\t'),
    );
    console.log(`child: ${child.stopReason}; load at end: ${load()}`);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
