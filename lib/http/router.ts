import { InvalidInputError, UnsupportedError } from '../errors.js';
import { OPERATIONS, type OperationDef } from '../operations/table.js';
import type { HandlerMap, Identity, OperationRequest } from '../operations/types.js';
import { formDecode, parseObjectId, sameId } from './ids.js';
import { RouteMatcher } from './match.js';
import { errorResponse, jsonResponse, type ErrorLogger } from './respond.js';
import { methodNotAllowed, payloadTooLarge, routeNotFound } from './transport-errors.js';
import type { HttpRequest, HttpResponse } from './types.js';

export interface RouterOptions<S> {
  readonly handlers: HandlerMap<S>;
  readonly services: S;
  /** Largest accepted body; Lambda's synchronous payload cap makes ~6 MB the real ceiling. */
  readonly maxBodyBytes: number;
  readonly logger?: ErrorLogger;
  /** Defaults to the 54 spec operations. */
  readonly operations?: readonly OperationDef[];
  /** Why an operation without a handler is unsupported, shown to the caller. */
  readonly unsupportedReasons?: Readonly<Record<string, string>>;
}

export type Router = (request: HttpRequest) => Promise<HttpResponse>;

export function createRouter<S>(options: RouterOptions<S>): Router {
  const matcher = new RouteMatcher(options.operations ?? OPERATIONS);
  return async (request) => {
    try {
      return await dispatch(matcher, options, request);
    } catch (err) {
      return errorResponse(err, request.requestId, options.logger);
    }
  };
}

async function dispatch<S>(matcher: RouteMatcher, options: RouterOptions<S>, request: HttpRequest): Promise<HttpResponse> {
  const method = request.method.toUpperCase();
  const found = matcher.match(method, request.rawPath);
  if (found.kind === 'not-found') throw routeNotFound(method, request.rawPath);
  if (found.kind === 'method-not-allowed') throw methodNotAllowed(method, request.rawPath, found.allowed);
  if (request.body.length > options.maxBodyBytes) throw payloadTooLarge(request.body.length, options.maxBodyBytes);

  const { operation, params } = found.match;
  const handler = options.handlers[operation.operationId];
  if (!handler) {
    const reason = options.unsupportedReasons?.[operation.operationId] ?? 'it is not implemented by this server yet';
    throw new UnsupportedError(`${operation.operationId} is not supported: ${reason}`);
  }
  const decoded = decodeRequest(operation, params, request);
  const result = await handler(decoded, options.services);
  return encodeResponse(operation, result);
}

export function decodeRequest(
  operation: OperationDef,
  params: Readonly<Record<string, string>>,
  request: HttpRequest,
): OperationRequest {
  const query = new URLSearchParams(request.rawQuery);
  const delimiter = query.get('delimiter') ?? '$';
  if (delimiter.length === 0) throw new InvalidInputError('query parameter delimiter must not be empty');
  const id = params.id === undefined ? [] : parseObjectId(params.id, delimiter);
  const indexName = params.index_name === undefined ? undefined : formDecode(params.index_name, 'index name');

  let body: Record<string, unknown> = {};
  if (operation.request === 'map') body = parseJsonBody(request.body);
  if (operation.request === 'json') {
    body = parseJsonBody(request.body);
    if (params.id !== undefined) {
      if (body.id === undefined || body.id === null) body.id = id;
      else if (!Array.isArray(body.id) || !body.id.every((p) => typeof p === 'string')) {
        throw new InvalidInputError('body field id must be an array of strings');
      } else if (!sameId(body.id as string[], id)) {
        throw new InvalidInputError(
          `body id ${JSON.stringify(body.id)} does not match the id in the path ${JSON.stringify(id)}`,
        );
      }
    }
  }
  return {
    operation,
    id,
    indexName,
    delimiter,
    query,
    body,
    bytes: operation.request === 'arrow' ? request.body : Buffer.alloc(0),
    identity: identityOf(request.headers, body),
    headers: request.headers,
    requestId: request.requestId,
  };
}

/** Absent, empty and literal `null` bodies all mean "no fields" (version/list sends `null`). */
function parseJsonBody(bytes: Buffer): Record<string, unknown> {
  const text = bytes.toString('utf8').trim();
  if (text.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError('request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** Headers win over the body's `identity`, as the spec's REST binding says. */
function identityOf(headers: Readonly<Record<string, string>>, body: Record<string, unknown>): Identity {
  const fromBody = (typeof body.identity === 'object' && body.identity !== null ? body.identity : {}) as Record<
    string,
    unknown
  >;
  const auth = headers.authorization;
  const bearer = auth && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() : undefined;
  const apiKey = headers['x-api-key'] ?? (typeof fromBody.api_key === 'string' ? fromBody.api_key : undefined);
  const bearerToken = bearer ?? (typeof fromBody.auth_token === 'string' ? fromBody.auth_token : undefined);
  return { ...(apiKey ? { apiKey } : {}), ...(bearerToken ? { bearerToken } : {}) };
}

function encodeResponse(operation: OperationDef, result: unknown): HttpResponse {
  switch (operation.response) {
    case 'empty':
      return { status: operation.status, headers: {}, body: Buffer.alloc(0) };
    case 'arrow':
      if (!Buffer.isBuffer(result)) throw new Error(`${operation.operationId} handler must return Arrow bytes`);
      return {
        status: operation.status,
        headers: { 'content-type': 'application/vnd.apache.arrow.file' },
        body: result,
      };
    case 'json':
      // Never a bodiless JSON op: legacy clients fail to parse an empty body.
      return jsonResponse(operation.status, result === undefined ? {} : result);
  }
}
