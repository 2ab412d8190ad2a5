/**
 * The index builder (issue #9 item 3, docs/rules.md rule 14): for each table, the effective
 * policy's desired indices against the dataset's own.
 *
 * - A desired index that is missing is built once the table has `min_rows` rows: inside the
 *   pass when it is cheap (scalar and FTS indices, small vector ones), otherwise queued as a
 *   `create_index` job (lib/jobs: lease, heartbeat, not-before, bounded attempts, visible through
 *   DescribeTransaction). A build already queued for the same table and name is not queued again.
 *   It indexes whatever rows the dataset has, whichever engine wrote them.
 * - An index whose unindexed rows pass `fold_threshold` of its rows is folded. The Node SDK's
 *   only fold is inside its compaction call; when the policy disables compaction, a scalar or
 *   FTS index the policy declares is rebuilt over every row instead, and others are reported
 *   as blocked.
 * - Health is reported for every index: an index whose statistics cannot be read is UNKNOWN,
 *   never healthy.
 * - An existing index with the desired name but another column or type is reported, not
 *   replaced: dropping a user's index is not maintenance's call.
 *
 * Tables the sweep skips (mid-move, mid-purge, declared-only, trashed) are skipped here too.
 */
import { announce } from './announce.js';
import { indexFanOut } from './fan-out-passes.js';
import { DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS } from '../config.js';
import { jobContext } from '../queue/context.js';
import { enqueue } from '../queue/jobs.js';
import { CREATE_INDEX } from '../catalog/data/indices.js';
import type { DatasetState } from '../adapters/lance/maintenance.js';
import type { IndexRequest } from '../data/index-request.js';
import { finishReport, type MaintenancePass, type PassOptions } from './pass.js';
import { desiredFields, desiredRequest } from './desired-index.js';
import type { DesiredIndex } from './policy.js';
import { writeReport } from './reports.js';
import { skipReason } from './table-checks.js';
import { forEachTable, type TableUnit } from './walker.js';

export type IndexHealth = 'HEALTHY' | 'NEEDS_FOLD' | 'UNKNOWN';

export interface IndexFinding {
  readonly name: string;
  readonly type?: string;
  readonly columns?: readonly string[];
  readonly health?: IndexHealth;
  readonly indexed_rows?: number;
  readonly unindexed_rows?: number;
  readonly action:
    | 'none'
    | 'built'
    | 'would-build'
    | 'queued'
    | 'already-queued'
    | 'waiting-for-rows'
    | 'folded'
    | 'would-fold'
    | 'fold-blocked'
    | 'mismatch'
    | 'build-failed';
  readonly reason?: string;
  readonly transaction_id?: string;
}

export interface IndexData {
  datasetState(location: string): Promise<DatasetState>;
  compactAndFold(location: string): Promise<unknown>;
  rebuildIndex(location: string, request: IndexRequest): Promise<unknown>;
  createIndex(location: string, request: IndexRequest): Promise<unknown>;
}

const isVector = (type: string) => /^(IVF|HNSW)/.test(type);
/** What LanceDB reports vs what a policy says (BTree vs BTREE, Inverted vs FTS). */
const sameType = (reported: string | undefined, desired: string) =>
  reported === undefined || reported.replace(/_/g, '').toUpperCase() === desired.replace(/_/g, '').toUpperCase();

async function queuedBuilds(unit: TableUnit): Promise<Map<string, string>> {
  const ctx = jobContext(unit.services);
  const out = new Map<string, string>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await ctx.queue.listLive({ startAfter, limit: 1000 });
    for (const { value: job } of page.jobs) {
      if (job.type !== CREATE_INDEX || job.table?.uid !== unit.record.uid) continue;
      if (job.status === 'Queued' || job.status === 'Running') out.set(String(job.params.name), job.id);
    }
    if (!page.next) return out;
    startAfter = page.next;
  }
}

/** One table's index work; also what a `maintenance_index` job runs (lib/maintenance/table-jobs.ts). */
export async function buildTable(unit: TableUnit, options: PassOptions, data: IndexData) {
  const base = { project: unit.project, table: unit.id };
  const skip = await skipReason(unit);
  if (skip) return { item: { ...base, ...skip }, material: false };
  const effective = await unit.policy();
  const { policy } = effective;
  const state = await data.datasetState(unit.location);
  const findings: IndexFinding[] = [];
  let material = false;

  // Health of what exists, and folds past the threshold.
  let foldNeeded = false;
  for (const index of state.indices) {
    const known = index.status === 'done' && index.num_indexed_rows !== undefined && index.num_unindexed_rows !== undefined;
    if (!known) {
      findings.push({ name: index.index_name, type: index.index_type, columns: index.columns, health: 'UNKNOWN', action: 'none', reason: 'its statistics could not be read' });
      continue;
    }
    const total = index.num_indexed_rows! + index.num_unindexed_rows!;
    const share = total === 0 ? 0 : index.num_unindexed_rows! / total;
    const needsFold = index.num_unindexed_rows! > 0 && share > policy.fold_threshold;
    foldNeeded ||= needsFold;
    findings.push({
      name: index.index_name,
      type: index.index_type,
      columns: index.columns,
      health: needsFold ? 'NEEDS_FOLD' : 'HEALTHY',
      indexed_rows: index.num_indexed_rows,
      unindexed_rows: index.num_unindexed_rows,
      action: 'none',
    });
  }
  if (foldNeeded) {
    // The SDK folds inside its compaction call; without compaction, an index the policy declares
    // (so its definition is known) that is scalar or FTS is rebuilt over every row instead.
    const viaCompaction = policy.optimize_indices_enabled && policy.compact_enabled;
    if (viaCompaction && !options.dryRun) {
      await data.compactAndFold(unit.location);
      material = true;
    }
    for (let i = 0; i < findings.length; i++) {
      const f = findings[i];
      if (f.health !== 'NEEDS_FOLD') continue;
      const desired = policy.indices.find((d) => d.name === f.name);
      let next: Partial<IndexFinding>;
      if (!policy.optimize_indices_enabled) next = { action: 'fold-blocked', reason: 'index optimization is disabled by the policy' };
      else if (viaCompaction) next = { action: options.dryRun ? 'would-fold' : 'folded' };
      else if (!desired || isVector(desired.type)) {
        next = { action: 'fold-blocked', reason: 'the Node SDK folds this index only inside its compaction call, which the policy disables (only scalar and FTS indices the policy declares are rebuilt instead)' };
      } else if (options.dryRun) next = { action: 'would-fold', reason: 'by a rebuild' };
      else {
        await data.rebuildIndex(unit.location, desiredRequest(desired));
        material = true;
        next = { action: 'folded', reason: 'rebuilt over every row (the policy disables compaction)' };
      }
      findings[i] = { ...f, ...next } as IndexFinding;
    }
  }

  // Desired indices that are missing.
  const existing = new Map(state.indices.map((i) => [i.index_name, i]));
  const queued = policy.indices.some((d) => !existing.has(d.name)) ? await queuedBuilds(unit) : new Map<string, string>();
  const maxSync = unit.services.dataLimits?.maxSyncVectorIndexRows ?? DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS;
  for (const desired of policy.indices) {
    const found = existing.get(desired.name);
    if (found) {
      if (!found.columns.includes(desired.column) || !sameType(found.index_type, desired.type)) {
        findings.push({ name: desired.name, action: 'mismatch', reason: `an index of this name exists on ${JSON.stringify(found.columns)} as ${found.index_type}; the policy wants ${desired.type} on ${desired.column}` });
      }
      continue;
    }
    findings.push(await buildMissing(unit, options, data, desired, state.rows, maxSync, queued));
    material ||= ['built', 'queued'].includes(findings[findings.length - 1].action);
  }
  return {
    item: { ...base, policy_source: effective.source, rows: state.rows, indices: findings },
    material,
  };
}

async function buildMissing(
  unit: TableUnit,
  options: PassOptions,
  data: IndexData,
  desired: DesiredIndex,
  rows: number,
  maxSync: number,
  queued: Map<string, string>,
): Promise<IndexFinding> {
  const name = desired.name;
  if (queued.has(name)) return { name, action: 'already-queued', transaction_id: queued.get(name) };
  if (rows < (desired.min_rows ?? 0)) return { name, action: 'waiting-for-rows', reason: `the table has ${rows} rows; the policy builds at ${desired.min_rows}` };
  const large = isVector(desired.type) && rows > maxSync;
  if (options.dryRun) return { name, action: 'would-build', ...(large ? { reason: 'would be queued as a job' } : {}) };
  if (large) {
    const job = await enqueue(jobContext(unit.services), {
      type: CREATE_INDEX,
      table: { id: unit.record.id, uid: unit.record.uid },
      params: desiredFields(desired),
      summary: { index_name: name, column: desired.column, index_type: desired.type, rows: String(rows), max_sync_rows: String(maxSync), queued_by: 'index-builder' },
    });
    return { name, action: 'queued', transaction_id: job.id };
  }
  try {
    // Decoded here, so a policy's bad parameters are this index's build failure, as before.
    await data.createIndex(unit.location, desiredRequest(desired));
    return { name, action: 'built' };
  } catch (err) {
    return { name, action: 'build-failed', reason: (err as Error).message };
  }
}

/** The LanceDB calls, loaded on first use. */
export async function loadIndexData(): Promise<IndexData> {
  const m = await import('../adapters/lance/maintenance.js');
  const { sharedEngine } = await import('../adapters/lance/shared-engine.js');
  return { datasetState: m.datasetState, compactAndFold: m.compactAndFold, rebuildIndex: m.rebuildIndex, createIndex: (l: string, r: IndexRequest) => sharedEngine().createIndex(l, r) };
}

export function makeIndexBuilder(data?: IndexData): MaintenancePass {
  return async (services, options) => {
    if (options.fanOut && !options.dryRun) return indexFanOut(services, options);
    const startedAt = services.now().toISOString();
    const calls: IndexData = data ?? (await loadIndexData());
    const items: Record<string, unknown>[] = [];
    let material = false;
    const walk = await forEachTable(services, options, async (unit) => {
      const r = await buildTable(unit, options, calls);
      items.push(r.item);
      material ||= r.material;
    });
    const report = finishReport(services, {
      pass: 'index',
      startedAt,
      complete: walk.complete,
      cursor: walk.cursor,
      summary: {
        tables_visited: walk.visited,
        tables_skipped: items.filter((i) => i.skipped).length,
        ...indexCounters(items.flatMap((i) => (i.indices as IndexFinding[] | undefined) ?? [])),
        problems: walk.problems.length,
      },
      items,
      problems: walk.problems,
    });
    if (options.dryRun) return { ...report, material };
    const loud = walk.problems.length > 0 || report.summary.build_failures > 0 || report.summary.indices_unknown > 0;
    const reportKey = await writeReport(services.registry, report, material || loud);
    if (material) await announce(services, report, reportKey);
    return { ...report, material, reportKey };
  };
}

export const indexBuild: MaintenancePass = makeIndexBuilder();

/** What a pass or one table's job reports of its index findings. */
export function indexCounters(findings: readonly IndexFinding[]) {
  const count = (f: (x: IndexFinding) => boolean) => findings.filter(f).length;
  return {
    indices_healthy: count((x) => x.health === 'HEALTHY'),
    indices_unknown: count((x) => x.health === 'UNKNOWN'),
    indices_built: count((x) => x.action === 'built'),
    indices_queued: count((x) => x.action === 'queued'),
    indices_folded: count((x) => x.action === 'folded'),
    build_failures: count((x) => x.action === 'build-failed'),
  };
}
