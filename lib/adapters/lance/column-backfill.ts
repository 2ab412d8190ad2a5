/**
 * A backfill through the column-only path (issue #33; lib/catalog/data/backfill.ts runs it):
 * the rows to compute are read as `key, <binding>` one fragment at a time, and the catalog
 * merges each slice back on the key, which writes only the key and the computed column
 * (lib/catalog/data/column-fill.ts). `UPDATE` would rewrite every column of every row it
 * touches and leave the table's indices behind.
 *
 * Slices follow the row address (`_rowid` without stable row ids: fragment << 32 | offset),
 * so each slice holds rows of one fragment, and a fill rewrites each fragment's column once.
 * The column-only path does not move rows, so the cursor (the last address done) stays valid
 * across the slices' own commits.
 */
import { encodeIpcFile, loadArrow } from '../../data/arrow.js';
import { defaultBackfillFilter, quoteIdentifier } from '../../data/backfill-filter.js';
import { computedBinding } from './computed.js';
import type { BackfillSlice, BackfillSliceRequest } from '../../ports/data-engine.js';
import type { Table } from './lancedb.js';

/** Columns that can identify rows: integers and strings. */
const KEY_TYPES = new Set(['Int', 'Utf8', 'LargeUtf8']);

/**
 * A column whose values identify every row (no nulls, no duplicates: read and checked here),
 * other than `column`: a BTREE-indexed one first, then non-nullable integer or string columns
 * in schema order, at most three tried. Undefined when none does.
 */
export async function backfillKey(table: Table, column: string): Promise<string | undefined> {
  const { Type } = loadArrow();
  const schema = await table.schema();
  const indexed = (await table.listIndices()).filter((i) => i.indexType === 'BTree' && i.columns.length === 1).map((i) => i.columns[0]);
  const typed = schema.fields.filter((f) => !f.nullable && KEY_TYPES.has(Type[f.type.typeId] as string)).map((f) => f.name);
  const candidates = [...new Set([...indexed, ...typed])].filter((c) => c !== column).slice(0, 3);
  for (const candidate of candidates) if (await identifiesRows(table, candidate)) return candidate;
  return undefined;
}

async function identifiesRows(table: Table, column: string): Promise<boolean> {
  const seen = new Set<unknown>();
  for await (const batch of table.query().select([column])) {
    const values = batch.getChild(column);
    if (!values) return false;
    for (const v of values) {
      if (v === null || v === undefined || seen.has(v)) return false;
      seen.add(v);
    }
  }
  return true;
}

/** The next slice to compute: rows matching `where` after address `after`, in one fragment, at most `maxRows`. */
export async function backfillSlice(
  table: Table,
  request: BackfillSliceRequest,
): Promise<BackfillSlice> {
  const { column, expression } = await computedBinding(table, request.column);
  const where = request.where ?? defaultBackfillFilter(column);
  const after = request.after === undefined ? undefined : BigInt(request.after);
  const from = after === undefined ? '' : ` AND _rowid > ${after}`;
  const first = await table.query().where(`(${where})${from}`).withRowId().select([request.key]).limit(1).toArrow();
  if (first.numRows === 0) return { rows: 0, expression, where };
  const fragment = BigInt(first.getChild('_rowid')?.get(0)) >> 32n;
  // Inclusive from the fragment's first address (row ids are unsigned: no `> -1`).
  const lower = after === undefined ? `_rowid >= ${fragment << 32n}` : `_rowid > ${after}`;
  const upper = (fragment + 1n) << 32n;
  const key = quoteIdentifier(request.key);
  const slice = await table
    .query()
    .where(`(${where}) AND ${lower} AND _rowid < ${upper}`)
    .withRowId()
    .select({ [request.key]: key, [column]: expression })
    .limit(request.maxRows)
    .toArrow();
  const arrow = loadArrow();
  const ids = slice.getChild('_rowid');
  let last = after ?? 0n;
  for (const id of ids ?? []) if (BigInt(id) > last) last = BigInt(id);
  const out = new arrow.Table({ [request.key]: slice.getChild(request.key)!, [column]: slice.getChild(column)! });
  return { ipc: encodeIpcFile(out), rows: slice.numRows, last: String(last), expression, where };
}
