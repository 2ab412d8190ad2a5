/**
 * The schema-evolution bodies (AlterTableAddColumns, AlterTableAlterColumns,
 * AlterTableDropColumns, UpdateFieldMetadata) decoded into the engine's inputs
 * (lib/ports/data-inputs.ts), with the messages the engine once gave (issue 25 item 2). Each
 * `new_columns` entry is a SQL `expression` (evaluated once, now), a `computed` SQL expression,
 * or (an extension for typed null columns) a JsonArrowField shape `{name, type, nullable?,
 * metadata?}`.
 */
import { fromJsonArrowField, fromJsonArrowType } from '../../data/arrow.js';
import { checkFieldName } from '../../data/names.js';
import { optSql } from '../../data/sql-bounds.js';
import { asObject, type Json, optBool, optString, optStringArray, reqString } from '../../data/validate.js';
import { InvalidInputError, UnsupportedError } from '../../errors.js';
import type {
  AddColumnsInput,
  AlterColumnsInput,
  ColumnChange,
  DropColumnsInput,
  FieldMetadataInput,
  NewColumn,
} from '../../ports/data-inputs.js';
import { writeTarget } from './inputs.js';

function entries(value: unknown, field: string): Json[] {
  if (!Array.isArray(value) || value.length === 0) throw new InvalidInputError(`"${field}" must be a non-empty array`);
  return value.map((v, i) => asObject(v, `${field}[${i}]`));
}

const noVirtualColumns = () => new UnsupportedError('virtual columns are not supported: LanceDB 0.31.0 has no UDF columns');

export function addColumnsInput(body: Json): AddColumnsInput {
  const target = writeTarget(body);
  const columns = entries(body.new_columns, 'new_columns').map((e, i): NewColumn => {
    const at = `new_columns[${i}]`;
    const name = checkFieldName(reqString(e.name, `${at}.name`), `"${at}.name"`, { topLevel: true });
    if (e.virtual_column != null) throw noVirtualColumns();
    const expression = optSql(e.expression, `${at}.expression`);
    const computed = optSql(e.computed, `${at}.computed`);
    if (expression && computed) throw new InvalidInputError(`"${at}" has both "expression" and "computed"; give one`);
    if (computed) return { kind: 'computed', name, expression: computed };
    if (expression) return { kind: 'expression', name, expression };
    if (e.type != null) return { kind: 'typed', name, field: fromJsonArrowField({ ...e, nullable: e.nullable ?? true }) };
    throw new InvalidInputError(`"${at}" needs an "expression", a "computed" expression, or a JSON Arrow "type" for an all-null column`);
  });
  const sql = columns.some((c) => c.kind === 'expression');
  if (sql && columns.some((c) => c.kind !== 'expression')) {
    throw new InvalidInputError('add SQL-expression columns and computed or typed null columns in separate requests');
  }
  return { ...target, columns };
}

export function alterColumnsInput(body: Json): AlterColumnsInput {
  const target = writeTarget(body);
  const alterations = entries(body.alterations, 'alterations').map((e, i): ColumnChange => {
    const at = `alterations[${i}]`;
    if (e.virtual_column != null) throw noVirtualColumns();
    const path = reqString(e.path, `${at}.path`);
    const rename = optString(e.rename, `${at}.rename`);
    // The new name of one field (at any level): a "." would read as a path separator.
    if (rename) checkFieldName(rename, `"${at}.rename"`, { topLevel: true });
    const nullable = optBool(e.nullable, `${at}.nullable`);
    const dataType = e.data_type != null ? fromJsonArrowType(e.data_type) : undefined;
    const change: ColumnChange = {
      path,
      ...(rename ? { rename } : {}),
      ...(nullable !== undefined ? { nullable } : {}),
      ...(dataType !== undefined ? { dataType } : {}),
    };
    if (Object.keys(change).length === 1) throw new InvalidInputError(`"${at}" changes nothing`);
    return change;
  });
  return { ...target, alterations };
}

export function dropColumnsInput(body: Json): DropColumnsInput {
  const target = writeTarget(body);
  const columns = optStringArray(body.columns, 'columns');
  if (!columns?.length) throw new InvalidInputError('"columns" must be a non-empty array');
  return { ...target, columns };
}

export function fieldMetadataInput(body: Json): FieldMetadataInput {
  const target = writeTarget(body);
  const updates = entries(body.updates, 'updates').map((e, i) => {
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
  return { ...target, updates };
}
