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
 * - Index definitions (lib/catalog/data/index-definitions.ts, issue #33 item 3): an index seen
 *   without a definition on record (a client built it straight to storage, or the record write
 *   after a build failed) is recorded (`discovered`); an index on record that the dataset no
 *   longer has (a write rewrote its column, docs/data-plane.md "Column-only fills") is rebuilt
 *   from its definition (`rebuilt-after-drop`, or queued above the synchronous limit). An index
 *   dropped with DropTableIndex has no definition left, so it stays dropped; one dropped while
 *   this pass rebuilt it is dropped again; one a client dropped straight to storage is told from
 *   one a write lost by the version that removed it (lib/catalog/dataset/index-history.ts), and
 *   its definition goes (`definition-removed`). A recorded scalar or FTS definition also lets a fold
 *   rebuild the index when the policy disables compaction.
 *
 * Tables the sweep skips (mid-move, mid-purge, declared-only, trashed) are skipped here too.
 */
import { announce } from './announce.js';
import { indexFanOut } from './fan-out-passes.js';
import { DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS } from '../config.js';
import { jobContext } from '../queue/context.js';
import { enqueue } from '../queue/jobs.js';
import { CREATE_INDEX } from '../catalog/data/indices.js';
import { type IndexLoss, indexLoss } from '../catalog/dataset/index-history.js';
import { definitionsOf, forgetDefinition, reconcileDefinitions, requestOf, type SeenIndex } from '../catalog/data/index-definitions.js';
import { indexRequestFields } from '../data/index-request.js';
import type { IndexDefinition } from '../registry/records.js';
import type { IndexContent } from '../ports/data-engine.js';
import { readTable } from '../catalog/protocols/lookup.js';
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
    | 'build-failed'
    | 'rebuilt-after-drop'
    | 'would-rebuild'
    | 'dropped-again'
    | 'definition-removed'
    | 'would-remove-definition';
  readonly reason?: string;
  readonly transaction_id?: string;
  /** Set when this pass recorded the index's definition on first sight (index-definitions.ts). */
  readonly definition?: 'discovered';
}

export interface IndexData {
  datasetState(location: string): Promise<DatasetState>;
  compactAndFold(location: string): Promise<unknown>;
  rebuildIndex(location: string, request: IndexRequest): Promise<unknown>;
  createIndex(location: string, request: IndexRequest): Promise<unknown>;
  /** The distance type a vector index's statistics report (what a discovered definition keeps). */
  distanceType(location: string, indexName: string): Promise<string | undefined>;
  dropIndex(location: string, indexName: string): Promise<unknown>;
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
  const { defined, discovered } = await definitions(unit, options, data, state.indices);
  const definedByName = new Map(defined.map((d) => [d.name, d]));

  // Health of what exists, and folds past the threshold.
  let foldNeeded = false;
  for (const index of state.indices) {
    const known = index.status === 'done' && index.num_indexed_rows !== undefined && index.num_unindexed_rows !== undefined;
    if (!known) {
      findings.push({ name: index.index_name, type: index.index_type, columns: index.columns, health: 'UNKNOWN', action: 'none', reason: 'its statistics could not be read', ...(discovered.has(index.index_name) ? { definition: 'discovered' as const } : {}) });
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
      ...(discovered.has(index.index_name) ? { definition: 'discovered' as const } : {}),
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
      // The policy's declaration, else the catalog's definition: either says how to rebuild it.
      const desired = policy.indices.find((d) => d.name === f.name);
      const recorded = definedByName.get(f.name);
      const type = desired?.type ?? recorded?.type;
      let next: Partial<IndexFinding>;
      if (!policy.optimize_indices_enabled) next = { action: 'fold-blocked', reason: 'index optimization is disabled by the policy' };
      else if (viaCompaction) next = { action: options.dryRun ? 'would-fold' : 'folded' };
      else if (type === undefined || isVector(type)) {
        next = { action: 'fold-blocked', reason: 'the Node SDK folds this index only inside its compaction call, which the policy disables (only scalar and FTS indices with a known definition are rebuilt instead)' };
      } else if (options.dryRun) next = { action: 'would-fold', reason: 'by a rebuild' };
      else {
        await data.rebuildIndex(unit.location, desired ? desiredRequest(desired) : requestOf(recorded!));
        material = true;
        next = { action: 'folded', reason: 'rebuilt over every row (the policy disables compaction)' };
      }
      findings[i] = { ...f, ...next } as IndexFinding;
    }
  }

  // Desired indices that are missing.
  const existing = new Map(state.indices.map((i) => [i.index_name, i]));
  const declared = new Set(policy.indices.map((d) => d.name));
  // Definitions on record that the dataset lost; the policy's own indices are built above.
  const lost = defined.filter((d) => !existing.has(d.name) && !declared.has(d.name));
  const queued = policy.indices.some((d) => !existing.has(d.name)) || lost.length > 0 ? await queuedBuilds(unit) : new Map<string, string>();
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
  for (const definition of lost) {
    findings.push(await rebuildLost(unit, options, data, definition, state, maxSync, queued));
    material ||= ['rebuilt-after-drop', 'queued', 'dropped-again', 'definition-removed'].includes(findings[findings.length - 1].action);
  }
  material ||= discovered.size > 0;
  return {
    item: { ...base, policy_source: effective.source, rows: state.rows, indices: findings, ...(await versionsCommitted(unit, options, data, state.version, findings)) },
    material,
  };
}

/** The actions after which the pass has committed a new version of the table itself. */
const COMMITTING: ReadonlySet<IndexFinding['action']> = new Set(['built', 'folded', 'rebuilt-after-drop', 'dropped-again']);

/**
 * The versions this pass committed (`version_before` → `version_after`, as a sweep's item says),
 * so the change relay claims them rather than announcing them as commits made straight to
 * storage (lib/maintenance/announce.ts, docs/events.md). One more state read, only after a build.
 */
async function versionsCommitted(unit: TableUnit, options: PassOptions, data: IndexData, before: number, findings: readonly IndexFinding[]) {
  if (options.dryRun || !findings.some((f) => COMMITTING.has(f.action))) return {};
  const after = (await data.datasetState(unit.location)).version;
  return after > before ? { version_before: before, version_after: after } : {};
}

/**
 * Reconciles the dataset's indices with the definitions on record (index-definitions.ts): what
 * is seen without one is recorded (a dry run only says what it would record). Answers the
 * definitions on record and the names this pass discovered.
 */
async function definitions(unit: TableUnit, options: PassOptions, data: IndexData, indices: readonly IndexContent[]) {
  const current = definitionsOf(unit.record);
  const known = new Set([...current.defined.map((d) => d.name), ...current.dropped.map((d) => d.name)]);
  if (options.dryRun) {
    return { defined: current.defined, discovered: new Set(indices.filter((i) => !known.has(i.index_name)).map((i) => i.index_name)) };
  }
  const seen: SeenIndex[] = [];
  for (const i of indices) {
    const type = i.index_type;
    // A rebuild must keep a vector index's distance type, which only its statistics tell.
    const distanceType = !known.has(i.index_name) && type !== undefined && isVector(type) ? await data.distanceType(unit.location, i.index_name).catch(() => undefined) : undefined;
    seen.push({ name: i.index_name, columns: i.columns, ...(type ? { type } : {}), ...(distanceType ? { distanceType } : {}) });
  }
  const after = await reconcileDefinitions(unit.services, unit.record, seen);
  return { defined: after.defined, discovered: new Set(after.discovered) };
}

/**
 * An index on record that the dataset no longer has: a write dropped it (DropTableIndex removes
 * the definition first, so a user's drop never gets here). Rebuilt from its definition, or
 * queued when it is a vector build above the synchronous limit.
 */
async function rebuildLost(
  unit: TableUnit,
  options: PassOptions,
  data: IndexData,
  definition: IndexDefinition,
  state: DatasetState,
  maxSync: number,
  queued: Map<string, string>,
): Promise<IndexFinding> {
  const { name } = definition;
  const { rows } = state;
  const base = { name, type: definition.type, columns: [definition.column] };
  if (queued.has(name)) return { ...base, action: 'already-queued', transaction_id: queued.get(name) };
  // A client that dropped it straight to storage meant it: the history tells (index-history.ts).
  const loss = await indexLoss(unit.store, unit.record.path, name, state.version).catch((): IndexLoss => ({ cause: 'unknown' }));
  if (loss.cause === 'dropped') {
    const reason = `dropped straight to storage at version ${loss.version}; it stays dropped`;
    if (options.dryRun) return { ...base, action: 'would-remove-definition', reason };
    await forgetDefinition(unit.services, unit.record, name);
    return { ...base, action: 'definition-removed', reason };
  }
  const why = loss.cause === 'written' ? `dropped by a write at version ${loss.version}` : 'gone, and the kept versions do not say how';
  if (rows === 0) return { ...base, action: 'waiting-for-rows', reason: `${why}; the table has no rows to rebuild it over` };
  if (options.dryRun) return { ...base, action: 'would-rebuild', reason: why };
  let request: IndexRequest;
  try {
    request = requestOf(definition);
  } catch (err) {
    return { ...base, action: 'build-failed', reason: `its recorded definition does not decode: ${(err as Error).message}` };
  }
  if (isVector(definition.type) && rows > maxSync) {
    const job = await enqueue(jobContext(unit.services), {
      type: CREATE_INDEX,
      table: { id: unit.record.id, uid: unit.record.uid },
      params: { ...indexRequestFields(request), name },
      summary: { index_name: name, column: definition.column, index_type: definition.type, rows: String(rows), max_sync_rows: String(maxSync), queued_by: 'index-builder', reason: 'rebuilt-after-drop' },
    });
    return { ...base, action: 'queued', reason: `rebuilt-after-drop (${why}): queued as a job above the synchronous limit`, transaction_id: job.id };
  }
  try {
    await data.createIndex(unit.location, request);
  } catch (err) {
    return { ...base, action: 'build-failed', reason: `rebuilding after a drop: ${(err as Error).message}` };
  }
  // A DropTableIndex that ran while this pass rebuilt the index wins: the index goes again.
  const now = definitionsOf((await reread(unit)) ?? unit.record);
  if (now.dropped.some((d) => d.name === name) && !now.defined.some((d) => d.name === name)) {
    await data.dropIndex(unit.location, name);
    return { ...base, action: 'dropped-again', reason: 'dropped with DropTableIndex while this pass rebuilt it' };
  }
  return { ...base, action: 'rebuilt-after-drop', reason: why };
}

async function reread(unit: TableUnit) {
  const found = await readTable(unit.services, unit.id);
  return found && found.value.uid === unit.record.uid ? found.value : undefined;
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
  return {
    datasetState: m.datasetState,
    compactAndFold: m.compactAndFold,
    rebuildIndex: m.rebuildIndex,
    createIndex: (l: string, r: IndexRequest) => sharedEngine().createIndex(l, r),
    distanceType: async (l: string, indexName: string) => (await sharedEngine().indexStats(l, { indexName })).distance_type ?? undefined,
    dropIndex: (l: string, indexName: string) => sharedEngine().dropIndex(l, { indexName }),
  };
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
    indices_discovered: count((x) => x.definition === 'discovered'),
    indices_rebuilt: count((x) => x.action === 'rebuilt-after-drop'),
    build_failures: count((x) => x.action === 'build-failed'),
  };
}
