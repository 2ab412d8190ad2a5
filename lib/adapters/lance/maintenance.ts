/**
 * The dataset side of table maintenance (lib/maintenance/sweep.ts, index-builder.ts): what a
 * dataset looks like (fragments, rows, versions, indices) and the LanceDB calls that rewrite it.
 *
 * The pinned Node SDK (LanceDB 0.31) has ONE maintenance call, `Table.optimize`, which always
 * runs compaction (Lance's default options), then prunes versions older than a cutoff, then
 * folds unindexed rows into existing indices. There is no way to compact, prune or fold alone,
 * nor to set rows per fragment. So:
 *
 * - `compactAndFold` calls it with a cutoff at the epoch: it prunes nothing (no version is that
 *   old), so it is compaction + index fold;
 * - `pruneBefore` calls it with the sweep's cutoff, after compactAndFold, so its own
 *   compaction and fold find nothing left to do and the order stays compact → fold → clean up;
 * - `rebuildIndex` replaces an index with one over every row: a fold without compaction, for
 *   policies that disable compaction (scalar and FTS indices only).
 *
 * Lance refuses the whole optimize when a tagged version is older than the cutoff; the caller
 * picks a cutoff below every tagged version (docs/rules.md rule 12).
 */
import { connectCached } from './connections.js';
import { listIndices, prepareIndex, type IndexContent } from './indexes.js';
import { loadLanceDb, type Table } from './lancedb.js';
import { mapLanceError } from './errors.js';
import { parseLocation } from '../../data/location.js';
import type { IndexRequest } from '../../data/index-request.js';

export interface DatasetVersion {
  readonly version: number;
  readonly timestamp: Date;
}

export interface DatasetState {
  readonly version: number;
  readonly fragments: number;
  readonly rows: number;
  readonly bytes: number;
  /** Oldest first. */
  readonly versions: readonly DatasetVersion[];
  readonly indices: readonly IndexContent[];
}

export interface CompactionResult {
  readonly fragmentsRemoved: number;
  readonly fragmentsAdded: number;
  readonly filesRemoved: number;
  readonly filesAdded: number;
}

export interface PruneResult extends CompactionResult {
  readonly bytesRemoved: number;
  readonly versionsRemoved: number;
}

async function use<T>(location: string, fn: (table: Table) => Promise<T>): Promise<T> {
  const loc = parseLocation(location);
  let table: Table | undefined;
  try {
    const db = await connectCached(loc.parent, {});
    table = await db.openTable(loc.name);
    return await fn(table);
  } catch (err) {
    throw mapLanceError(err);
  } finally {
    table?.close();
  }
}

export function datasetState(location: string): Promise<DatasetState> {
  return use(location, async (t) => {
    const [stats, versions, indexes, version] = await Promise.all([
      t.stats(),
      t.listVersions(),
      listIndices(t, {}),
      t.version(),
    ]);
    return {
      version,
      fragments: stats.fragmentStats.numFragments,
      rows: stats.numRows,
      bytes: stats.totalBytes,
      versions: versions.map((v) => ({ version: v.version, timestamp: v.timestamp })).sort((a, b) => a.version - b.version),
      indices: indexes.indexes,
    };
  });
}

/** Compaction + index fold, no pruning (see the module comment). */
export function compactAndFold(location: string): Promise<CompactionResult> {
  return use(location, async (t) => {
    const stats = await t.optimize({ cleanupOlderThan: new Date(0), deleteUnverified: false });
    return { ...stats.compaction };
  });
}

/** Prunes versions older than `cutoff` (never the latest; Lance fails on a tagged one). */
export function pruneBefore(location: string, cutoff: Date): Promise<PruneResult> {
  return use(location, async (t) => {
    const stats = await t.optimize({ cleanupOlderThan: cutoff, deleteUnverified: false });
    return { ...stats.compaction, bytesRemoved: stats.prune.bytesRemoved, versionsRemoved: stats.prune.oldVersionsRemoved };
  });
}

/**
 * Rebuilds one index over every row, replacing it: the only way the SDK can fold new rows into an
 * index without also compacting. `request` is decoded as a CreateTableIndex body is
 * (lib/data/index-request.ts). Used for scalar and FTS indices only: a vector rebuild re-trains
 * and belongs in a job.
 */
export function rebuildIndex(location: string, request: IndexRequest): Promise<void> {
  return use(location, async (t) => {
    const { column, config, name } = await prepareIndex(t, loadLanceDb(), request);
    await t.createIndex(column, { config, name, replace: true });
  });
}
