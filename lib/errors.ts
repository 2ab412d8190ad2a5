/**
 * The closed family of catalog errors. Domain code throws these; exactly one place
 * (lib/http/respond.ts) turns them into the spec's ErrorResponse. The numeric codes are the
 * Lance Namespace spec's ErrorResponse.code values; the official client branches on the code
 * alone, never on the HTTP status, so the code is what must be right.
 */

export const ErrorCode = {
  Unsupported: 0,
  NamespaceNotFound: 1,
  NamespaceAlreadyExists: 2,
  NamespaceNotEmpty: 3,
  TableNotFound: 4,
  TableAlreadyExists: 5,
  TableIndexNotFound: 6,
  TableIndexAlreadyExists: 7,
  TableTagNotFound: 8,
  TableTagAlreadyExists: 9,
  TransactionNotFound: 10,
  TableVersionNotFound: 11,
  TableColumnNotFound: 12,
  InvalidInput: 13,
  ConcurrentModification: 14,
  PermissionDenied: 15,
  Unauthenticated: 16,
  ServiceUnavailable: 17,
  Internal: 18,
  InvalidTableState: 19,
  TableSchemaValidationError: 20,
  Throttling: 21,
  TableBranchNotFound: 22,
  TableBranchAlreadyExists: 23,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

/** HTTP status for each code (the reference server's mapping; 429 for throttling). */
export const STATUS_BY_CODE: Readonly<Record<ErrorCodeValue, number>> = {
  0: 406,
  1: 404,
  2: 409,
  3: 409,
  4: 404,
  5: 409,
  6: 404,
  7: 409,
  8: 404,
  9: 409,
  10: 404,
  11: 404,
  12: 404,
  13: 400,
  14: 409,
  15: 403,
  16: 401,
  17: 503,
  18: 500,
  19: 409,
  20: 400,
  21: 429,
  22: 404,
  23: 409,
};

export interface CatalogErrorOptions extends ErrorOptions {
  /** Longer explanation; sent as `detail`. */
  detail?: string;
}

export class CatalogError extends Error {
  readonly code: ErrorCodeValue;
  readonly detail?: string;

  constructor(code: ErrorCodeValue, message: string, options: CatalogErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.detail = options.detail;
    this.name = 'CatalogError';
  }

  get status(): number {
    return STATUS_BY_CODE[this.code];
  }
}

function family(code: ErrorCodeValue, name: string) {
  const cls = class extends CatalogError {
    constructor(message: string, options?: CatalogErrorOptions) {
      super(code, message, options);
      this.name = name;
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
}

export const UnsupportedError = family(ErrorCode.Unsupported, 'UnsupportedError');
export const NamespaceNotFoundError = family(ErrorCode.NamespaceNotFound, 'NamespaceNotFoundError');
export const NamespaceAlreadyExistsError = family(ErrorCode.NamespaceAlreadyExists, 'NamespaceAlreadyExistsError');
export const NamespaceNotEmptyError = family(ErrorCode.NamespaceNotEmpty, 'NamespaceNotEmptyError');
export const TableNotFoundError = family(ErrorCode.TableNotFound, 'TableNotFoundError');
export const TableAlreadyExistsError = family(ErrorCode.TableAlreadyExists, 'TableAlreadyExistsError');
export const TableIndexNotFoundError = family(ErrorCode.TableIndexNotFound, 'TableIndexNotFoundError');
export const TableIndexAlreadyExistsError = family(ErrorCode.TableIndexAlreadyExists, 'TableIndexAlreadyExistsError');
export const TableTagNotFoundError = family(ErrorCode.TableTagNotFound, 'TableTagNotFoundError');
export const TableTagAlreadyExistsError = family(ErrorCode.TableTagAlreadyExists, 'TableTagAlreadyExistsError');
export const TransactionNotFoundError = family(ErrorCode.TransactionNotFound, 'TransactionNotFoundError');
export const TableVersionNotFoundError = family(ErrorCode.TableVersionNotFound, 'TableVersionNotFoundError');
export const TableColumnNotFoundError = family(ErrorCode.TableColumnNotFound, 'TableColumnNotFoundError');
export const InvalidInputError = family(ErrorCode.InvalidInput, 'InvalidInputError');
export const ConcurrentModificationError = family(ErrorCode.ConcurrentModification, 'ConcurrentModificationError');
export const PermissionDeniedError = family(ErrorCode.PermissionDenied, 'PermissionDeniedError');
export const UnauthenticatedError = family(ErrorCode.Unauthenticated, 'UnauthenticatedError');
export const ServiceUnavailableError = family(ErrorCode.ServiceUnavailable, 'ServiceUnavailableError');
export const InternalError = family(ErrorCode.Internal, 'InternalError');
export const InvalidTableStateError = family(ErrorCode.InvalidTableState, 'InvalidTableStateError');
export const TableSchemaValidationError = family(ErrorCode.TableSchemaValidationError, 'TableSchemaValidationError');
export const ThrottlingError = family(ErrorCode.Throttling, 'ThrottlingError');
export const TableBranchNotFoundError = family(ErrorCode.TableBranchNotFound, 'TableBranchNotFoundError');
export const TableBranchAlreadyExistsError = family(ErrorCode.TableBranchAlreadyExists, 'TableBranchAlreadyExistsError');

// --- Storage that cannot answer (issue #35; docs/protocols.md, "When S3 fails") ---

/**
 * The object store could not answer: S3 throttling, an S3 5xx, a timeout or a reset after the
 * SDK's retries, a 409 ConditionalRequestConflict that outlived our own retries, no answer within
 * the request's deadline; on disk EIO, ENOSPC, EMFILE and the like. Transient by nature, so
 * 503 / code 17 with Retry-After (lib/http/respond.ts), never 500 / code 18, which says "a bug
 * of ours". The adapters throw it (lib/adapters/storage-errors.ts); its message names no bucket,
 * key or path, the cause carries the store's own error for the log.
 */
export class StorageUnavailableError extends CatalogError {
  /** What the answer's Retry-After says. */
  readonly retryAfterSeconds: number;

  constructor(message: string, options: CatalogErrorOptions & { retryAfterSeconds?: number } = {}) {
    super(ErrorCode.ServiceUnavailable, message, options);
    this.name = 'StorageUnavailableError';
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}

// --- The change feed (issue #27; docs/events.md, "The feed") ---

/**
 * A change-feed cursor older than the retention: what followed it may have expired, so resuming
 * from it could skip events. 410 Gone (the code is 13, invalid input: the client must start over
 * from `oldestCursor`, which the message and `detail` name).
 */
export class CursorExpiredError extends CatalogError {
  constructor(
    readonly cursor: string,
    readonly oldestCursor: string | undefined,
    retentionDays: number,
  ) {
    super(
      ErrorCode.InvalidInput,
      `cursor ${cursor} has expired: the change feed keeps ${retentionDays} days; ${
        oldestCursor === undefined ? 'the feed holds no event now; start over without since' : `the oldest cursor still held is ${oldestCursor}; start over from it (some changes in between may be gone)`
      }`,
      { detail: oldestCursor === undefined ? 'oldest_cursor: none' : `oldest_cursor: ${oldestCursor}` },
    );
    this.name = 'CursorExpiredError';
  }

  override get status(): number {
    return 410;
  }
}

// --- Object quotas (issue #28; docs/operations.md, "Object quotas") ---

/**
 * A create door refused because the project already holds its quota of that kind of object.
 * 403 / code 15: the official client does not retry a 403, and waiting does not help (a 429
 * would be retried); the message names the quota, the count and how to raise it, and `detail`
 * carries `quota: <kind>` for programs. Nothing was written.
 */
export class QuotaExceededError extends CatalogError {
  constructor(
    readonly kind: string,
    readonly limit: number,
    readonly used: number,
    message: string,
  ) {
    super(ErrorCode.PermissionDenied, message, { detail: `quota: ${kind}; limit: ${limit}; in use: ${used}` });
    this.name = 'QuotaExceededError';
  }
}
