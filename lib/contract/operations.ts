/**
 * The operation table: the single source of truth for the 54 Lance Namespace operations.
 * Routing, request decoding, response encoding, the CDK API resources and the Lambda bundle
 * split all derive from it. Handlers are NOT referenced here (see lib/operations/handlers-*.ts)
 * so that loading the table never pulls in the data plane.
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
  | 'principal:manage' | 'key:manage' | 'grant:manage';

export interface OperationDef {
  readonly operationId: string;
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
}

const op = (
  operationId: string,
  action: Action,
  methods: readonly HttpMethod[],
  path: string,
  bundle: Bundle,
  extra: Partial<Pick<OperationDef, 'request' | 'response' | 'status'>> = {},
): OperationDef => ({
  operationId,
  action,
  methods,
  path,
  bundle,
  request: extra.request ?? 'json',
  response: extra.response ?? 'json',
  status: extra.status ?? 200,
});

const POST: readonly HttpMethod[] = ['POST'];
const GET: readonly HttpMethod[] = ['GET'];
/** The official client and the spec disagree on the verb; accept both (rest-conformance §2). */
const BOTH_POST_FIRST: readonly HttpMethod[] = ['POST', 'GET'];

export const OPERATIONS: readonly OperationDef[] = [
  // Namespaces
  op('CreateNamespace', 'namespace:create', POST, '/v1/namespace/{id}/create', 'meta'),
  op('ListNamespaces', 'namespace:read', GET, '/v1/namespace/{id}/list', 'meta'),
  op('DescribeNamespace', 'namespace:read', POST, '/v1/namespace/{id}/describe', 'meta'),
  op('DropNamespace', 'namespace:drop', POST, '/v1/namespace/{id}/drop', 'meta'),
  op('NamespaceExists', 'namespace:read', POST, '/v1/namespace/{id}/exists', 'meta', { response: 'empty' }),
  // Table catalog entries
  op('ListTables', 'namespace:read', GET, '/v1/namespace/{id}/table/list', 'meta'),
  op('ListAllTables', 'project:read', GET, '/v1/table', 'meta'),
  op('RegisterTable', 'table:create', POST, '/v1/table/{id}/register', 'meta'),
  op('DescribeTable', 'table:read', POST, '/v1/table/{id}/describe', 'meta'),
  op('TableExists', 'table:read', POST, '/v1/table/{id}/exists', 'meta', { response: 'empty' }),
  op('DropTable', 'table:drop', POST, '/v1/table/{id}/drop', 'meta'),
  op('DeregisterTable', 'table:drop', POST, '/v1/table/{id}/deregister', 'meta'),
  op('RestoreTable', 'table:write', POST, '/v1/table/{id}/restore', 'data'),
  op('RenameTable', 'table:drop', POST, '/v1/table/{id}/rename', 'meta'),
  op('DeclareTable', 'table:create', POST, '/v1/table/{id}/declare', 'meta'),
  // Managed versioning
  op('ListTableVersions', 'table:read', POST, '/v1/table/{id}/version/list', 'meta'),
  op('CreateTableVersion', 'table:write', POST, '/v1/table/{id}/version/create', 'meta'),
  op('DescribeTableVersion', 'table:read', POST, '/v1/table/{id}/version/describe', 'meta'),
  op('BatchDeleteTableVersions', 'table:write', POST, '/v1/table/{id}/version/delete', 'meta'),
  op('BatchCreateTableVersions', 'table:write', POST, '/v1/table/version/batch-create', 'meta'),
  op('BatchCommitTables', 'table:write', POST, '/v1/table/batch-commit', 'meta'),
  // Schema
  op('UpdateTableSchemaMetadata', 'table:write', POST, '/v1/table/{id}/schema_metadata/update', 'data', { request: 'map' }),
  op('AlterTableAlterColumns', 'table:write', POST, '/v1/table/{id}/alter_columns', 'data'),
  op('UpdateFieldMetadata', 'table:write', POST, '/v1/table/{id}/update_field_metadata', 'data'),
  op('AlterTableDropColumns', 'table:write', POST, '/v1/table/{id}/drop_columns', 'data'),
  op('AlterTableAddColumns', 'table:write', POST, '/v1/table/{id}/add_columns', 'data'),
  op('AlterTableBackfillColumns', 'table:write', POST, '/v1/table/{id}/backfill_column', 'data', { status: 202 }),
  // Data
  op('GetTableStats', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/stats', 'data'),
  op('InsertIntoTable', 'table:write', POST, '/v1/table/{id}/insert', 'data', { request: 'arrow' }),
  op('MergeInsertIntoTable', 'table:write', POST, '/v1/table/{id}/merge_insert', 'data', { request: 'arrow' }),
  op('UpdateTable', 'table:write', POST, '/v1/table/{id}/update', 'data'),
  op('DeleteFromTable', 'table:write', POST, '/v1/table/{id}/delete', 'data'),
  op('QueryTable', 'table:read', POST, '/v1/table/{id}/query', 'data', { response: 'arrow' }),
  op('CountTableRows', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/count_rows', 'data'),
  op('CreateTable', 'table:create', POST, '/v1/table/{id}/create', 'data', { request: 'arrow' }),
  op('ExplainTableQueryPlan', 'table:read', POST, '/v1/table/{id}/explain_plan', 'data'),
  op('AnalyzeTableQueryPlan', 'table:read', POST, '/v1/table/{id}/analyze_plan', 'data'),
  // Materialized views
  op('RefreshMaterializedView', 'table:write', POST, '/v1/materialized_view/{id}/refresh', 'data', { status: 202 }),
  op('CreateMaterializedView', 'table:create', POST, '/v1/materialized_view/{id}/create', 'data', { status: 201 }),
  // Indices
  op('CreateTableIndex', 'table:write', POST, '/v1/table/{id}/create_index', 'data'),
  op('CreateTableScalarIndex', 'table:write', POST, '/v1/table/{id}/create_scalar_index', 'data'),
  op('ListTableIndices', 'table:read', POST, '/v1/table/{id}/index/list', 'data'),
  op('DescribeTableIndexStats', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/index/{index_name}/stats', 'data'),
  op('DropTableIndex', 'table:write', POST, '/v1/table/{id}/index/{index_name}/drop', 'data'),
  // Tags
  op('ListTableTags', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/tags/list', 'data'),
  op('GetTableTagVersion', 'table:read', POST, '/v1/table/{id}/tags/version', 'data'),
  op('CreateTableTag', 'table:write', POST, '/v1/table/{id}/tags/create', 'data'),
  op('DeleteTableTag', 'table:write', POST, '/v1/table/{id}/tags/delete', 'data'),
  op('UpdateTableTag', 'table:write', POST, '/v1/table/{id}/tags/update', 'data'),
  // Branches
  op('ListTableBranches', 'table:read', POST, '/v1/table/{id}/branches/list', 'data'),
  op('CreateTableBranch', 'table:write', POST, '/v1/table/{id}/branches/create', 'data'),
  op('DeleteTableBranch', 'table:write', POST, '/v1/table/{id}/branches/delete', 'data'),
  // Transactions
  op('DescribeTransaction', 'transaction:read', POST, '/v1/transaction/{id}/describe', 'meta'),
  op('AlterTransaction', 'transaction:alter', POST, '/v1/transaction/{id}/alter', 'meta'),
];

export type OperationId = (typeof OPERATIONS)[number]['operationId'];

export const OPERATIONS_BY_ID: ReadonlyMap<string, OperationDef> = new Map(OPERATIONS.map((o) => [o.operationId, o]));
