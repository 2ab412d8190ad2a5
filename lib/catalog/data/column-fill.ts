/**
 * Column-only fills (docs/data-plane.md, "Column-only fills"; issue #33).
 *
 * LanceDB 0.31 (Lance 8.0.0) runs an update-only merge whose source carries the key and only
 * some of the table's columns in one of two ways: with a scalar (BTREE) index on the key that
 * covers every row, it writes one new data file per touched fragment holding only the columns
 * the source carries, and every other column keeps its files and every index on them keeps
 * its uuid and its coverage; without one, it rewrites the whole rows into new fragments, which
 * drops the vector index of a column it rewrote and leaves the others covering none of those
 * rows. Measured: 3,000 rows, key + one 32-d column, 408 KB written with the index against
 * 803 KB and two indices lost without it; an index that a previous fill left uncovered sends
 * the next fill down the slow path again. So before such a merge the catalog makes sure the
 * key has a covering BTREE (building it once, named in the answer), and after it re-covers the
 * key index, which the fill itself uncovered.
 *
 * Every merge, fill or not, answers what it cost: `bytes_written` (the data files its commit
 * added) and `index_effects` (the indices it dropped or uncovered: write-effects.ts).
 */
import { decodeIpc, type JsonArrowDataType, type JsonArrowField, toJsonArrowType } from '../../data/arrow.js';
import type { IndexRequest } from '../../data/index-request.js';
import type { DataEngine, MergeInsertInput, MergeInsertResponse } from '../../ports/data-engine.js';
import { type CatalogServices, dataEngineOf } from '../services.js';
import type { ResolvedTable } from '../protocols/lookup.js';
import { recordDefinition } from './index-definitions.js';
import { bytesWritten, type Coverage, type IndexEffect, indexEffects, readCoverage } from './write-effects.js';

/** The key index a fill used: `built` for this fill, `recovered` (rebuilt over every row first) or `kept`. */
export interface KeyIndex {
  readonly index_name: string;
  readonly column: string;
  readonly action: 'built' | 'recovered' | 'kept';
}

export interface TrackedMerge extends MergeInsertResponse {
  /** Bytes of the data files the merge's commit added. */
  bytes_written?: number;
  /** Present when the merge was a column-only fill. */
  key_index?: KeyIndex;
  /** Indices the merge dropped or left covering fewer rows; absent when none. */
  index_effects?: IndexEffect[];
}

/**
 * The key of a merge that can be a column-only fill: update-only (no insert, no delete by
 * source), one key column, and a source carrying the key plus a strict subset of the table's
 * other columns. Undefined for every other merge.
 */
export function fillKey(input: MergeInsertInput, source: readonly JsonArrowField[], table: readonly JsonArrowField[]): string | undefined {
  if (input.on.length !== 1) return undefined;
  // A filtered update (when_matched_update_all_filt) on the column-only path panics inside
  // Lance 8.0.0, so only the plain update-only merge is a fill.
  const updates = input.whenMatchedUpdateAll && input.whenMatchedUpdateAllFilt === undefined;
  const others = input.whenNotMatchedInsertAll || input.whenNotMatchedBySourceDelete || input.whenNotMatchedBySourceDeleteFilt !== undefined;
  if (!updates || others) return undefined;
  const key = input.on[0];
  const columns = new Map(table.map((f) => [f.name, f.type]));
  // A source the merge will refuse (an unknown column, another type) is left to the merge, so a
  // refused request builds no key index either: nothing changes (docs/rules.md rule 1).
  if (!source.some((f) => f.name === key) || !source.every((f) => sameShape(columns.get(f.name), f.type))) return undefined;
  return source.length < table.length ? key : undefined;
}

function sameShape(a: JsonArrowDataType | undefined, b: JsonArrowDataType): boolean {
  return a !== undefined && a.type === b.type && a.length === b.length && (a.fields?.length ?? 0) === (b.fields?.length ?? 0);
}

/** MergeInsertIntoTable on a table with data: a column-only fill when it can be one; its cost and index effects answered either way. */
export async function trackedMerge(svc: CatalogServices, t: ResolvedTable, ipc: Buffer, input: MergeInsertInput): Promise<TrackedMerge> {
  const engine = dataEngineOf(svc);
  const branch = branchOf(input);
  const selection = branch ? { branch } : {};
  const [described, before] = await Promise.all([engine.describe(t.location, selection), readCoverage(engine, t.location, branch)]);
  const source = decodeIpc(ipc).schema.fields.map((f) => ({ name: f.name, nullable: f.nullable, type: toJsonArrowType(f.type) }));
  const key = fillKey(input, source, described.schema.fields);
  const keyIndex = key === undefined ? undefined : await ensureKeyIndex(engine, t.location, key, before, branch);
  const merged = await engine.mergeInsert(t.location, ipc, input);
  // The fill rewrote the key's column in the fragments it touched, so its index no longer covers
  // them: re-covered now, or the next fill would take the full-row path.
  if (keyIndex) await engine.rebuildIndex(t.location, keyIndexRequest(keyIndex, branch));
  // A key index this fill built is the table's index like any other: its definition is recorded (index-definitions.ts).
  if (keyIndex?.action === 'built') await recordDefinition(svc, t.record, keyIndexRequest(keyIndex, branch));
  const [after, bytes] = await Promise.all([readCoverage(engine, t.location, branch), bytesWritten(t, merged.version, branch)]);
  const effects = indexEffects(before, after, new Set(keyIndex ? [keyIndex.index_name] : []));
  return {
    ...merged,
    ...(bytes !== undefined ? { bytes_written: bytes } : {}),
    ...(keyIndex ? { key_index: keyIndex } : {}),
    ...(effects.length > 0 ? { index_effects: effects } : {}),
  };
}

/**
 * A BTREE on `key` covering every row: the one found (rebuilt first when it has unindexed
 * rows), else one built now. Undefined when none can be built (a key type BTREE does not take):
 * the merge then rewrites whole rows, and its answer names the indices that lost coverage.
 */
async function ensureKeyIndex(engine: DataEngine, location: string, key: string, coverage: Coverage, branch?: string): Promise<KeyIndex | undefined> {
  const found = [...coverage.values()].find((i) => i.columns.length === 1 && i.columns[0] === key && i.index_type === 'BTREE');
  if (found) {
    const index: KeyIndex = { index_name: found.index_name, column: key, action: (found.num_unindexed_rows ?? 1) > 0 ? 'recovered' : 'kept' };
    if (index.action === 'recovered') await engine.rebuildIndex(location, keyIndexRequest(index, branch));
    return index;
  }
  const name = coverage.has(`${key}_idx`) ? `${key}_key_idx` : `${key}_idx`;
  const index: KeyIndex = { index_name: name, column: key, action: 'built' };
  try {
    await engine.createIndex(location, keyIndexRequest(index, branch));
  } catch {
    return undefined;
  }
  return index;
}

function keyIndexRequest(index: KeyIndex, branch?: string): IndexRequest {
  return { column: index.column, indexType: 'BTREE', name: index.index_name, ...(branch ? { branch } : {}) };
}

export function branchOf(target: { readonly branch?: string }): string | undefined {
  return target.branch !== undefined && target.branch !== 'main' ? target.branch : undefined;
}
