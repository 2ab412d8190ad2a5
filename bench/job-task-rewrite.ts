/**
 * Compaction and backfill MB/s through the child-process task runner (issue #34; docs/benchmarks.md,
 * "Compaction and backfill through the task runner"): the two byte-bound jobs, measured as the
 * task tier runs them, to set the routing byte budgets (lib/queue/tiers.ts, DEFAULT_TIER_LIMITS).
 *
 *   nice -n 10 npx tsx bench/job-task-rewrite.ts sweep [fragments=200] [rows_per_fragment=2000] [dim=128]
 *   nice -n 10 npx tsx bench/job-task-rewrite.ts backfill [rows=400000] [dim=128] [rows_per_fragment=50000]
 *
 * - `sweep`: one table of `fragments` appends of `rows_per_fragment` rows (`id` int64, `vec`
 *   dim-d float32), every fragment far below the policy's target (1,048,576 rows); the
 *   `maintenance_sweep` job is queued by the door the console uses (POST
 *   /v1/table/{id}/maintenance/sweep) and compacts them all. Bytes in: the data files before
 *   (all below target); bytes written: the data files the sweep added.
 * - `backfill`: one table of `rows` rows in fragments of `rows_per_fragment`; a computed column
 *   `vec2` = `vec` is added (AlterTableAddColumns) and filled by AlterTableBackfillColumns' job,
 *   column-only, one slice per fragment. Bytes in: what the fill reads, the key and the binding's
 *   input (rows × (8 + 4·dim)); bytes written: the job's `rask.bytes_written`.
 *
 * No door passes a byte estimate yet, so both jobs are queued on the function tier; the bench
 * moves the queued record to the task tier (one compare-and-swap, as a routing decision would)
 * and starts its task itself with bench/task-child-timing.ts (time(1) around the server's task
 * command). The server's job loop is off, so nothing else claims the job. Reported: bytes in,
 * bytes written, the child's wall seconds, the job's own seconds (started_at → finished_at),
 * CPU seconds (user + sys), peak RSS, MB/s over wall and job time, MB per CPU-second, and the
 * load at start and end. The child's own start-up and exit (node, tsx, configuration, the claim
 * walk) is measured by starting it once more for the finished job, which finds nothing to run:
 * `startup_cpu_s`, and MB per CPU-second without it (`MB_per_job_cpu_s`).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LanceDataEngine } from '../lib/adapters/lance/engine.js';
import { createLocalApp } from '../lib/app/local.js';
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';
import { jobContext } from '../lib/queue/context.js';
import { randomVectorsIpc } from '../test/support/random-vectors.js';
import { load, runTimedTask } from './task-child-timing.js';

const mode = process.argv[2];
const arg = (i: number, d: number) => (process.argv[i] === undefined ? d : Number(process.argv[i]));

/** The table's data files (name → bytes). */
function dataFiles(location: string): Map<string, number> {
  const dir = path.join(location.replace(/^file:\/\//, ''), 'data');
  return new Map(readdirSync(dir).map((f) => [f, statSync(path.join(dir, f)).size]));
}

async function main(): Promise<void> {
  if (mode !== 'sweep' && mode !== 'backfill') throw new Error('usage: job-task-rewrite.ts sweep|backfill [...]');
  const sweep = mode === 'sweep';
  const dim = sweep ? arg(5, 128) : arg(4, 128);
  const perFragment = sweep ? arg(4, 2000) : arg(5, 50_000);
  const rows = sweep ? arg(3, 200) * perFragment : arg(3, 400_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rask-rewrite-bench-'));
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
  });
  const server = await startLocalServer(config);
  const post = async (p: string, body: string | Buffer, type = 'application/json') => {
    const res = await fetch(server.url + p, { method: 'POST', body, headers: { 'content-type': type } });
    const text = await res.text();
    if (!res.ok) throw new Error(`${p}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  try {
    console.log(`# ${mode}: ${rows} rows × ${dim}-d float32 in fragments of ${perFragment}; cpus: ${availableParallelism()}; load at start: ${load()}`);
    await post('/v1/namespace/bench/create', '{}');
    // The first fragment through the door (a body holds at most 6 MiB: 1,000 rows when a fragment would not fit).
    const first = Math.min(rows, perFragment * (8 + 4 * dim) > 5e6 ? 1000 : perFragment);
    await post('/v1/table/bench%24t/create', randomVectorsIpc(first, dim), 'application/vnd.apache.arrow.stream');
    const { location } = (await post('/v1/table/bench%24t/describe', '{}')) as { location: string };
    // The rest straight to the table's storage: one append (one fragment) per `perFragment` rows.
    const engine = new LanceDataEngine();
    const t0 = performance.now();
    for (let done = first; done < rows; done += perFragment) await engine.insert(location, randomVectorsIpc(Math.min(perFragment, rows - done), dim, done));
    const before = dataFiles(location);
    const tableBytes = [...before.values()].reduce((a, b) => a + b, 0);
    console.log(`filled in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${before.size} data files, ${(tableBytes / 1e6).toFixed(1)} MB`);

    let id: string;
    if (sweep) {
      id = ((await post('/v1/table/bench%24t/maintenance/sweep', '{}')) as { transaction_id: string }).transaction_id;
    } else {
      await post('/v1/table/bench%24t/add_columns', JSON.stringify({ new_columns: [{ name: 'vec2', computed: 'vec' }] }));
      id = ((await post('/v1/table/bench%24t/backfill_column', JSON.stringify({ column: 'vec2' }))) as { job_id: string }).job_id;
    }
    // No door passes a byte estimate yet: route the queued job to the task tier by hand.
    const own = await createLocalApp(config, { handlers: {} });
    const queue = jobContext(own.services).queue;
    const queued = await queue.read(id);
    if (queued?.value.status !== 'Queued') throw new Error(`job ${id} is not queued: ${JSON.stringify(queued?.value)}`);
    await queue.replace({ ...queued.value, tier: 'task', tierReason: 'bench/job-task-rewrite.ts: routed to the task tier by hand' }, queued.etag);

    const child = await runTimedTask(config, id);
    const after = (await post(`/v1/transaction/${id}/describe`, '{}')) as { status: string; properties: Record<string, string> };
    if (after.status !== 'Succeeded') throw new Error(`the job ended ${after.status}: ${JSON.stringify(after.properties)}\n${child.lines.slice(-30).join('\n')}`);
    const p = after.properties;
    const jobS = (Date.parse(p['rask.finished_at']!) - Date.parse(p['rask.started_at']!)) / 1000;
    const now = dataFiles(location);
    const added = [...now].filter(([f]) => !before.has(f)).reduce((a, [, n]) => a + n, 0);
    const bytesIn = sweep ? tableBytes : rows * (8 + 4 * dim);
    const written = sweep ? added : Number(p['rask.bytes_written']);
    const cpuS = child.userS + child.sysS;
    // The child's start-up and exit without the job: the same command for the finished job, which finds nothing to run.
    const idle = await runTimedTask(config, id);
    const baseS = idle.userS + idle.sysS;
    const mb = bytesIn / 1e6;
    if (sweep) console.log(`sweep: fragments ${p['rask.fragments_before']} → ${p['rask.fragments_after']}`);
    else console.log(`backfill: ${p['rask.write_path']}, key ${p['rask.key']}, ${p['rask.slices']} slices, ${p['rask.updated_rows']} rows`);
    console.log('mode\trows\tdim\tfragments\tMB_in\tMB_written\tchild_wall_s\tjob_s\tcpu_s\tpeak_rss_MiB\tMB_per_s_wall\tMB_per_s_job\tMB_per_cpu_s\tstartup_cpu_s\tMB_per_job_cpu_s\tattempts');
    console.log(
      [
        mode,
        rows,
        dim,
        before.size,
        mb.toFixed(1),
        (written / 1e6).toFixed(1),
        child.wallS.toFixed(1),
        jobS.toFixed(1),
        cpuS.toFixed(1),
        child.peakRssMiB,
        (mb / child.wallS).toFixed(2),
        (mb / jobS).toFixed(2),
        (mb / cpuS).toFixed(2),
        baseS.toFixed(1),
        (mb / Math.max(0.01, cpuS - baseS)).toFixed(2),
        p['rask.attempts'],
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
