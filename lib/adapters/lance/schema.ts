/**
 * Schema evolution: AlterTableAddColumns / AlterColumns / DropColumns / UpdateFieldMetadata.
 * Every DataType and Field handed to LanceDB comes from lib/data/arrow.ts (the CJS copy).
 */
import type { ColumnAlteration } from '@lancedb/lancedb';
import { InvalidInputError, UnsupportedError } from '../../errors.js';
import { type ArrowField, type ArrowSchema, fromJsonArrowField, fromJsonArrowType } from '../../data/arrow.js';
import { computedField } from './computed.js';
import type { LanceDb, Table } from './lancedb.js';
import { checkFieldName, splitFieldPath } from '../../data/names.js';
import { optSql } from '../../data/sql-bounds.js';
import { asObject, optBool, optString, optStringArray, reqString } from '../../data/validate.js';

type Version = { version: number };

function entries(value: unknown, field: string): Record<string, unknown>[] {
  if (!Array.isArray(value) || value.length === 0) throw new InvalidInputError(`"${field}" must be a non-empty array`);
  return value.map((v, i) => asObject(v, `${field}[${i}]`));
}

/**
 * Each entry is a SQL `expression` (evaluated once, now), a `computed` SQL expression (a
 * maintained column: added all-null with its binding, filled by AlterTableBackfillColumns;
 * lib/adapters/lance/computed.ts), or (an extension for typed null columns) a JsonArrowField shape:
 * `{name, type, nullable?, metadata?}`. Expression columns take one LanceDB call and the other
 * two kinds another, i.e. two commits, so one request may not mix them.
 */
export async function addColumns(table: Table, lib: LanceDb, request: unknown): Promise<Version> {
  const list = entries(asObject(request).new_columns, 'new_columns');
  const sql: { name: string; valueSql: string }[] = [];
  const fields: ArrowField[] = [];
  for (const [i, e] of list.entries()) {
    const at = `new_columns[${i}]`;
    const name = checkFieldName(reqString(e.name, `${at}.name`), `"${at}.name"`, { topLevel: true });
    if (e.virtual_column != null) {
      throw new UnsupportedError('virtual columns are not supported: LanceDB 0.31.0 has no UDF columns');
    }
    const expression = optSql(e.expression, `${at}.expression`);
    const computed = optSql(e.computed, `${at}.computed`);
    if (expression && computed) throw new InvalidInputError(`"${at}" has both "expression" and "computed"; give one`);
    if (computed) fields.push(await computedField(table, lib, name, computed));
    else if (expression) sql.push({ name, valueSql: expression });
    else if (e.type != null) fields.push(fromJsonArrowField({ ...e, nullable: e.nullable ?? true }));
    else throw new InvalidInputError(`"${at}" needs an "expression", a "computed" expression, or a JSON Arrow "type" for an all-null column`);
  }
  if (sql.length > 0 && fields.length > 0) {
    throw new InvalidInputError('add SQL-expression columns and computed or typed null columns in separate requests');
  }
  const result = sql.length > 0 ? await table.addColumns(sql) : await table.addColumns(fields);
  return { version: result.version };
}

export async function alterColumns(table: Table, request: unknown): Promise<Version> {
  const list = entries(asObject(request).alterations, 'alterations');
  const alterations = list.map((e, i): ColumnAlteration => {
    const at = `alterations[${i}]`;
    if (e.virtual_column != null) {
      throw new UnsupportedError('virtual columns are not supported: LanceDB 0.31.0 has no UDF columns');
    }
    const alteration: ColumnAlteration = { path: reqString(e.path, `${at}.path`) };
    const rename = optString(e.rename, `${at}.rename`);
    // The new name of one field (at any level): a "." would read as a path separator.
    if (rename) checkFieldName(rename, `"${at}.rename"`, { topLevel: true });
    if (rename) alteration.rename = rename;
    const nullable = optBool(e.nullable, `${at}.nullable`);
    if (nullable !== undefined) alteration.nullable = nullable;
    if (e.data_type != null) alteration.dataType = fromJsonArrowType(e.data_type);
    if (Object.keys(alteration).length === 1) throw new InvalidInputError(`"${at}" changes nothing`);
    return alteration;
  });
  return { version: (await table.alterColumns(alterations)).version };
}

export async function dropColumns(table: Table, request: unknown): Promise<Version> {
  const columns = optStringArray(asObject(request).columns, 'columns');
  if (!columns?.length) throw new InvalidInputError('"columns" must be a non-empty array');
  return { version: (await table.dropColumns(columns)).version };
}

export async function updateFieldMetadata(
  table: Table,
  request: unknown,
): Promise<Version & { fields: Record<string, Record<string, string>> }> {
  const list = entries(asObject(request).updates, 'updates');
  const updates = list.map((e, i) => {
    const at = `updates[${i}]`;
    const metadata = asObject(e.metadata, `${at}.metadata`);
    for (const [k, v] of Object.entries(metadata)) {
      if (v !== null && typeof v !== 'string') throw new InvalidInputError(`"${at}.metadata.${k}" must be a string or null`);
    }
    const replace = optBool(e.replace, `${at}.replace`);
    return {
      path: reqString(e.path, `${at}.path`),
      metadata: metadata as Record<string, string | null>,
      ...(replace === undefined ? {} : { replace }),
    };
  });
  const { version } = await table.updateFieldMetadata(updates);
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
