import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorResponse, type ErrorLogger } from './respond.js';
import type { Router } from './router.js';
import { payloadTooLarge } from './transport-errors.js';
import type { HttpRequest, HttpResponse } from './types.js';

/** Called once per answered request (the local server's access log, lib/http/access-log.ts). */
export type ResponseObserver = (
  request: { readonly method: string; readonly url: string; readonly requestId: string },
  response: HttpResponse,
  ms: number,
) => void;

/**
 * node:http ⇄ HttpRequest/HttpResponse. Only translation: the router does everything else.
 * The raw URL is kept encoded so ids decode exactly (`+` vs space, `%2F` inside a name).
 */
export function nodeListener(
  router: Router,
  options: { maxBodyBytes: number; logger?: ErrorLogger; onResponse?: ResponseObserver },
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = randomUUID();
    const started = performance.now();
    const respond = (response: HttpResponse) => {
      write(res, response);
      options.onResponse?.({ method: req.method ?? 'GET', url: req.url ?? '/', requestId }, response, performance.now() - started);
    };
    readBody(req, options.maxBodyBytes).then(
      async (body) => {
        const request = toHttpRequest(req, body, requestId);
        respond(await router(request));
      },
      (err: unknown) => {
        respond(errorResponse(err, requestId, options.logger));
        // Stop reading an oversized upload instead of buffering it.
        req.destroy();
      },
    );
  };
}

function toHttpRequest(req: IncomingMessage, body: Buffer, requestId: string): HttpRequest {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    method: req.method ?? 'GET',
    rawPath: q < 0 ? url : url.slice(0, q),
    rawQuery: q < 0 ? '' : url.slice(q + 1),
    headers,
    body,
    requestId,
  };
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return Promise.reject(payloadTooLarge(declared, limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        reject(payloadTooLarge(size, limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function write(res: ServerResponse, response: HttpResponse): void {
  if (res.headersSent) return;
  res.writeHead(response.status, { ...response.headers, 'content-length': String(response.body.length) });
  res.end(response.body);
}
