/**
 * What a data write did to the table's indices and how many bytes it wrote (docs/data-plane.md,
 * "Column-only fills"). LanceDB 0.31 reports neither: a write that rewrites a fragment leaves
 * every index that covered it (an index on a rewritten column is dropped from the manifest, the
 * others keep their uuid but no longer cover the rewritten rows). So a write reads the indices'
 * coverage before and after and names every index it dropped or uncovered, and counts the bytes
 * of the data files its commit added, read from the two manifests.
 */
import { findManifest } from '../dataset/manifests.js';
import { readDataFiles } from '../dataset/lance-manifest.js';
import type { DataEngine, IndexContent } from '../../ports/data-engine.js';
import type { ResolvedTable } from '../protocols/lookup.js';

/** One index a write dropped (gone from the manifest) or left covering fewer rows. */
export interface IndexEffect {
  readonly index_name: string;
  readonly columns: readonly string[];
  readonly effect: 'dropped' | 'uncovered';
  readonly num_indexed_rows?: number;
  readonly num_unindexed_rows?: number;
}

export type Coverage = ReadonlyMap<string, IndexContent>;

/** Every index of the table (main or `branch`) with its row counts. */
export async function readCoverage(engine: DataEngine, location: string, branch?: string): Promise<Coverage> {
  const out = new Map<string, IndexContent>();
  let page_token: string | undefined;
  do {
    const page = await engine.listIndices(location, { ...(branch ? { branch } : {}), ...(page_token ? { page_token } : {}) });
    for (const index of page.indexes) out.set(index.index_name, index);
    page_token = page.page_token;
  } while (page_token);
  return out;
}

/**
 * The indices `after` lost against `before`: gone, or with more unindexed rows (fewer indexed
 * ones when the counts cannot be compared otherwise). `ignore` names indices the caller
 * accounts for itself (the key index of a column fill, re-covered after it).
 */
export function indexEffects(before: Coverage, after: Coverage, ignore: ReadonlySet<string> = new Set()): IndexEffect[] {
  const effects: IndexEffect[] = [];
  for (const [name, was] of before) {
    if (ignore.has(name)) continue;
    const now = after.get(name);
    if (!now) {
      effects.push({ index_name: name, columns: was.columns, effect: 'dropped' });
      continue;
    }
    const lostRows = (now.num_unindexed_rows ?? 0) > (was.num_unindexed_rows ?? 0) || (now.num_indexed_rows ?? 0) < (was.num_indexed_rows ?? 0);
    if (lostRows) {
      effects.push({
        index_name: name,
        columns: now.columns,
        effect: 'uncovered',
        ...(now.num_indexed_rows !== undefined ? { num_indexed_rows: now.num_indexed_rows } : {}),
        ...(now.num_unindexed_rows !== undefined ? { num_unindexed_rows: now.num_unindexed_rows } : {}),
      });
    }
  }
  return effects;
}

/**
 * Bytes of the data files `version` references that `version - 1` did not: what that commit
 * wrote. Undefined when a manifest cannot be read (the answer then says nothing rather than
 * something wrong).
 */
export async function bytesWritten(t: ResolvedTable, version: number, branch?: string): Promise<number | undefined> {
  if (version < 2) return undefined;
  try {
    const [before, after] = await Promise.all([dataFiles(t, version - 1, branch), dataFiles(t, version, branch)]);
    if (!before || !after) return undefined;
    const known = new Set(before.map((f) => f.path));
    return after.filter((f) => !known.has(f.path)).reduce((n, f) => n + f.bytes, 0);
  } catch {
    return undefined;
  }
}

async function dataFiles(t: ResolvedTable, version: number, branch?: string) {
  const info = await findManifest(t.store, t.record.path, version, branch);
  const object = info && (await t.store.get(info.key));
  return object ? readDataFiles(new Uint8Array(object.body)) : undefined;
}

/**
 * Runs a write that answers `{version}` and adds what it cost: `bytes_written` and, when it
 * dropped or uncovered an index, `index_effects` (UpdateTable, DeleteFromTable: an UPDATE
 * rewrites whole rows, docs/data-plane.md "Column-only fills").
 */
export async function withEffects<T extends { version: number }>(
  engine: DataEngine,
  t: ResolvedTable,
  branch: string | undefined,
  write: () => Promise<T>,
): Promise<T & { bytes_written?: number; index_effects?: IndexEffect[] }> {
  const before = await readCoverage(engine, t.location, branch);
  const r = await write();
  const [after, bytes] = await Promise.all([readCoverage(engine, t.location, branch), bytesWritten(t, r.version, branch)]);
  const effects = indexEffects(before, after);
  return { ...r, ...(bytes !== undefined ? { bytes_written: bytes } : {}), ...(effects.length > 0 ? { index_effects: effects } : {}) };
}
