import { CatalogError, ErrorCode, StorageUnavailableError } from '../errors.js';
import type { HttpResponse } from '../contract/http.js';
import { redactText } from './redact.js';
import { TransportError } from './transport-errors.js';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function jsonResponse(status: number, value: unknown): HttpResponse {
  return { status, headers: { ...JSON_HEADERS }, body: Buffer.from(JSON.stringify(value)) };
}

export interface ErrorLogger {
  error(message: string, fields: Record<string, unknown>): void;
  /** For a client's error whose text was redacted: worth keeping, but not an operator alarm. */
  warn(message: string, fields: Record<string, unknown>): void;
  /** Routine facts worth a line (authorization decisions); absent where only problems are logged. */
  info?(message: string, fields: Record<string, unknown>): void;
  /** Request tracing (lib/trace.ts), used only at RASK_LOG_LEVEL=debug. */
  debug?(message: string, fields: Record<string, unknown>): void;
}

export interface ErrorResponseOptions {
  /** Absolute local directories (the data directory) that must never appear in a body. */
  readonly redact?: readonly string[];
}

/** Seconds a client should wait before retrying a 503 or 429 (both are transient by definition). */
export const RETRY_AFTER_SECONDS = 1;

/**
 * The one place an error becomes a response: the spec's ErrorResponse `{code, error, detail?,
 * instance}`. Anything that is not a CatalogError is an internal error whose message is not
 * exposed (it may carry paths or secrets); it is logged with the request id instead. A
 * CatalogError's text has storage paths and source locations removed (lib/http/redact.ts); when
 * that changed anything the full text is logged at warn level (a client's mistake, not an alarm),
 * and an internal error's at error level, both with the request id.
 * A 503 or 429 always carries Retry-After.
 */
export function errorResponse(err: unknown, requestId: string, logger?: ErrorLogger, options: ErrorResponseOptions = {}): HttpResponse {
  if (err instanceof CatalogError) {
    const error = redactText(err.message, options.redact);
    const detail = err.detail === undefined ? undefined : redactText(err.detail, options.redact);
    const body: Record<string, unknown> = { code: err.code, error, instance: requestId };
    if (detail !== undefined) body.detail = detail;
    if (err.code === ErrorCode.Internal && detail === undefined) body.detail = `see server logs for request ${requestId}`;
    const res = jsonResponse(err.status, body);
    if (err instanceof TransportError) Object.assign(res.headers, err.headers);
    // Storage that could not answer (issue #35): its own Retry-After, and the store's error in the log.
    if (err instanceof StorageUnavailableError) {
      res.headers['retry-after'] = String(err.retryAfterSeconds);
      logger?.warn('storage unavailable', { requestId, err: describe(err) });
    }
    if ((res.status === 503 || res.status === 429) && res.headers['retry-after'] === undefined) {
      res.headers['retry-after'] = String(RETRY_AFTER_SECONDS);
    }
    if (err.code === ErrorCode.Internal) logger?.error('internal error', { requestId, err: describe(err) });
    else if (error !== err.message || detail !== err.detail) logger?.warn('error text redacted', { requestId, err: describe(err) });
    return res;
  }
  logger?.error('unexpected error', { requestId, err: describe(err) });
  return jsonResponse(500, {
    code: ErrorCode.Internal,
    error: 'internal error',
    detail: `see server logs for request ${requestId}`,
    instance: requestId,
  });
}

/** The error with its cause chain (LanceDB's raw message lives on `cause`). */
function describe(err: unknown, depth = 0): string {
  const own = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  const cause = err instanceof Error ? err.cause : undefined;
  return cause === undefined || depth >= 5 ? own : `${own}\ncaused by: ${describe(cause, depth + 1)}`;
}
