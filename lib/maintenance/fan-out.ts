/**
 * Fan-out (issue #9 item 6): the scheduled sweep and index build do not rewrite tables
 * themselves; they walk the registry and queue one job per table that needs work
 * (`maintenance_sweep` / `maintenance_index`), which the jobs worker runs (the local loop, the
 * jobs Lambda) with leases, retries and DescribeTransaction like any other job. A slow table
 * then costs one job's time, not the pass's, and several workers share the estate.
 *
 * One pending job per table per pass: a marker record per (pass, table uid) names the job
 * queued for it, written with a conditional create / compare-and-swap. A pass that finds the
 * marker's job still Queued or Running queues nothing; once that job has finished (or vanished)
 * the next pass replaces the marker and queues a new one. Two passes racing for a table: one
 * conditional write wins, the other reports the winner's job. The marker is written before the
 * job, so a pass that meets a marker whose job is not there yet treats it as in flight for
 * IN_FLIGHT_MS (a crash between the two writes costs that long, then the table is queued again).
 */
import { ConcurrentModificationError } from '../errors.js';
import { jobContext } from '../queue/context.js';
import { newJobId } from '../queue/ids.js';
import { enqueue } from '../queue/jobs.js';
import type { JobEstimate, Route } from '../queue/tiers.js';
import { isTerminal } from '../ports/job-record.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { encodeSegment } from '../registry/keys.js';
import type { CatalogServices } from '../catalog/services.js';
import { finishReport, type PassOptions, type PassReport, type PolicyOverrides } from './pass.js';
import { writeReport } from './reports.js';
import { forEachTable, type TableUnit } from './walker.js';

export const SWEEP_TABLE_JOB = 'maintenance_sweep';
export const INDEX_TABLE_JOB = 'maintenance_index';

export type FanOutPass = 'sweep' | 'index';

export const JOB_TYPE: Readonly<Record<FanOutPass, string>> = { sweep: SWEEP_TABLE_JOB, index: INDEX_TABLE_JOB };

/** How long a marker whose job cannot be read yet is taken for a job being queued right now. */
export const IN_FLIGHT_MS = 60_000;

interface PendingRecord {
  readonly kind: 'pending-maintenance';
  readonly pass: FanOutPass;
  readonly uid: string;
  readonly job: string;
  readonly at: string;
  /**
   * Set once a job of this table ran on the task tier (escalated after a lapsed function
   * attempt, or routed there): the table's next jobs start there too (docs/jobs.md, "Routing").
   */
  readonly tier?: 'task';
  readonly tierReason?: string;
}

export const pendingKey = (project: string, pass: FanOutPass, uid: string) =>
  `p/${encodeSegment(project)}/maint/pending/${pass}/${encodeSegment(uid)}`;

export type FanOutItem = {
  readonly project: string;
  readonly table: readonly string[];
  readonly job: 'queued' | 'already-queued';
  readonly transaction_id: string;
};

/** The runner's input: this run's one-off policy overrides, if any. */
export interface TableJobParams {
  readonly overrides?: PolicyOverrides;
}

/** Queues `pass`'s job for the unit's table unless one is already pending. */
export async function queueTableJob(unit: TableUnit, pass: FanOutPass, params: TableJobParams, estimate?: JobEstimate): Promise<FanOutItem> {
  const ctx = jobContext(unit.services);
  const registry = unit.services.registry;
  const key = pendingKey(unit.project, pass, unit.record.uid);
  const base = { project: unit.project, table: unit.id };
  for (let attempt = 0; attempt < 5; attempt++) {
    const marker = await registry.read<PendingRecord>(key);
    const now = ctx.now();
    let sticky: Route | undefined;
    if (marker) {
      const job = await ctx.queue.read(marker.value.job);
      const pending = job ? !isTerminal(job.value.status) : now.getTime() - Date.parse(marker.value.at) < IN_FLIGHT_MS;
      if (pending) return { ...base, job: 'already-queued', transaction_id: marker.value.job };
      // A table whose last job went to the task tier stays there: no function attempt is spent finding out again.
      if (job?.value.tier === 'task') sticky = { tier: 'task', reason: `table on the task tier since job ${job.value.id} (${job.value.tierReason ?? 'task tier'})` };
      else if (marker.value.tier === 'task') sticky = { tier: 'task', reason: marker.value.tierReason ?? 'table on the task tier' };
    }
    const id = newJobId(now);
    const record: PendingRecord = {
      kind: 'pending-maintenance',
      pass,
      uid: unit.record.uid,
      job: id,
      at: now.toISOString(),
      ...(sticky ? { tier: 'task', tierReason: sticky.reason } : {}),
    };
    try {
      if (marker) await registry.replace(key, record, marker.etag);
      else await registry.create(key, record);
    } catch (err) {
      // Another pass took the table meanwhile: look again, and report its job.
      if (err instanceof ConditionFailedError) continue;
      throw err;
    }
    await enqueue(ctx, {
      id,
      type: JOB_TYPE[pass],
      table: { id: unit.record.id, uid: unit.record.uid },
      params: { ...params },
      summary: { pass, queued_by: `maintenance-${pass}` },
      // A table already on the task tier stays there; otherwise the estimate decides (lib/queue/tiers.ts).
      ...(sticky ? { route: sticky } : {}),
      ...(estimate ? { estimate } : {}),
    });
    return { ...base, job: 'queued', transaction_id: id };
  }
  throw new ConcurrentModificationError(`queuing the ${pass} job of table ${JSON.stringify(unit.id)} kept losing races`);
}

/** A table the pass leaves alone (the report's item), or what its job is estimated to cost. */
export type FanOutCheck = { readonly skip: Readonly<Record<string, unknown>> } | { readonly estimate?: JobEstimate };

/**
 * The scheduled pass in fan-out mode: walk every table in scope (with the pass's cursor and
 * deadline), report the tables `precheck` rules out (with its reason), queue a job for the
 * others. The report says what it queued; what each job did is in its DescribeTransaction
 * output and, when it changed something, in its own report under `reports/<pass>/`.
 */
export async function fanOutPass(
  services: CatalogServices,
  options: PassOptions,
  pass: FanOutPass,
  precheck: (unit: TableUnit) => Promise<FanOutCheck>,
): Promise<PassReport> {
  const startedAt = services.now().toISOString();
  const items: Readonly<Record<string, unknown>>[] = [];
  const params: TableJobParams = options.overrides ? { overrides: options.overrides } : {};
  const walk = await forEachTable(services, options, async (unit) => {
    const checked = await precheck(unit);
    items.push('skip' in checked ? checked.skip : await queueTableJob(unit, pass, params, checked.estimate));
  });
  const count = (job: FanOutItem['job']) => items.filter((i) => i.job === job).length;
  const report = finishReport(services, {
    pass,
    startedAt,
    complete: walk.complete,
    cursor: walk.cursor,
    summary: {
      tables_visited: walk.visited,
      tables_skipped: items.filter((i) => i.skipped).length,
      jobs_queued: count('queued'),
      jobs_already_queued: count('already-queued'),
      problems: walk.problems.length,
    },
    items,
    problems: walk.problems,
  });
  const material = report.summary.jobs_queued > 0;
  const reportKey = await writeReport(services.registry, report, material || walk.problems.length > 0);
  return { ...report, material, reportKey };
}
