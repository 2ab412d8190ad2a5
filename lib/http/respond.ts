import { CatalogError, ErrorCode } from '../errors.js';
import type { HttpResponse } from './types.js';
import { TransportError } from './transport-errors.js';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function jsonResponse(status: number, value: unknown): HttpResponse {
  return { status, headers: { ...JSON_HEADERS }, body: Buffer.from(JSON.stringify(value)) };
}

export interface ErrorLogger {
  error(message: string, fields: Record<string, unknown>): void;
}

/**
 * The one place an error becomes a response: the spec's ErrorResponse `{code, error, detail?,
 * instance}`. Anything that is not a CatalogError is an internal error whose message is not
 * exposed (it may carry paths or secrets); it is logged with the request id instead.
 */
export function errorResponse(err: unknown, requestId: string, logger?: ErrorLogger): HttpResponse {
  if (err instanceof CatalogError) {
    const body: Record<string, unknown> = { code: err.code, error: err.message, instance: requestId };
    if (err.detail !== undefined) body.detail = err.detail;
    const res = jsonResponse(err.status, body);
    if (err instanceof TransportError) Object.assign(res.headers, err.headers);
    if (err.code === ErrorCode.Internal) logger?.error('internal error', { requestId, err: describe(err) });
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

function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}
