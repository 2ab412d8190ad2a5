/**
 * Fan-out (lib/maintenance/fan-out.ts): the scheduled sweep and index build queue one job per
 * table that needs work, once (a second pass while they are pending queues nothing, two passes
 * racing queue each table once); the jobs worker runs them on the real datasets, each exactly
 * once with concurrent workers, and their results show in DescribeTransaction and the reports.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { datasetState } from '../../lib/adapters/lance/maintenance.js';
import { jobContext } from '../../lib/queue/context.js';
import { describeJob } from '../../lib/queue/jobs.js';
import { DEFAULT_TIER_LIMITS } from '../../lib/queue/tiers.js';
import type { JobRecord } from '../../lib/ports/job-record.js';
import { runJobsOnce } from '../../lib/jobs/worker.js';
import type { JobRunner } from '../../lib/jobs/runner.js';
import type { JobRunners } from '../../lib/jobs/runner.js';
import { IN_FLIGHT_MS, pendingKey } from '../../lib/maintenance/fan-out.js';
import { indexBuild } from '../../lib/maintenance/index-builder.js';
import { setPolicy } from '../support/policy.js';
import { REPORTS_PREFIX } from '../../lib/maintenance/reports.js';
import { sweep } from '../../lib/maintenance/sweep.js';
import { maintenanceRunners } from '../../lib/maintenance/table-jobs.js';
import { keys } from '../../lib/registry/keys.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { estate, tableWithAppends, type Estate } from './fixtures.js';

let current: Estate | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const quiet = () => undefined;
const TABLES = [['a', 't1'], ['a', 't2'], ['b', 't3']] as const;

async function liveJobs(e: Estate): Promise<JobRecord[]> {
  return (await jobContext(e.services).queue.listLive({ limit: 1000 })).jobs.map((j) => j.value);
}

async function storedReports(e: Estate, pass: string) {
  const page = await e.registryStore.list({ prefix: `${REPORTS_PREFIX}${pass}/` });
  return Promise.all(page.objects.map(async (o) => JSON.parse((await e.registryStore.get(o.key))!.body.toString('utf8'))));
}

/** The given runners, counting how often each job id is run. */
function counting(runners: JobRunners, runs: Map<string, number>): JobRunners {
  const wrap = (r: JobRunner): JobRunner => async (job, ctx) => {
    runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
    return r(job, ctx);
  };
  return Object.fromEntries(Object.entries(runners).map(([k, r]) => [k, wrap(r)]));
}

describe('the scheduled sweep fans out as jobs', () => {
  it('queues one job per table once; the worker runs them; results show in DescribeTransaction and the reports', async () => {
    const e = (current = await estate('fs'));
    const locations: string[] = [];
    for (const id of TABLES) locations.push((await tableWithAppends(e.services, id, 5)).location);
    // A declared-only table needs no job: it is reported with its reason instead.
    await tableWithAppends(e.services, ['b', 'empty'], 0);

    const first = await sweep(e.services, { fanOut: true, overrides: { olderThanDays: 0 } });
    expect(first.problems).toEqual([]);
    expect(first.summary).toMatchObject({ tables_visited: 4, tables_skipped: 1, jobs_queued: 3, jobs_already_queued: 0 });
    expect(first.items.find((i) => i.skipped)).toMatchObject({ table: ['b', 'empty'], skipped: 'declared-only' });
    const queued = first.items.filter((i) => i.job === 'queued');
    expect(queued.map((i) => (i.table as string[]).join('.')).sort()).toEqual(TABLES.map((t) => t.join('.')).sort());
    // Nothing was rewritten by the pass itself.
    for (const l of locations) expect((await datasetState(l)).fragments).toBe(5);
    // The report the pass stored says what it queued.
    const [stored] = await storedReports(e, 'sweep');
    expect(stored).toMatchObject({ material: true, summary: { jobs_queued: 3 } });

    // A second pass while the jobs are pending queues nothing and names the pending jobs.
    const second = await sweep(e.services, { fanOut: true, overrides: { olderThanDays: 0 } });
    expect(second.summary).toMatchObject({ jobs_queued: 0, jobs_already_queued: 3 });
    expect(second.items.filter((i) => i.job).map((i) => i.transaction_id).sort()).toEqual(queued.map((i) => i.transaction_id).sort());
    const jobs = await liveJobs(e);
    expect(jobs.map((j) => [j.type, j.status, j.params])).toEqual(Array(3).fill(['maintenance_sweep', 'Queued', { overrides: { olderThanDays: 0 } }]));
    // Each job carries its estimate, the bytes of its five below-target fragments (docs/jobs.md, "Routing").
    const onDisk = (l: string) => readdirSync(path.join(l, 'data')).reduce((n, f) => n + statSync(path.join(l, 'data', f)).size, 0);
    const expected = new Map(TABLES.map((id, i) => [id.join('.'), onDisk(locations[i])]));
    for (const j of jobs) {
      expect(j.tierReason).toBe(`estimate: ${expected.get(j.table!.id.join('.'))} bytes ≤ ${DEFAULT_TIER_LIMITS.sweepBytes} (maintenance_sweep)`);
    }

    const runs = new Map<string, number>();
    const report = await runJobsOnce(e.services, { owner: 'w', budgetMs: 120_000, runners: counting(maintenanceRunners, runs), log: quiet });
    expect(report.ran.map((r) => r.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect([...runs.values()]).toEqual([1, 1, 1]);

    for (const [i, id] of TABLES.entries()) {
      const tx = queued.find((q) => (q.table as string[]).join('.') === id.join('.'))!.transaction_id as string;
      const view = await describeJob(jobContext(e.services), tx);
      const after = await datasetState(locations[i]);
      expect(after.fragments).toBeLessThanOrEqual(2);
      expect(after.rows).toBe(50);
      expect(view.status).toBe('Succeeded');
      expect(view.properties).toMatchObject({
        'rask.kind': 'maintenance_sweep',
        'rask.pass': 'sweep',
        'rask.table': JSON.stringify(id),
        'rask.fragments_before': '5',
        'rask.fragments_after': String(after.fragments),
        'rask.material': 'true',
      });
      expect(Number(view.properties['rask.versions_removed'])).toBeGreaterThan(0);
      expect(JSON.parse(view.properties['rask.item'])).toMatchObject({ table: id, rows_before: 50, rows_after: 50 });
    }
    // Each job that changed its table wrote a one-table report naming its transaction.
    const perTable = (await storedReports(e, 'sweep')).filter((r) => r.summary.tables_swept === 1);
    expect(perTable.map((r) => r.items[0].transaction_id).sort()).toEqual(queued.map((q) => q.transaction_id).sort());

    // Once the jobs are done, the next pass queues new ones.
    const third = await sweep(e.services, { fanOut: true });
    expect(third.summary).toMatchObject({ jobs_queued: 3, jobs_already_queued: 0 });
  });

  it('queues each table once when two passes race, and two workers run each job once', async () => {
    const e = (current = await estate('fs'));
    for (const id of TABLES) await tableWithAppends(e.services, id, 3);
    const [p1, p2] = await Promise.all([sweep(e.services, { fanOut: true }), sweep(e.services, { fanOut: true })]);
    expect(p1.summary.jobs_queued + p2.summary.jobs_queued).toBe(3);
    expect(p1.summary.jobs_already_queued + p2.summary.jobs_already_queued).toBe(3);
    expect(await liveJobs(e)).toHaveLength(3);

    const runs = new Map<string, number>();
    const runners = counting(maintenanceRunners, runs);
    const reports = await Promise.all(['w1', 'w2'].map((owner) => runJobsOnce(e.services, { owner, budgetMs: 120_000, runners, log: quiet })));
    const ran = reports.flatMap((r) => r.ran);
    expect(ran.map((r) => r.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(new Set(ran.map((r) => r.id)).size).toBe(3);
    expect([...runs.values()]).toEqual([1, 1, 1]);
  });

  it('takes a marker whose job is not there yet for a job being queued, until IN_FLIGHT_MS has passed', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const e = (current = await estate('fs', () => new Date(now)));
    await tableWithAppends(e.services, ['a', 't1'], 2);
    const table = (await e.services.registry.read<TableRecord>(keys.table('default', ['a', 't1'])))!.value;
    // What a pass that crashed between writing the marker and queuing the job leaves.
    const ghost = now.toString(16).padStart(12, '0') + 'b'.repeat(20);
    await e.services.registry.create(pendingKey('default', 'sweep', table.uid), { kind: 'pending-maintenance', pass: 'sweep', uid: table.uid, job: ghost, at: new Date(now).toISOString() });
    expect((await sweep(e.services, { fanOut: true })).items[0]).toMatchObject({ job: 'already-queued', transaction_id: ghost });
    now += IN_FLIGHT_MS + 1;
    const later = await sweep(e.services, { fanOut: true });
    expect(later.items[0]).toMatchObject({ job: 'queued' });
    expect((await liveJobs(e)).map((j) => j.id)).toEqual([later.items[0].transaction_id]);
  });

  it('a job whose table was dropped and re-created fails for good, without touching the new table', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 't1'], 2);
    const [item] = (await sweep(e.services, { fanOut: true })).items;
    const key = keys.table('default', ['a', 't1']);
    const found = (await e.services.registry.read<TableRecord>(key))!;
    await e.services.registry.replace(key, { ...found.value, uid: 'another-table' }, found.etag);
    const report = await runJobsOnce(e.services, { owner: 'w', budgetMs: 60_000, runners: maintenanceRunners, log: quiet });
    expect(report.ran).toMatchObject([{ id: item.transaction_id, outcome: 'failed', error: expect.stringMatching(/dropped and re-created/) }]);
  });
});

describe('the scheduled index build fans out as jobs', () => {
  it('queues one job per table; the worker builds the policy\'s indices and reports health', async () => {
    const e = (current = await estate('fs'));
    for (const id of TABLES) await tableWithAppends(e.services, id, 2, 50);
    await setPolicy(e.services, { level: 'project' }, { policy: { indices: [{ name: 'id_idx', column: 'id', type: 'BTREE' }] } });
    const pass = await indexBuild(e.services, { fanOut: true });
    expect(pass.summary).toMatchObject({ tables_visited: 3, jobs_queued: 3 });
    expect((await indexBuild(e.services, { fanOut: true })).summary).toMatchObject({ jobs_queued: 0, jobs_already_queued: 3 });

    const report = await runJobsOnce(e.services, { owner: 'w', budgetMs: 120_000, runners: maintenanceRunners, log: quiet });
    expect(report.ran.map((r) => [r.type, r.outcome])).toEqual(Array(3).fill(['maintenance_index', 'succeeded']));
    for (const item of pass.items) {
      const view = await describeJob(jobContext(e.services), item.transaction_id as string);
      expect(view.properties).toMatchObject({ 'rask.kind': 'maintenance_index', 'rask.indices_built': '1', 'rask.build_failures': '0', 'rask.material': 'true' });
    }
    const again = await indexBuild(e.services, {});
    expect(again.summary).toMatchObject({ indices_healthy: 3, indices_built: 0 });
  });
});
