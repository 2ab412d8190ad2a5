import { type Clock, DEFAULT_COMMIT_DEADLINE_MS, deadlineIn, withDeadline } from '../deadline.js';
import { CatalogError, ErrorCode, InvalidInputError, UnsupportedError } from '../errors.js';
import { ALL_OPERATIONS, type OperationDef } from '../contract/operations.js';
import type { HandlerMap, Identity, OperationRequest, RequestGuard } from '../contract/request.js';
import { checkJsonContentType } from './content-type.js';
import { formDecode, parseObjectId, sameId } from './ids.js';
import { step, traced, type TraceSink } from '../trace.js';
import { checkJsonDepth, checkProperties, DEFAULT_REQUEST_LIMITS, type RequestLimits } from './limits.js';
import { RouteMatcher } from './match.js';
import { errorResponse, jsonResponse, type ErrorLogger } from './respond.js';
import type { Limiter, Rate } from './rate-limit.js';
import { fingerprintOf, idempotencyKeyOf, mutates, runIdempotent, type IdempotencyOptions } from './idempotency.js';
import { methodNotAllowed, payloadTooLarge, routeNotFound } from './transport-errors.js';
import type { HttpRequest, HttpResponse } from '../contract/http.js';

export interface RouterOptions<S> {
  readonly handlers: HandlerMap<S>;
  readonly services: S;
  /** Largest accepted body; Lambda's synchronous payload cap makes ~6 MB the real ceiling. */
  readonly maxBodyBytes: number;
  readonly logger?: ErrorLogger;
  /** Defaults to the 54 spec operations and the control-plane doors. */
  readonly operations?: readonly OperationDef[];
  /** Why an operation without a handler is unsupported, shown to the caller. */
  readonly unsupportedReasons?: Readonly<Record<string, string>>;
  /** Each request's commit deadline (lib/deadline.ts); default 25 s, under API Gateway's 29 s. */
  readonly commitDeadlineMs?: number;
  readonly clock?: Clock;
  /** Authentication and authorization around every handler (lib/governance/guard.ts). */
  readonly guard?: RequestGuard<S>;
  /** Told of every request the guard refused for lack of permission (the audit event). */
  readonly onDenied?: (request: OperationRequest, error: Error) => Promise<void>;
  /** Local directories that never appear in an error body (lib/http/redact.ts). */
  readonly redactPaths?: readonly string[];
  /** JSON nesting depth and `properties` size (lib/http/limits.ts); default DEFAULT_REQUEST_LIMITS. */
  readonly requestLimits?: RequestLimits;
  /** Given at RASK_LOG_LEVEL=debug: each request is traced into it (lib/trace.ts). */
  readonly trace?: TraceSink;
  /**
   * Rates per principal (after authentication) and per project (after admission, from the
   * services the guard scoped to it); lib/http/rate-limit.ts. Absent: no limits here.
   */
  readonly rateLimits?: {
    readonly limiter: Limiter;
    readonly projectOf: (services: S) => string | undefined;
    /** The project's own rate (set through POST /v1/limits), when it has one. */
    readonly projectRate?: (services: S) => Promise<Rate | undefined>;
    /** The principal's own rate (set through POST /v1/principals/{principal}/limits), when it has one. */
    readonly principalRate?: (principal: string) => Promise<Rate | undefined>;
  };
  /** Idempotency keys on mutating operations (lib/http/idempotency.ts); absent: the header is ignored. */
  readonly idempotency?: IdempotencyOptions;
  /**
   * Object quotas (lib/operations/quota-admission.ts): a create door's slot is reserved after
   * admission and before its handler writes anything, and handed back if the handler refuses.
   * Absent: no quotas.
   */
  readonly quotas?: (request: OperationRequest, services: S) => Promise<{ failed(err: unknown): Promise<void> } | undefined>;
}

export type Router = (request: HttpRequest) => Promise<HttpResponse>;

export function createRouter<S>(options: RouterOptions<S>): Router {
  const matcher = new RouteMatcher(options.operations ?? ALL_OPERATIONS);
  return (request) =>
    traced(options.trace, request.requestId, async () => {
      try {
        return await dispatch(matcher, options, request);
      } catch (err) {
        return errorResponse(err, request.requestId, options.logger, { redact: options.redactPaths });
      }
    });
}

async function dispatch<S>(matcher: RouteMatcher, options: RouterOptions<S>, request: HttpRequest): Promise<HttpResponse> {
  const method = request.method.toUpperCase();
  const found = matcher.match(method, request.rawPath);
  if (found.kind === 'not-found') throw routeNotFound(method, request.rawPath);
  if (found.kind === 'method-not-allowed') throw methodNotAllowed(method, request.rawPath, found.allowed);
  if (request.body.length > options.maxBodyBytes) throw payloadTooLarge(request.body.length, options.maxBodyBytes);

  const { operation, params, base } = found.match;
  const handler = options.handlers[operation.operationId];
  if (!handler) {
    const reason = options.unsupportedReasons?.[operation.operationId] ?? 'it is not implemented by this server yet';
    throw new UnsupportedError(`${operation.operationId} is not supported: ${reason}`);
  }
  // Each step is timed in a debug line when the request is traced (docs/operations.md).
  const caller = await step('authenticate', async () => options.guard?.authenticate(request, operation));
  // Who is calling is known now; nothing is decoded or read for a caller over its rate.
  if (options.rateLimits) {
    const principal = caller?.principal ?? 'anonymous';
    await options.rateLimits.limiter.admitPrincipal(principal, caller ? await options.rateLimits.principalRate?.(principal) : undefined);
  }
  // Shape, after identity like every 400 (docs/governance.md, "The check order").
  checkJsonContentType(operation, request);
  const decoded = { ...decodeRequest(operation, params, request, base, options.requestLimits), ...(caller ? { caller } : {}) };
  // A malformed key is a 400 like any other shape error, before anything is admitted or run.
  const key = options.idempotency && mutates(operation) ? idempotencyKeyOf(request.headers) : undefined;
  const services = options.guard ? await step('admit', () => admitted(options, decoded)) : options.services;
  const project = options.rateLimits?.projectOf(services);
  if (project !== undefined) await options.rateLimits!.limiter.admitProject(project, await options.rateLimits!.projectRate?.(services));
  const run = async () => {
    const deadline = deadlineIn(options.commitDeadlineMs ?? DEFAULT_COMMIT_DEADLINE_MS, options.clock);
    const result = await step('handler', () =>
      withDeadline(deadline, async () => {
        // Inside the idempotent run: a replayed answer takes no second slot.
        const hold = await options.quotas?.(decoded, services);
        try {
          return await handler(decoded, services);
        } catch (err) {
          await hold?.failed(err).catch((e: unknown) => options.logger?.warn('quota slot not released', { requestId: request.requestId, err: String(e) }));
          throw err;
        }
      }),
    { operation: operation.operationId });
    return encodeResponse(operation, result);
  };
  if (key === undefined || !options.idempotency) return run();
  // After admission: a caller that may not make the request cannot learn or block anyone's key.
  return step('idempotent', () =>
    runIdempotent(options.idempotency!, {
      principal: caller?.principal ?? 'anonymous',
      key,
      fingerprint: fingerprintOf(operation, request),
      requestId: request.requestId,
      run,
      answerOf: (err) => errorResponse(err, request.requestId, options.logger, { redact: options.redactPaths }),
      log: (message, fields) => options.logger?.warn(message, fields),
    }),
  );
}

async function admitted<S>(options: RouterOptions<S>, request: OperationRequest): Promise<S> {
  try {
    return await options.guard!.admit(request, options.services);
  } catch (err) {
    if (err instanceof CatalogError && err.code === ErrorCode.PermissionDenied) await options.onDenied?.(request, err);
    throw err;
  }
}

export function decodeRequest(
  operation: OperationDef,
  params: Readonly<Record<string, string>>,
  request: HttpRequest,
  base: readonly string[] = [],
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): OperationRequest {
  const query = new URLSearchParams(request.rawQuery);
  const delimiter = query.get('delimiter') ?? '$';
  if (delimiter.length === 0) throw new InvalidInputError('query parameter delimiter must not be empty');
  const id = params.id === undefined ? [] : parseObjectId(params.id, delimiter);
  const indexName = params.index_name === undefined ? undefined : formDecode(params.index_name, 'index name');

  let body: Record<string, unknown> = {};
  if (operation.request === 'map') body = parseJsonBody(request.body, limits);
  if (operation.request === 'json') {
    body = parseJsonBody(request.body, limits);
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
  // Every door that stores properties takes them as the body's `properties` or, beside an Arrow
  // body (CreateTable), as the JSON query parameter `properties`: bounded here, once for all.
  checkProperties(body.properties, 'properties', limits);
  const queryProperties = query.get('properties');
  if (queryProperties) checkProperties(parseJsonText(queryProperties, limits), 'query parameter properties', limits);
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
    ...projectOfBase(base),
    params: Object.fromEntries(
      Object.entries(params)
        .filter(([name]) => name !== 'id' && name !== 'index_name')
        .map(([name, value]) => [name, formDecode(value, name)]),
    ),
  };
}

/** A base path ending in `projects/<name>` addresses that project (docs/governance.md). */
function projectOfBase(base: readonly string[]): { project?: string } {
  if (base.length < 2 || base[base.length - 2] !== 'projects') return {};
  return { project: formDecode(base[base.length - 1], 'project name') };
}

/** Absent, empty and literal `null` bodies all mean "no fields" (version/list sends `null`). */
function parseJsonBody(bytes: Buffer, limits: RequestLimits): Record<string, unknown> {
  // Depth first, on the bytes: a deep body is refused before JSON.parse spends time on it.
  checkJsonDepth(bytes, limits.maxJsonDepth);
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

/** A JSON query parameter, depth-checked like a body; undefined when it is not JSON (the door says why). */
function parseJsonText(text: string, limits: RequestLimits): unknown {
  checkJsonDepth(Buffer.from(text, 'utf8'), limits.maxJsonDepth, 'query parameter properties');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
