/** InsertIntoTable / MergeInsertIntoTable / UpdateTable / DeleteFromTable on an open table. */
import { TableSchemaValidationError } from '../../errors.js';
import { type ArrowDataType, type ArrowSchema, type ArrowTable, loadArrow, toJsonArrowType } from '../../data/arrow.js';
import type * as ArrowModule from 'apache-arrow';
import type { Table } from './lancedb.js';
import type { InsertMode, MergeInsertInput, MergeInsertResponse, UpdateInput } from '../../ports/data-engine.js';
export type { InsertMode, MergeInsertResponse };

export async function insert(
  table: Table,
  data: ArrowTable,
  mode: InsertMode,
): Promise<{ version: number; num_inserted_rows: number }> {
  // LanceDB's overwrite adopts the schema (and schema metadata) of the data it is given; an
  // insert must keep the table's, so the data is first conformed to it. An append that lacks
  // columns is conformed too: LanceDB would write a fragment without data files for them, and
  // once the columns it does carry are dropped that fragment holds no data at all and every
  // read of the table fails ("Fragment 1 does not contain any data").
  //
  // Known limit: apache-arrow's IPC writer gives an all-null boolean column an empty values
  // buffer, which LanceDB's reader refuses; an append missing a boolean column is therefore left
  // to LanceDB as sent (and an overwrite missing one fails, code 18).
  const schema = await table.schema();
  const missing = schema.fields.filter((f) => data.schema.fields.every((g) => g.name !== f.name));
  const { Type } = loadArrow();
  const conformAppend = missing.length > 0 && missing.every((f) => f.type.typeId !== Type.Bool);
  const rows = mode === 'overwrite' || conformAppend ? conformToSchema(data, schema) : data;
  const { version } = await withSchema(table, schema).add(rows, { mode });
  return { version, num_inserted_rows: data.numRows };
}

/**
 * `table`, answering `schema()` with the schema this call has just read from it and fitted the
 * data to. LanceDB's `add` reads the schema again, only to prepare the data for it; that second
 * read is a round trip to LanceDB's threads plus an IPC decode, 0.2-0.3 ms of a 3 ms append.
 * Either way the native write checks the data against the dataset as it is at commit. Should
 * LanceDB stop asking, this changes nothing.
 */
function withSchema(table: Table, schema: ArrowSchema): Table {
  return Object.create(table, { schema: { value: () => Promise.resolve(schema) } }) as Table;
}

/**
 * `data` re-expressed in `schema`: same column order, types and metadata, absent nullable
 * columns filled with nulls. No casting: an overwrite is not the place to change types.
 */
export function conformToSchema(data: ArrowTable, schema: ArrowSchema): ArrowTable {
  const incoming = new Map(data.schema.fields.map((f) => [f.name, f]));
  const extra = [...incoming.keys()].filter((name) => !schema.fields.some((f) => f.name === name));
  if (extra.length > 0) {
    throw new TableSchemaValidationError(`columns not in the table schema: ${extra.join(', ')}`);
  }
  for (const field of schema.fields) {
    const given = incoming.get(field.name);
    if (!given) {
      if (!field.nullable) throw new TableSchemaValidationError(`non-nullable column "${field.name}" is missing`);
      continue;
    }
    if (!sameType(given.type, field.type)) {
      throw new TableSchemaValidationError(`column "${field.name}" has type ${given.type} but the table has ${field.type}`);
    }
    if (!field.nullable && (data.getChild(field.name)?.nullCount ?? 0) > 0) {
      throw new TableSchemaValidationError(`non-nullable column "${field.name}" contains nulls`);
    }
  }
  const arrow = loadArrow();
  const batches = data.batches.map((batch) => {
    const children = schema.fields.map((f) => batch.getChild(f.name)?.data[0] ?? nullData(f.type, batch.numRows));
    const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: batch.numRows, nullCount: 0, children });
    return new arrow.RecordBatch(schema, struct);
  });
  return new arrow.Table(schema, batches);
}

/**
 * An all-null column of `type`. vectorFromArray gives a fixed-size list no child values at all,
 * which LanceDB rejects ("Values length 0 is less than the length multiplied by the value
 * size"), so fixed-size lists and structs get children of the full length, all null too.
 */
function nullData(type: ArrowDataType, length: number): ArrowModule.Data {
  const arrow = loadArrow();
  const nullBitmap = new Uint8Array(Math.ceil(length / 8));
  if (type.typeId === arrow.Type.FixedSizeList) {
    const size = (type as ArrowModule.FixedSizeList).listSize;
    const child = nullData(type.children[0].type, length * size);
    return arrow.makeData({ type: type as ArrowModule.FixedSizeList, length, nullCount: length, nullBitmap, child });
  }
  if (type.typeId === arrow.Type.Struct) {
    const children = type.children.map((c) => nullData(c.type, length));
    return arrow.makeData({ type: type as ArrowModule.Struct, length, nullCount: length, nullBitmap, children });
  }
  return arrow.vectorFromArray(new Array(length).fill(null), type).data[0];
}

/** Type equality that ignores the names and nullability of nested item fields. */
function sameType(a: ArrowDataType, b: ArrowDataType): boolean {
  const shape = (t: ArrowDataType): unknown => {
    const json = toJsonArrowType(t);
    return { type: json.type, length: json.length, fields: t.children?.map((c) => shape(c.type)) };
  };
  return JSON.stringify(shape(a)) === JSON.stringify(shape(b));
}

export async function mergeInsert(table: Table, data: ArrowTable, input: MergeInsertInput): Promise<MergeInsertResponse> {
  let builder = table.mergeInsert([...input.on]);
  const updateFilter = input.whenMatchedUpdateAllFilt;
  const deleteFilter = input.whenNotMatchedBySourceDeleteFilt;
  if (input.whenMatchedUpdateAll) builder = builder.whenMatchedUpdateAll(updateFilter ? { where: updateFilter } : undefined);
  if (input.whenNotMatchedInsertAll) builder = builder.whenNotMatchedInsertAll();
  if (input.whenNotMatchedBySourceDelete) builder = builder.whenNotMatchedBySourceDelete(deleteFilter ? { where: deleteFilter } : undefined);
  if (input.useIndex !== undefined) builder = builder.useIndex(input.useIndex);
  const r = await builder.execute(data, input.timeoutMs === undefined ? undefined : { timeoutMs: input.timeoutMs });
  return {
    version: r.version,
    num_updated_rows: r.numUpdatedRows,
    num_inserted_rows: r.numInsertedRows,
    num_deleted_rows: r.numDeletedRows,
  };
}

export async function update(table: Table, input: UpdateInput): Promise<{ updated_rows: number; version: number }> {
  const valuesSql = new Map(input.updates);
  const where = input.predicate;
  const r = await table.update(where === undefined ? { valuesSql } : { valuesSql, where });
  return { updated_rows: r.rowsUpdated, version: r.version };
}

export async function deleteRows(table: Table, predicate: string): Promise<{ version: number }> {
  const { version } = await table.delete(predicate);
  return { version };
}
