/**
 * The one place the data plane loads apache-arrow.
 *
 * @lancedb/lancedb is CommonJS and `require`s apache-arrow's CJS build; an ESM `import` would load
 * a second copy whose classes LanceDB does not recognise (tables encode to 0 bytes, Fields are
 * rejected by addColumns, DataTypes by alterColumns). So every Arrow object that reaches LanceDB
 * is built from the CJS copy loaded here.
 */
import { createRequire } from 'node:module';
import type * as ArrowModule from 'apache-arrow';
import { InvalidInputError } from '../errors.js';
import { checkArrowSchema, checkFieldName, MAX_SCHEMA_DEPTH } from './names.js';

export type Arrow = typeof ArrowModule;

let cjs: Arrow | undefined;

/** The CJS apache-arrow, loaded on first use: it costs ~70 ms, which a cold start should not pay for nothing. */
export function loadArrow(): Arrow {
  cjs ??= createRequire(import.meta.url)('apache-arrow') as Arrow;
  return cjs;
}

export type ArrowTable = ArrowModule.Table;
export type ArrowRecordBatch = ArrowModule.RecordBatch;
export type ArrowSchema = ArrowModule.Schema;
export type ArrowField = ArrowModule.Field;
export type ArrowDataType = ArrowModule.DataType;

/**
 * Decodes an Arrow IPC stream or file. LanceDB silently turns undecoded bytes into an empty
 * table (or wipes a table on overwrite), and apache-arrow "decodes" empty or JSON bytes into a
 * table without columns, so anything without at least one column is rejected here.
 */
export function decodeIpc(buf: Uint8Array): ArrowTable {
  const known = decodedBodies.get(buf);
  if (known) return known;
  if (buf.byteLength === 0) throw new InvalidInputError('request body is empty; expected Arrow IPC data');
  let table: ArrowTable;
  try {
    table = loadArrow().tableFromIPC(buf);
  } catch (err) {
    throw new InvalidInputError('request body is not valid Arrow IPC stream or file data', {
      detail: err instanceof Error ? err.message : String(err),
      cause: err,
    });
  }
  if (table.schema.fields.length === 0) {
    throw new InvalidInputError('request body is not Arrow IPC data with a schema (no columns found)');
  }
  checkArrowSchema(table.schema, 'the Arrow schema of the request body');
  decodedBodies.set(buf, table);
  return table;
}

/**
 * A request body is checked before anything is written and decoded again by the write: the same
 * bytes (a body is never changed once received) give the same table, so the second decode of a
 * multi-megabyte body is a lookup.
 */
const decodedBodies = new WeakMap<Uint8Array, ArrowTable>();

/** Arrow IPC *file* bytes (ARROW1 magic), the QueryTable response format. */
export function encodeIpcFile(table: ArrowTable): Buffer {
  const bytes = loadArrow().tableToIPC(table, 'file');
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A zero-row table that still carries its schema (LanceDB returns a schema-less table when no rows match). */
export function emptyTable(schema: ArrowSchema): ArrowTable {
  return new (loadArrow().Table)(schema);
}

// ---- JSON Arrow schema (spec JsonArrowSchema / JsonArrowField / JsonArrowDataType) ----

export interface JsonArrowDataType {
  type: string;
  fields?: JsonArrowField[];
  length?: number;
}

export interface JsonArrowField {
  name: string;
  nullable: boolean;
  type: JsonArrowDataType;
  metadata?: Record<string, string>;
}

export interface JsonArrowSchema {
  fields: JsonArrowField[];
  metadata?: Record<string, string>;
}

function mapToRecord(map: Map<string, string> | undefined): Record<string, string> | undefined {
  if (!map || map.size === 0) return undefined;
  return Object.fromEntries(map);
}

export function toJsonArrowSchema(schema: ArrowSchema): JsonArrowSchema {
  const out: JsonArrowSchema = { fields: schema.fields.map(toJsonArrowField) };
  const metadata = mapToRecord(schema.metadata);
  if (metadata) out.metadata = metadata;
  return out;
}

export function toJsonArrowField(field: ArrowField): JsonArrowField {
  const out: JsonArrowField = { name: field.name, nullable: field.nullable, type: toJsonArrowType(field.type) };
  const metadata = mapToRecord(field.metadata);
  if (metadata) out.metadata = metadata;
  return out;
}

/** Names follow lance-namespace's JSON conversion (lowercase Arrow names: int64, float32, utf8…). */
export function toJsonArrowType(type: ArrowDataType): JsonArrowDataType {
  const { Type, DateUnit } = loadArrow();
  switch (type.typeId) {
    case Type.Null:
      return { type: 'null' };
    case Type.Bool:
      return { type: 'bool' };
    case Type.Int: {
      const int = type as ArrowModule.Int;
      return { type: `${int.isSigned ? 'int' : 'uint'}${int.bitWidth}` };
    }
    case Type.Float: {
      const bits = { 0: 16, 1: 32, 2: 64 }[(type as ArrowModule.Float).precision as 0 | 1 | 2];
      return { type: `float${bits}` };
    }
    case Type.Utf8:
      return { type: 'utf8' };
    case Type.LargeUtf8:
      return { type: 'large_utf8' };
    case Type.Binary:
      return { type: 'binary' };
    case Type.LargeBinary:
      return { type: 'large_binary' };
    case Type.FixedSizeBinary:
      return { type: 'fixed_size_binary', length: (type as ArrowModule.FixedSizeBinary).byteWidth };
    case Type.Date:
      return { type: (type as ArrowModule.Date_).unit === DateUnit.DAY ? 'date32' : 'date64' };
    case Type.Timestamp:
      return { type: 'timestamp' };
    case Type.Duration:
      return { type: 'duration' };
    case Type.Time:
      return { type: (type as ArrowModule.Time).bitWidth === 32 ? 'time32' : 'time64' };
    case Type.Decimal:
      return { type: `decimal${(type as ArrowModule.Decimal).bitWidth}` };
    case Type.List:
      return { type: 'list', fields: type.children.map(toJsonArrowField) };
    case Type.FixedSizeList:
      return {
        type: 'fixed_size_list',
        fields: type.children.map(toJsonArrowField),
        length: (type as ArrowModule.FixedSizeList).listSize,
      };
    case Type.Struct:
      return { type: 'struct', fields: type.children.map(toJsonArrowField) };
    case Type.Map:
      return { type: 'map', fields: type.children.map(toJsonArrowField) };
    case Type.Dictionary:
      // Dictionary is an encoding; the logical type is the value type.
      return toJsonArrowType((type as ArrowModule.Dictionary).dictionary);
    default:
      return { type: String(type).toLowerCase() };
  }
}

function invalidType(message: string): never {
  throw new InvalidInputError(`invalid JSON Arrow data type: ${message}`);
}

/** JSON Arrow type → CJS-copy Arrow DataType (what LanceDB's alterColumns/addColumns accept). */
export function fromJsonArrowType(json: unknown, depth = 1): ArrowDataType {
  if (depth > MAX_SCHEMA_DEPTH) invalidType(`fields nest more than ${MAX_SCHEMA_DEPTH} levels deep`);
  if (typeof json !== 'object' || json === null || typeof (json as JsonArrowDataType).type !== 'string') {
    invalidType('expected an object with a string "type"');
  }
  const { type, fields, length } = json as JsonArrowDataType;
  const arrow = loadArrow();
  const name = type.toLowerCase();
  const child = (): ArrowField => {
    if (!Array.isArray(fields) || fields.length !== 1) invalidType(`"${name}" needs exactly one entry in "fields"`);
    return fromJsonArrowField(fields[0], depth + 1);
  };
  const positiveLength = (): number => {
    if (!Number.isSafeInteger(length) || (length as number) <= 0) invalidType(`"${name}" needs a positive "length"`);
    return length as number;
  };
  switch (name) {
    case 'null':
      return new arrow.Null();
    case 'bool':
    case 'boolean':
      return new arrow.Bool();
    case 'int8':
      return new arrow.Int8();
    case 'int16':
      return new arrow.Int16();
    case 'int32':
      return new arrow.Int32();
    case 'int64':
      return new arrow.Int64();
    case 'uint8':
      return new arrow.Uint8();
    case 'uint16':
      return new arrow.Uint16();
    case 'uint32':
      return new arrow.Uint32();
    case 'uint64':
      return new arrow.Uint64();
    case 'float16':
    case 'halffloat':
      return new arrow.Float16();
    case 'float32':
    case 'float':
      return new arrow.Float32();
    case 'float64':
    case 'double':
      return new arrow.Float64();
    case 'utf8':
    case 'string':
      return new arrow.Utf8();
    case 'large_utf8':
    case 'large_string':
      return new arrow.LargeUtf8();
    case 'binary':
      return new arrow.Binary();
    case 'large_binary':
      return new arrow.LargeBinary();
    case 'fixed_size_binary':
      return new arrow.FixedSizeBinary(positiveLength());
    case 'date32':
      return new arrow.DateDay();
    case 'date64':
      return new arrow.DateMillisecond();
    case 'timestamp':
      // The JSON form carries no unit; lance-namespace reads it as microseconds.
      return new arrow.TimestampMicrosecond();
    case 'list':
      return new arrow.List(child());
    case 'fixed_size_list':
      return new arrow.FixedSizeList(positiveLength(), child());
    case 'struct':
      if (!Array.isArray(fields) || fields.length === 0) invalidType('"struct" needs "fields"');
      return new arrow.Struct(fields.map((f) => fromJsonArrowField(f, depth + 1)));
    default:
      return invalidType(`unsupported type "${type}"`);
  }
}

export function fromJsonArrowField(json: unknown, depth = 1): ArrowField {
  if (typeof json !== 'object' || json === null) invalidType('field must be an object');
  const f = json as Partial<JsonArrowField>;
  if (typeof f.name !== 'string' || f.name === '') invalidType('field needs a non-empty "name"');
  checkFieldName(f.name, 'JSON Arrow field', { topLevel: depth === 1 });
  const metadata = f.metadata ? new Map(Object.entries(f.metadata)) : undefined;
  return new (loadArrow().Field)(f.name, fromJsonArrowType(f.type, depth), f.nullable ?? true, metadata);
}

/** JSON Arrow schema → CJS-copy Arrow Schema (e.g. for an empty table created from a JSON schema). */
export function fromJsonArrowSchema(json: unknown): ArrowSchema {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as JsonArrowSchema).fields)) {
    invalidType('schema must be an object with a "fields" array');
  }
  const { fields, metadata } = json as JsonArrowSchema;
  return new (loadArrow().Schema)(fields.map((f) => fromJsonArrowField(f)), metadata ? new Map(Object.entries(metadata)) : undefined);
}
