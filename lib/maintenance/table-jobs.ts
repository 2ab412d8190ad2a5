/**
 * The runners of the jobs the scheduled sweep and index build queue (lib/maintenance/fan-out.ts):
 * one table each, exactly the work the pass does for that table in-process. Composition roots
 * add them to the data runners (functions/maintenance-jobs.ts, lib/app/server.ts); lib/jobs does
 * not know them, so the job system stays below maintenance.
 *
 * A job's output (DescribeTransaction, `rask.*`) carries the table's counters and its whole
 * report item as JSON; a job that changed the table also writes a report under `reports/<pass>/`
 * and announces it, as a pass run does.
 */
import type { CatalogServices } from '../catalog/services.js';
import { fmtId } from '../catalog/ids.js';
import { InvalidInputError, ServiceUnavailableError, TableNotFoundError } from '../errors.js';
import type { JobRecord } from '../ports/job-record.js';
import type { JobRunner } from '../jobs/runner.js';
import type { JobRunners } from '../jobs/runner.js';
import { withCommitSink } from '../events/commits.js';
import { announce } from './announce.js';
import { INDEX_TABLE_JOB, SWEEP_TABLE_JOB, type FanOutPass, type TableJobParams } from './fan-out.js';
import { buildTable, indexCounters, loadIndexData, type IndexData, type IndexFinding } from './index-builder.js';
import { finishReport, type PassOptions } from './pass.js';
import { writeReport } from './reports.js';
import { CUTOFF_SAFETY_MS, sweepTable, type SweepData, type SweepItem } from './sweep.js';
import { forEachTable, type TableUnit } from './walker.js';

/** Runs `work` on the job's table, if it is still the table the job was queued for. */
async function onJobTable<T>(services: CatalogServices, job: JobRecord, options: PassOptions, work: (unit: TableUnit) => Promise<T>): Promise<T> {
  const table = job.table;
  if (!table) throw new InvalidInputError(`job ${job.id} names no table`);
  let outcome: { value: T } | { error: unknown } | undefined;
  const walk = await forEachTable(services, { ...options, scope: { table: table.id } }, async (unit) => {
    if (unit.record.uid !== table.uid) {
      outcome = { error: new TableNotFoundError(`table ${fmtId(table.id)} was dropped and re-created after this job was queued; the job belonged to the earlier table`) };
      return;
    }
    try {
      // The job's report names the versions it committed (`version_before` → `version_after`,
      // announce.ts): the worker's own event per commit (lib/jobs/commit-events.ts) would be a second.
      outcome = { value: await withCommitSink(() => undefined, () => work(unit)) };
    } catch (error) {
      outcome = { error };
    }
  });
  if (outcome && 'error' in outcome) throw outcome.error;
  if (outcome) return outcome.value;
  // Nothing visited: an unreadable record or warehouse may come back; a missing table will not.
  if (walk.problems.length > 0) throw new ServiceUnavailableError(walk.problems.join('; '));
  throw new TableNotFoundError(`table ${fmtId(table.id)} does not exist any more`);
}

const optionsOf = (job: JobRecord): PassOptions => {
  const params = job.params as TableJobParams;
  return params.overrides ? { overrides: params.overrides } : {};
};

/** A one-table report for a job that changed (or found trouble with) its table, written and announced like a pass run's. */
async function reportChange(services: CatalogServices, pass: FanOutPass, job: JobRecord, startedAt: string, item: Readonly<Record<string, unknown>>, summary: Record<string, number>): Promise<string> {
  const report = finishReport(services, { pass, startedAt, complete: true, summary, items: [{ ...item, transaction_id: job.id }], problems: [] });
  const key = await writeReport(services.registry, report, true);
  await announce(services, report, key);
  return key;
}

const str = (v: unknown): string | undefined => (v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v));

function output(fields: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) {
    const s = str(v);
    if (s !== undefined) out[k] = s;
  }
  return out;
}

export function sweepTableRunner(data?: SweepData, safetyMs = CUTOFF_SAFETY_MS): JobRunner {
  return async (job, { services, signal }) => {
    const startedAt = services.now().toISOString();
    const calls = data ?? (await import('../adapters/lance/maintenance.js'));
    signal.throwIfAborted();
    const { item, material } = await onJobTable(services, job, optionsOf(job), (unit) => sweepTable(unit, optionsOf(job), calls, () => services.now(), safetyMs));
    const counters = {
      fragments_before: item.fragments_before ?? 0,
      fragments_after: item.fragments_after ?? 0,
      versions_removed: item.versions_removed ?? 0,
      bytes_removed: item.bytes_removed ?? 0,
    };
    const report = material ? await reportChange(services, 'sweep', job, startedAt, item, { tables_swept: 1, ...counters }) : undefined;
    return output({ ...(item.skipped ? { skipped: item.skipped, reason: item.reason } : counters), material: String(material), report, item: item satisfies SweepItem });
  };
}

export function indexTableRunner(data?: IndexData): JobRunner {
  return async (job, { services, signal }) => {
    const startedAt = services.now().toISOString();
    const calls = data ?? (await loadIndexData());
    signal.throwIfAborted();
    const { item, material } = await onJobTable(services, job, optionsOf(job), (unit) => buildTable(unit, optionsOf(job), calls));
    const counters = indexCounters((item as { indices?: IndexFinding[] }).indices ?? []);
    // Like the pass: a run that found trouble writes its report even when it changed nothing.
    const loud = counters.build_failures > 0 || counters.indices_unknown > 0;
    const report = material || loud ? await reportChange(services, 'index', job, startedAt, item, counters) : undefined;
    return output({ ...counters, material: String(material), report, item });
  };
}

/** The maintenance job types and their runners, for a worker's runner map. */
export const maintenanceRunners: JobRunners = {
  [SWEEP_TABLE_JOB]: sweepTableRunner(),
  [INDEX_TABLE_JOB]: indexTableRunner(),
};
