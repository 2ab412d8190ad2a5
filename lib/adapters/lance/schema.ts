/**
 * Schema evolution: AlterTableAddColumns / AlterColumns / DropColumns / UpdateFieldMetadata.
 * Every DataType and Field handed to LanceDB comes from lib/data/arrow.ts (the CJS copy).
 */
import type { ColumnAlteration } from '@lancedb/lancedb';
import type { ArrowField, ArrowSchema } from '../../data/arrow.js';
import { computedField } from './computed.js';
import type { LanceDb, Table } from './lancedb.js';
import { splitFieldPath } from '../../data/names.js';
import type { ColumnChange, FieldMetadataChange, NewColumn } from '../../ports/data-engine.js';

type Version = { version: number };

/**
 * New columns (decoded by lib/operations/data/schema-input.ts): SQL expressions evaluated once,
 * now; computed ones (a maintained column: added all-null with its binding, filled by
 * AlterTableBackfillColumns; computed.ts); or typed all-null ones. Expression columns take one
 * LanceDB call and the other two kinds another, i.e. two commits, so one request may not mix them
 * (the decoder refuses it).
 */
export async function addColumns(table: Table, lib: LanceDb, columns: readonly NewColumn[]): Promise<Version> {
  const sql: { name: string; valueSql: string }[] = [];
  const fields: ArrowField[] = [];
  for (const c of columns) {
    if (c.kind === 'computed') fields.push(await computedField(table, lib, c.name, c.expression));
    else if (c.kind === 'expression') sql.push({ name: c.name, valueSql: c.expression });
    else fields.push(c.field);
  }
  const result = sql.length > 0 ? await table.addColumns(sql) : await table.addColumns(fields);
  return { version: result.version };
}

export async function alterColumns(table: Table, alterations: readonly ColumnChange[]): Promise<Version> {
  const changes = alterations.map((a): ColumnAlteration => ({ ...a }));
  return { version: (await table.alterColumns(changes)).version };
}

export async function dropColumns(table: Table, columns: readonly string[]): Promise<Version> {
  return { version: (await table.dropColumns([...columns])).version };
}

export async function updateFieldMetadata(
  table: Table,
  updates: readonly FieldMetadataChange[],
): Promise<Version & { fields: Record<string, Record<string, string>> }> {
  const { version } = await table.updateFieldMetadata(updates.map((u) => ({ ...u, metadata: { ...u.metadata } })));
  const schema = await table.schema();
  const fields: Record<string, Record<string, string>> = {};
  for (const u of updates) {
    const field = resolveField(schema, u.path);
    if (field) fields[u.path] = Object.fromEntries(field.metadata);
  }
  return { version, fields };
}

function resolveField(schema: ArrowSchema, path: string): ArrowField | undefined {
  let fields = schema.fields;
  let found: ArrowField | undefined;
  for (const segment of splitFieldPath(path)) {
    found = fields.find((f) => f.name === segment);
    if (!found) return undefined;
    fields = found.type.children ?? [];
  }
  return found;
}
