/**
 * LanceDB errors → catalog errors.
 *
 * LanceDB (0.31.0, bundling Lance 8.0.0) throws plain `Error`s with `code: 'GenericFailure'`;
 * the only information is the message text, so the mapping is an ordered list of message
 * patterns. Each pattern was observed on 0.31.0 (test/data/errors.test.ts provokes them). Order
 * matters where messages overlap, e.g. "field 'x' does not exist in table schema" (a write whose
 * data has an extra column: schema validation) must win over the generic "does not exist"
 * (a missing column).
 */
import {
  CatalogError,
  ConcurrentModificationError,
  InternalError,
  InvalidInputError,
  NamespaceAlreadyExistsError,
  NamespaceNotEmptyError,
  NamespaceNotFoundError,
  PermissionDeniedError,
  ServiceUnavailableError,
  TableAlreadyExistsError,
  TableBranchAlreadyExistsError,
  TableBranchNotFoundError,
  TableColumnNotFoundError,
  TableIndexAlreadyExistsError,
  TableIndexNotFoundError,
  TableNotFoundError,
  TableSchemaValidationError,
  TableTagAlreadyExistsError,
  TableTagNotFoundError,
  TableVersionNotFoundError,
  ThrottlingError,
  UnsupportedError,
} from '../../errors.js';

type ErrorClass = new (message: string, options?: { detail?: string; cause?: unknown }) => CatalogError;

export interface MapContext {
  /**
   * The failing call was a branch creation. Lance 8 reports a duplicate branch name as an
   * internal error ("Clone operation should not enter build_manifest"), which only means
   * "already exists" in that context.
   */
  readonly creatingBranch?: boolean;
}

/** Messages whose raw form is a storage path; the client is better served by the object's name. */
const REWRITES: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray) => string]> = [
  [/Not found: \S*\/tree\/(.+?)\/_versions/, (m) => `branch "${m[1]}" not found`],
  [/_versions\/(\d+)\.manifest was not found/, (m) => `version ${m[1]} not found`],
  [/Version not found error: version (\S+) does not exist/, (m) => `version ${m[1]} not found`],
  // Lance appends its whole internal schema dump to this one.
  [/Duplicate field name "([^"]+)"/, (m) => `duplicate field name "${m[1]}"`],
];

const RULES: ReadonlyArray<readonly [RegExp, ErrorClass]> = [
  // A Rust panic caught by napi: never the caller's fault as far as we can tell.
  [/Panic in async function|panicked at/, InternalError],
  [/Table '.*' was not found/, TableNotFoundError],
  [/Table '.*' already exists/, TableAlreadyExistsError],
  [/Namespace not found/, NamespaceNotFoundError],
  [/Namespace already exists/, NamespaceAlreadyExistsError],
  [/Namespace not empty/, NamespaceNotEmptyError],
  [/Ref not found error: tag/i, TableTagNotFoundError],
  [/Ref conflict error: tag/i, TableTagAlreadyExistsError],
  [/Ref not found error: branch/i, TableBranchNotFoundError],
  [/Ref conflict error: branch/i, TableBranchAlreadyExistsError],
  // Opening a branch that has no directory under <table>/tree/<branch>/.
  [/Not found: \S*\/tree\/[^\s]*_versions/, TableBranchNotFoundError],
  [/Version not found error|_versions\/\S*\.manifest was not found/, TableVersionNotFoundError],
  // A location that holds no dataset (no _versions directory).
  [/Dataset at path \S+ was not found|Not found: \S*_versions\b/, TableNotFoundError],
  [/Lance index not found|Index '.*' not found/, TableIndexNotFoundError],
  [/Index name '.*' already exists/, TableIndexAlreadyExistsError],
  // Data whose schema does not fit the table (insert, overwrite, merge-insert).
  [
    /field '.*' does not exist in table schema|Append with different schema|Cast error|partial-schema source|non-nullable field|contains null values/i,
    TableSchemaValidationError,
  ],
  [
    /No field named|Column .* does not exist|column .* does not exist in schema|Field '.*' not found|Field path .* not found|key column '.*' does not exist|Column .* not found/i,
    TableColumnNotFoundError,
  ],
  // "Incompatible transaction": a concurrent commit (e.g. two UpdateConfig) won; retrying may succeed.
  [/commit conflict|conflicting transaction|concurrent modification|Incompatible transaction/i, ConcurrentModificationError],
  [/timed out/i, ServiceUnavailableError],
  [/not supported|not yet implemented|only supported on Enterprise/i, UnsupportedError],
  [/AccessDenied|Access Denied|permission denied|403 Forbidden/i, PermissionDeniedError],
  [/SlowDown|Too Many Requests|throttl/i, ThrottlingError],
  // SQL that parses but cannot be planned or evaluated (types, division by zero): the caller's text.
  [
    /Error during planning|Divide by zero|Cannot coerce|Cannot infer common|Error applying filter expression|type_coercion/i,
    InvalidInputError,
  ],
  // Parameters LanceDB only checks while building: more IVF partitions than rows, and schema
  // shapes its own validation refuses (names.ts checks these first; these are the backstop).
  [/KMeans cannot train|cannot contain `\.`|DepthLimitReached|File name too long/i, InvalidInputError],
  [
    /Invalid user input|Invalid input|Not enough rows to train|Ref is invalid|Error parsing Path|Invalid data type|Invalid distance type|Invalid table name|sql parser error|Error parsing|Schema Error|Duplicate field name|k must be positive|already exists|cannot be modified when a specific version/i,
    InvalidInputError,
  ],
];

/**
 * The readable part of a LanceDB message: LanceDB repeats the whole chain after "Caused by:",
 * and appends Rust source locations that mean nothing to a client.
 */
export function cleanLanceMessage(raw: string): string {
  let msg = raw;
  const causedBy = msg.indexOf('  Caused by:');
  if (causedBy > 0) msg = msg.slice(0, causedBy);
  msg = msg
    .replace(/,?\s*(?:location:\s*)?\S+\.rs:\d+:\d+/g, '')
    .replace(/^Failed to [^:,]+: GenericFailure, /, '')
    .replace(/^lance error: /, '')
    .replace(/^Invalid user input: /, '')
    .replace(/^LanceError\((\w+)\): /, '')
    .replace(/^Unprocessable: /, '');
  return msg.trim().replace(/[,.]$/, '') || raw;
}

export function mapLanceError(err: unknown, context: MapContext = {}): CatalogError {
  if (err instanceof CatalogError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  if (context.creatingBranch && /Clone operation should not enter build_manifest/.test(raw)) {
    return new TableBranchAlreadyExistsError('branch already exists', { cause: err });
  }
  const ErrorType = RULES.find(([pattern]) => pattern.test(raw))?.[1] ?? InternalError;
  if (ErrorType === InternalError) {
    // The raw message (storage paths, Rust source locations) stays on `cause`, for the log only.
    return new InternalError(`LanceDB error: ${cleanLanceMessage(raw)}`, { cause: err });
  }
  for (const [pattern, rewrite] of REWRITES) {
    const m = pattern.exec(raw);
    if (m) return new ErrorType(rewrite(m), { cause: err });
  }
  return new ErrorType(cleanLanceMessage(raw), { cause: err });
}
