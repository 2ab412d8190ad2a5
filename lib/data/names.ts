/**
 * Names LanceDB turns into file names or field paths, checked before it sees them. Without these
 * checks LanceDB 0.31.0 answers 500 for caller mistakes ("File name too long", "Top level field
 * … cannot contain `.`", "DepthLimitReached"), or accepts a name it cannot read back: a
 * non-ASCII tag is percent-encoded twice on the way to its file, and every later tags/list of
 * the table fails.
 */
// Types straight from apache-arrow: arrow.ts imports this module's checks, so importing its
// aliases back would close a circle.
import type { Field as ArrowField, Schema as ArrowSchema } from 'apache-arrow';
import { InvalidInputError } from '../errors.js';
import { optString } from './validate.js';

/** Nesting of struct / list fields in one schema; LanceDB's IPC reader stops at 64. */
export const MAX_SCHEMA_DEPTH = 32;
/** Bytes of one field name (a file-name segment's limit, with room for Lance's own suffixes). */
export const MAX_FIELD_NAME_BYTES = 255;
/**
 * Tag and branch names become file names (`_refs/tags/<name>.json`, `tree/<name>/`): ASCII
 * letters, digits, `.`, `_` and `-`, not starting with `.` or `-`, at most 200 bytes (a file
 * name holds 255).
 */
export const REF_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A field name: non-empty, no control characters, at most 255 bytes; a top-level one has no `.`. */
export function checkFieldName(name: string, field: string, options: { topLevel: boolean }): string {
  // An IPC field without a name decodes to null, whatever the type says.
  if (typeof name !== 'string' || name === '') throw new InvalidInputError(`${field}: a column name must not be empty`);
  if (CONTROL.test(name)) throw new InvalidInputError(`${field}: column name ${JSON.stringify(name)} contains a control character`);
  if (Buffer.byteLength(name) > MAX_FIELD_NAME_BYTES) {
    throw new InvalidInputError(`${field}: a column name is at most ${MAX_FIELD_NAME_BYTES} bytes`);
  }
  if (options.topLevel && name.includes('.')) {
    throw new InvalidInputError(
      `${field}: column name ${JSON.stringify(name)} contains "."; "." separates the levels of a field path, so a top-level column name cannot hold one`,
    );
  }
  return name;
}

/** apache-arrow's `Type.Struct` (a type import only here: arrow.ts loads the one runtime copy). */
const STRUCT_TYPE_ID = 13;

/**
 * Every field of a schema: names as above, nesting at most MAX_SCHEMA_DEPTH levels. Only the
 * top level and a struct's children are columns (a field path names them); the child of a list
 * or a map's entries is a slot whose name nobody addresses, and writers leave it empty or null
 * (apache-arrow's own tableFromArrays does), so its name is not checked.
 */
export function checkArrowSchema(schema: ArrowSchema, what = 'schema'): void {
  const visit = (fields: readonly ArrowField[], depth: number, at: string, named: boolean) => {
    if (depth > MAX_SCHEMA_DEPTH) {
      throw new InvalidInputError(`${what} nests fields more than ${MAX_SCHEMA_DEPTH} levels deep (at ${at})`);
    }
    for (const f of fields) {
      if (named) checkFieldName(f.name, what, { topLevel: depth === 1 });
      const label = named ? f.name : '[]';
      if (f.type.children?.length) visit(f.type.children, depth + 1, at ? `${at}.${label}` : label, f.type.typeId === STRUCT_TYPE_ID);
    }
  };
  visit(schema.fields, 1, '', true);
}

/** A tag or branch name (REF_NAME), or undefined when absent or empty. */
export function optRefName(value: unknown, field: string): string | undefined {
  const name = optString(value, field);
  if (!name) return undefined;
  if (!REF_NAME.test(name)) {
    throw new InvalidInputError(
      `"${field}" must be 1–200 ASCII letters, digits, ".", "_" or "-", not starting with "." or "-" (tag and branch names become file names)`,
    );
  }
  return name;
}

export function reqRefName(value: unknown, field: string): string {
  const name = optRefName(value, field);
  if (name === undefined) throw new InvalidInputError(`"${field}" must be a non-empty string`);
  return name;
}

/** Lance field path: dot-separated segments, backtick-quoted where a name holds a dot. */
export function splitFieldPath(path: string): string[] {
  const segments: string[] = [];
  let i = 0;
  while (i <= path.length) {
    if (path[i] === '`') {
      let seg = '';
      i++;
      while (i < path.length && !(path[i] === '`' && path[i + 1] !== '`')) {
        seg += path[i];
        i += path[i] === '`' ? 2 : 1;
      }
      segments.push(seg);
      i += 2; // closing backtick and the dot after it
    } else {
      const dot = path.indexOf('.', i);
      const end = dot < 0 ? path.length : dot;
      segments.push(path.slice(i, end));
      i = end + 1;
    }
  }
  return segments;
}
