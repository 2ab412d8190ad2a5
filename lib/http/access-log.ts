import type { ResponseObserver } from './node-adapter.js';
import type { HttpResponse } from '../contract/http.js';

export interface AccessLogger {
  info(message: string, fields: Record<string, unknown>): void;
}

/**
 * One line per request: method, path (never the query: it can carry filters and JSON maps),
 * status, the error body's integer `code`, milliseconds and the request id, which is also the
 * error body's `instance` — so a client's error report finds its log line. All at info: an
 * internal error also gets its own error line with the stack (lib/http/respond.ts).
 */
export function accessLog(logger: AccessLogger): ResponseObserver {
  return (request, response, ms) => {
    const q = request.url.indexOf('?');
    const fields: Record<string, unknown> = {
      method: request.method,
      path: q < 0 ? request.url : request.url.slice(0, q),
      status: response.status,
      ...codeOf(response),
      ms: Math.round(ms * 10) / 10,
      requestId: request.requestId,
    };
    logger.info('request', fields);
  };
}

/** The `code` of a JSON error body; nothing for successes and non-JSON answers. */
function codeOf(response: HttpResponse): { code?: number } {
  if (response.status < 400 || !response.headers['content-type']?.startsWith('application/json')) return {};
  try {
    const code = (JSON.parse(response.body.toString('utf8')) as { code?: unknown }).code;
    return typeof code === 'number' ? { code } : {};
  } catch {
    return {};
  }
}
