import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { InvalidInputError } from '../errors.js';
import { requestIdOf } from './ids.js';
import { errorResponse, type ErrorLogger } from './respond.js';
import type { ResponseObserver } from './node-adapter.js';
import type { Router } from './router.js';
import type { HttpRequest, HttpResponse } from '../contract/http.js';

/**
 * API Gateway REST API (v1) proxy events ⇄ HttpRequest/HttpResponse. REST v1 is used because it
 * keeps `event.path` percent-encoded: HTTP API v2 decodes the path before routing, which loses
 * `%2F` inside a name and the difference between `+` and a space.
 */
export function toHttpRequest(event: APIGatewayProxyEvent): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (values?.length) headers[name.toLowerCase()] = values.join(', ');
  }
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && headers[name.toLowerCase()] === undefined) headers[name.toLowerCase()] = value;
  }
  // The client's own id when it sent a valid one (lib/http/ids.ts); API Gateway's otherwise.
  const requestId = requestIdOf(headers, () => event.requestContext?.requestId ?? randomUUID());
  // v1 has no raw query string; re-encode the decoded values (order within a key is kept, which
  // is what matters for merge_insert's repeated `on`).
  const query = new URLSearchParams();
  const multi = event.multiValueQueryStringParameters ?? {};
  for (const [name, values] of Object.entries(multi)) for (const v of values ?? []) query.append(name, v);
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && !(name in multi)) query.append(name, value);
  }
  if (typeof event.path !== 'string' || !event.httpMethod) {
    throw new InvalidInputError('malformed API Gateway event: path and httpMethod are required');
  }
  const body = event.body == null ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  // What the REQUEST authorizer put in its context (string values); the guard trusts only this.
  const context = event.requestContext?.authorizer;
  const authorizer =
    context && typeof context.principal === 'string'
      ? Object.fromEntries(Object.entries(context).filter(([, v]) => typeof v === 'string')) as Record<string, string>
      : undefined;
  return { method: event.httpMethod, rawPath: event.path, rawQuery: query.toString(), headers, body, requestId, ...(authorizer ? { authorizer } : {}) };
}

export function toProxyResult(response: HttpResponse): APIGatewayProxyResult {
  const text = (response.headers['content-type'] ?? '').startsWith('application/json') || response.body.length === 0;
  return {
    statusCode: response.status,
    headers: response.headers,
    body: text ? response.body.toString('utf8') : response.body.toString('base64'),
    isBase64Encoded: !text,
  };
}

/**
 * A Lambda handler serving `router`; a malformed event gets the JSON error contract too.
 * `onResponse` sees every answer (request lines and per-operation metrics, lib/observability/).
 */
export function lambdaHandler(router: () => Promise<Router>, logger?: ErrorLogger, onResponse?: ResponseObserver) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const started = performance.now();
    let request: HttpRequest;
    let response: HttpResponse;
    try {
      request = toHttpRequest(event);
      response = await (await router())(request);
    } catch (err) {
      // A malformed event, or an app that failed to start (configuration, S3 unreachable).
      const requestId = event?.requestContext?.requestId ?? randomUUID();
      request = { method: event?.httpMethod ?? 'GET', rawPath: event?.path ?? '/', rawQuery: '', headers: {}, body: Buffer.alloc(0), requestId };
      response = errorResponse(err, requestId, logger);
    }
    onResponse?.({ method: request.method, url: request.rawPath, requestId: request.requestId }, response, performance.now() - started);
    return toProxyResult(response);
  };
}
