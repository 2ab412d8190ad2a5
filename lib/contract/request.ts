import type { HttpRequest } from './http.js';
import type { HandlerModule } from './operation-columns.js';
import type { OperationDef, OperationId, OperationsOf } from './operations.js';

/** Who is calling. Kept on every request for authentication and authorization. */
export interface Identity {
  readonly apiKey?: string;
  readonly bearerToken?: string;
}

/**
 * The authenticated caller, established before the request is decoded (lib/governance/guard.ts):
 * from an API key or token locally, from the API Gateway authorizer's context on AWS.
 */
export interface Caller {
  /** Principal name; `anonymous` when authentication is off. */
  readonly principal: string;
  /** Platform administrators may do everything (the bootstrap admin key is one). */
  readonly platformAdmin: boolean;
  /** How the caller proved who they are. */
  readonly via: 'api-key' | 'admin-key' | 'jwt' | 'auth-off';
  /**
   * When the presented credential stops being valid (ISO 8601): an OIDC token's `exp`, an
   * expiring API key's expiry; absent when it never expires. A key this caller mints may not
   * outlive it (docs/governance.md, "Key expiry").
   */
  readonly expiresAt?: string;
}

/** What a handler sees: decoded, validated transport-free input. */
export interface OperationRequest {
  readonly operation: OperationDef;
  /** The decoded `{id}` path parameter (`[]` for the root namespace or ops without one). */
  readonly id: readonly string[];
  /** The decoded `{index_name}` path parameter, for the two index-name routes. */
  readonly indexName?: string;
  readonly delimiter: string;
  /** The query string with form semantics (`+` is a space); `delimiter` included. */
  readonly query: URLSearchParams;
  /** The JSON body for JSON operations (`{}` when none was sent); `id` filled from the path. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The raw bytes for Arrow operations. */
  readonly bytes: Buffer;
  readonly identity: Identity;
  /** Request headers, lower-cased names (for the few operations that read one, e.g. `x-rask-access`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly requestId: string;
  /** The project a base URI (`/projects/{project}/v1/…`) names; absent on plain `/v1`. */
  readonly project?: string;
  /** Decoded values of the route's other `{param}` segments (control-plane doors). */
  readonly params?: Readonly<Record<string, string>>;
  /** Set by the router's guard once the caller is authenticated and authorized. */
  readonly caller?: Caller;
}

export type OperationHandler<S> = (request: OperationRequest, services: S) => Promise<unknown>;

/** Operation id → handler. An operation with no handler answers Unsupported (code 0). */
export type HandlerMap<S> = Readonly<Partial<Record<OperationId, OperationHandler<S>>>>;

/**
 * The map a handler module exports: exactly the operations whose rows name `M` as their handler
 * module (lib/contract/operations.ts), so a handler missing, misspelled or filed in the wrong
 * module fails the type check.
 */
export type HandlersOf<M extends HandlerModule, S> = { readonly [K in OperationsOf<M>]: OperationHandler<S> };

/**
 * Runs in the check order (docs/rules.md rule 1): `authenticate` before the request is decoded
 * (401 before 400), `admit` after (parent 404, then authorization 403, then quarantine 403) and
 * before the handler; it returns the services the handler runs with (per-project).
 */
export interface RequestGuard<S> {
  authenticate(request: HttpRequest, operation: OperationDef): Promise<Caller>;
  admit(request: OperationRequest, services: S): Promise<S>;
}
