import { StorageUnavailableError } from '../../errors.js';

/**
 * What an S3 error means for the catalog (issue #35; the table "S3 error → rask answer" in
 * docs/protocols.md). Classified by HTTP status and error name/code, never by class: the SDK has
 * no modeled class for most of these, a HEAD answer has no body to name its error, and errors
 * from the network (timeouts, resets) carry no status at all.
 */

export function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

function nameOf(error: unknown): string {
  return String((error as { name?: unknown } | undefined)?.name ?? '');
}

function codeOf(error: unknown): string {
  return String((error as { code?: unknown } | undefined)?.code ?? '');
}

/** Node's socket-level failures (node-http-handler keeps the code, and renames resets to TimeoutError). */
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** S3 asks the caller to slow down (it did not apply the request). */
export function isThrottling(error: unknown): boolean {
  const name = nameOf(error);
  return name === 'SlowDown' || name === 'Throttling' || name === 'ThrottlingException' || statusOf(error) === 429;
}

/** A 409: a concurrent conditional write on the key was in flight (ConditionalRequestConflict, OperationAborted); nothing was written. */
export function isConditionalConflict(error: unknown): boolean {
  return statusOf(error) === 409;
}

/** S3 could not answer now, or the answer never arrived: worth retrying later. */
export function isTransient(error: unknown): boolean {
  const status = statusOf(error);
  // 501 NotImplemented: S3 does not support what we asked, which no retry changes (a bug of ours).
  if (status !== undefined && status >= 500) return status !== 501;
  const name = nameOf(error);
  return (
    isThrottling(error) ||
    name === 'TimeoutError' ||
    name === 'RequestTimeout' ||
    name === 'AbortError' ||
    NETWORK_CODES.has(codeOf(error))
  );
}

/**
 * Whether a failed attempt may have been applied: anything but a 4xx answer (S3 refused it) or
 * a SlowDown (S3 throttled it before applying). A 500, a timeout or a reset after the request
 * was sent may hide a write that landed. Erring towards "unknown" only costs a read.
 */
export function outcomeUnknown(error: unknown): boolean {
  const status = statusOf(error);
  if (status !== undefined && status >= 400 && status < 500) return false;
  return !isThrottling(error);
}

/**
 * The error the catalog sees for a failed S3 request: a StorageUnavailableError (503 / code 17
 * with Retry-After) when S3 was throttling, failing or unreachable, or `error` itself (a
 * misconfiguration such as AccessDenied or NoSuchBucket is a bug of the deployment: 500 / 18).
 */
export function storageFailure(error: unknown): unknown {
  if (error instanceof StorageUnavailableError) return error;
  if (isConditionalConflict(error)) {
    return new StorageUnavailableError('the object store kept reporting concurrent conditional writes; retry', { cause: error });
  }
  if (!isTransient(error)) return error;
  if (isThrottling(error)) return new StorageUnavailableError('the object store is throttling requests; retry with backoff', { cause: error, retryAfterSeconds: 2 });
  if (nameOf(error) === 'AbortError') {
    return new StorageUnavailableError('the object store did not answer within the request deadline; retry', { cause: error });
  }
  return new StorageUnavailableError('the object store is unavailable; retry', { cause: error });
}
