/**
 * The columns of the operation table (lib/contract/operations.ts) and the row builders its two
 * halves share. Nothing here imports anything: the spec rows (operations.ts) and the control
 * rows (control-operations.ts) both build on it, and operations.ts joins them.
 */

export type HttpMethod = 'GET' | 'POST';

/** How the request is decoded before the handler sees it. */
export type RequestKind =
  /** A JSON object body (empty, absent or the literal `null` mean `{}`). */
  | 'json'
  /** Raw Arrow IPC stream bytes, sent by the client with no Content-Type. */
  | 'arrow'
  /**
   * A bare JSON map (UpdateTableSchemaMetadata): the body is data, not a request model, so no
   * `id` is added to it or checked against the path (a metadata key may be called "id").
   */
  | 'map';

/** How the handler's result is encoded. */
export type ResponseKind =
  /** JSON value with `Content-Type: application/json` (objects, bare integers, strings, maps). */
  | 'json'
  /** Status only, no body (the two exists operations). */
  | 'empty'
  /** Arrow IPC file bytes. */
  | 'arrow';

/** Which Lambda bundle serves the operation: `data` bundles carry the LanceDB layer. */
export type Bundle = 'meta' | 'data';

/**
 * The authorization action an operation needs (the Cedar action of policies/rask.cedarschema;
 * docs/governance.md). Grouped there into read / write / admin for the three roles.
 */
export type Action =
  | 'namespace:read' | 'namespace:create' | 'namespace:drop'
  | 'table:read' | 'table:create' | 'table:write' | 'table:drop'
  | 'transaction:read' | 'transaction:alter'
  | 'project:read' | 'project:create' | 'project:list' | 'project:manage' | 'project:delete'
  | 'warehouse:read' | 'warehouse:create' | 'warehouse:manage' | 'warehouse:delete'
  | 'principal:manage' | 'key:manage' | 'grant:manage' | 'limits:manage' | 'limits:read';

/**
 * The handler modules, each with the name of the map it exports. A row names its module by
 * path, so the table leads to the code in one hop without importing it: loading the table must
 * never load the data plane (test/unit/module-graph.test.ts). test/unit/operation-table.test.ts
 * imports every module and checks that it exports exactly the handlers its rows name.
 */
export const HANDLER_EXPORTS = {
  'lib/operations/handlers-namespace.ts': 'namespaceHandlers',
  'lib/operations/handlers-table.ts': 'tableHandlers',
  'lib/operations/handlers-version.ts': 'versionHandlers',
  'lib/operations/handlers-transaction.ts': 'transactionHandlers',
  'lib/operations/handlers-maintenance.ts': 'maintenanceHandlers',
  'lib/operations/handlers-control.ts': 'controlHandlers',
  'lib/operations/handlers-lifecycle.ts': 'lifecycleHandlers',
  'lib/operations/data/writes.ts': 'writeHandlers',
  'lib/operations/data/reads.ts': 'readHandlers',
  'lib/operations/data/indices.ts': 'indexHandlers',
  'lib/operations/data/refs.ts': 'refHandlers',
  'lib/operations/data/schema.ts': 'schemaHandlers',
  'lib/operations/data/backfill.ts': 'backfillHandlers',
} as const;

/** A handler module, by its repository-relative path. */
export type HandlerModule = keyof typeof HANDLER_EXPORTS;

/** The handler column of an operation without a handler: it answers code 0 (lib/contract/unsupported.ts). */
export const UNSUPPORTED = undefined;

/** What kind of catalog object a create door makes: its parent must exist first (lib/governance/guard.ts). */
export type Creates = 'namespace' | 'table';

/**
 * What a control-plane door is decided on (lib/governance/guard.ts, `targetOf`). A spec
 * operation has no scope: it is decided on what its `{id}` names (lib/governance/resources.ts).
 */
export type Scope =
  /** Above any project: projects, principals and their keys; no project is looked up. */
  | 'platform'
  /** The project the `{project}` path parameter names. */
  | 'project-param'
  /**
   * The namespace or table `{id}` names, on its own chain, like its drop (docs/lifecycle.md):
   * a grant on the object — kept while it is in trash — lets its holder undrop it.
   */
  | 'object'
  /** The project the request addresses (field, query, base URI or default), or its `{warehouse}`. */
  | 'project'
  /**
   * The change feed: the caller must hold something in the addressed project, and each event is
   * decided on its own object (docs/events.md, "Who sees what"), so no event tells a caller about
   * an object it may not read.
   */
  | 'events';

/** One row of the operation table. */
export interface OperationRow<Id extends string = string, H extends HandlerModule | undefined = HandlerModule | undefined> {
  readonly operationId: Id;
  /** What the caller must be allowed to do (the one authorization column). */
  readonly action: Action;
  /** `control`: our control-plane doors (projects, warehouses, keys, grants); absent: the spec's. */
  readonly plane?: 'control';
  /** Accepted methods; the first is the one the spec names. */
  readonly methods: readonly HttpMethod[];
  /** Route template; `{id}` is an object id, `{index_name}` an index name. */
  readonly path: string;
  readonly request: RequestKind;
  readonly response: ResponseKind;
  /** Success status (spec: 200, except 202 for backfill/refresh and 201 for MV create). */
  readonly status: number;
  readonly bundle: Bundle;
  /** The module whose map holds the handler (its export: HANDLER_EXPORTS); UNSUPPORTED: none. */
  readonly handler: H;
  /** A denial answers exactly like "does not exist" (docs/governance.md), so it reveals nothing. */
  readonly destructive: boolean;
  /** The catalog object a create door makes, whose parent the guard checks first. */
  readonly creates?: Creates;
  /** Control-plane doors only: what authorization decides on. */
  readonly scope?: Scope;
}

/** The columns a row may leave at their defaults (JSON in and out, 200, not destructive). */
type SpecExtras = Partial<Pick<OperationRow, 'request' | 'response' | 'status' | 'destructive' | 'creates'>>;
type ControlExtras = Partial<Pick<OperationRow, 'destructive' | 'scope'>>;

/** A spec operation's row. The id and handler keep their literal types: OperationId derives from them. */
export const op = <const Id extends string, const H extends HandlerModule | undefined>(
  operationId: Id,
  action: Action,
  methods: readonly HttpMethod[],
  path: string,
  bundle: Bundle,
  handler: H,
  extra: SpecExtras = {},
): OperationRow<Id, H> => ({
  operationId,
  action,
  methods,
  path,
  bundle,
  handler,
  request: extra.request ?? 'json',
  response: extra.response ?? 'json',
  status: extra.status ?? 200,
  destructive: extra.destructive ?? false,
  ...(extra.creates ? { creates: extra.creates } : {}),
});

/** A control-plane door's row: always a JSON door of the metadata bundle (none touches LanceDB). */
export const control = <const Id extends string, const H extends HandlerModule>(
  operationId: Id,
  action: Action,
  methods: readonly HttpMethod[],
  path: string,
  handler: H,
  extra: ControlExtras = {},
): OperationRow<Id, H> => ({
  operationId,
  action,
  plane: 'control',
  methods,
  path,
  bundle: 'meta',
  handler,
  request: 'json',
  response: 'json',
  status: 200,
  destructive: extra.destructive ?? false,
  scope: extra.scope ?? 'project',
});

export const POST: readonly HttpMethod[] = ['POST'];
export const GET: readonly HttpMethod[] = ['GET'];
/** The official client and the spec disagree on the verb; accept both (rest-conformance §2). */
export const BOTH_POST_FIRST: readonly HttpMethod[] = ['POST', 'GET'];
