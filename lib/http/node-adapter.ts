import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOf } from './ids.js';
import { errorResponse, type ErrorLogger } from './respond.js';
import type { GateVerdict } from './local-gate.js';
import type { Router } from './router.js';
import { payloadTooLarge, serverBusy } from './transport-errors.js';
import type { HttpRequest, HttpResponse } from '../contract/http.js';

/** Called once per answered request (the local server's access log, lib/http/access-log.ts). */
export type ResponseObserver = (
  request: { readonly method: string; readonly url: string; readonly requestId: string },
  response: HttpResponse,
  ms: number,
) => void;

/**
 * node:http ⇄ HttpRequest/HttpResponse. Only translation, and the optional `gate` on the headers
 * (the local server's drive-by policy): the router does everything else.
 * The raw URL is kept encoded so ids decode exactly (`+` vs space, `%2F` inside a name).
 */
export interface NodeListenerOptions {
  readonly maxBodyBytes: number;
  /**
   * Request-body bytes buffered across all requests at once. A request whose declared (or, when
   * chunked, received) body would cross it is answered 503 / code 17 with Retry-After and not
   * read, so many large uploads at once cannot grow memory without bound. Default: unbounded.
   */
  readonly maxInflightBodyBytes?: number;
  readonly logger?: ErrorLogger;
  /** Told of every answer (the request log line). */
  readonly onResponse?: ResponseObserver;
  /** Decides on the headers alone, before the body is read (the local server's, lib/http/local-gate.ts). */
  readonly gate?: (method: string, headers: IncomingMessage['headers']) => GateVerdict;
}

/** What a listener is holding right now (for tests and diagnostics). */
export interface ListenerStats {
  readonly inflightBodyBytes: number;
}

export function nodeListener(router: Router, options: NodeListenerOptions) {
  const budget = new BodyBudget(options.maxInflightBodyBytes ?? Number.POSITIVE_INFINITY);
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = requestIdOf(req.headers, randomUUID);
    const started = performance.now();
    const verdict = options.gate?.(req.method ?? 'GET', req.headers);
    const respond = (response: HttpResponse) => {
      if (verdict?.kind === 'pass') Object.assign(response.headers, verdict.headers);
      write(res, response);
      options.onResponse?.({ method: req.method ?? 'GET', url: req.url ?? '/', requestId }, response, performance.now() - started);
    };
    if (verdict && verdict.kind !== 'pass') {
      // Refused (or a preflight answered) on the headers: the body is discarded unread.
      req.resume();
      respond(verdict.kind === 'refuse' ? errorResponse(verdict.error, requestId, options.logger) : { status: 204, headers: verdict.headers, body: Buffer.alloc(0) });
      return;
    }
    const reservation = budget.open();
    // Released when the exchange ends, however it ends: the body lives until the answer is out.
    res.once('close', () => reservation.release());
    readBody(req, options.maxBodyBytes, reservation).then(
      async (body) => {
        const request = toHttpRequest(req, body, requestId);
        respond(await router(request));
      },
      (err: unknown) => {
        // The client went away mid-upload: nobody to answer, and not a server fault to log.
        if (res.destroyed) return;
        respond(errorResponse(err, requestId, options.logger));
        // Stop reading an oversized upload instead of buffering it.
        req.destroy();
      },
    );
  };
  return Object.assign(listener, { stats: (): ListenerStats => ({ inflightBodyBytes: budget.used }) });
}

/** Bytes of request bodies held across requests; each request reserves before it buffers. */
class BodyBudget {
  used = 0;
  constructor(readonly limit: number) {}

  open() {
    let held = 0;
    return {
      /** Reserve `n` more bytes for this request; false (nothing reserved) when over the limit. */
      take: (n: number): boolean => {
        if (this.used + n > this.limit) return false;
        this.used += n;
        held += n;
        return true;
      },
      release: () => {
        this.used -= held;
        held = 0;
      },
      held: () => held,
      limit: this.limit,
    };
  }
}

type Reservation = ReturnType<BodyBudget['open']>;

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

function readBody(req: IncomingMessage, limit: number, reservation: Reservation): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return Promise.reject(payloadTooLarge(declared, limit));
  // A declared length is reserved whole before reading; a chunked body reserves as it arrives.
  if (declared > 0 && !reservation.take(declared)) return Promise.reject(serverBusy(reservation.limit));
  return new Promise((resolve, reject) => {
    // A declared length is read straight into one buffer of that size, so a 5 MB upload is not
    // held twice (its chunks, then their concatenation): less garbage for V8's full collections,
    // which on a small machine run beside LanceDB's own threads.
    const whole = declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: unknown) => {
      req.removeAllListeners('data');
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      if (whole) {
        // Limit and budget were settled for the declared length before reading; Node's parser
        // stops at that length, so this only guards the copy.
        if (size + chunk.length > declared) return stop(payloadTooLarge(size + chunk.length, declared));
        chunk.copy(whole, size);
        size += chunk.length;
        return;
      }
      size += chunk.length;
      if (size > limit) return stop(payloadTooLarge(size, limit));
      if (size > reservation.held() && !reservation.take(size - reservation.held())) return stop(serverBusy(reservation.limit));
      chunks.push(chunk);
    });
    req.on('end', () => resolve(whole ? whole.subarray(0, size) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function write(res: ServerResponse, response: HttpResponse): void {
  if (res.headersSent) return;
  res.writeHead(response.status, { ...response.headers, 'content-length': String(response.body.length) });
  res.end(response.body);
}
