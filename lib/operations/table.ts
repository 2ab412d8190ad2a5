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

export interface OperationDef {
  readonly operationId: string;
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
  methods: readonly HttpMethod[],
  path: string,
  bundle: Bundle,
  extra: Partial<Pick<OperationDef, 'request' | 'response' | 'status'>> = {},
): OperationDef => ({
  operationId,
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
  op('CreateNamespace', POST, '/v1/namespace/{id}/create', 'meta'),
  op('ListNamespaces', GET, '/v1/namespace/{id}/list', 'meta'),
  op('DescribeNamespace', POST, '/v1/namespace/{id}/describe', 'meta'),
  op('DropNamespace', POST, '/v1/namespace/{id}/drop', 'meta'),
  op('NamespaceExists', POST, '/v1/namespace/{id}/exists', 'meta', { response: 'empty' }),
  // Table catalog entries
  op('ListTables', GET, '/v1/namespace/{id}/table/list', 'meta'),
  op('ListAllTables', GET, '/v1/table', 'meta'),
  op('RegisterTable', POST, '/v1/table/{id}/register', 'meta'),
  op('DescribeTable', POST, '/v1/table/{id}/describe', 'meta'),
  op('TableExists', POST, '/v1/table/{id}/exists', 'meta', { response: 'empty' }),
  op('DropTable', POST, '/v1/table/{id}/drop', 'meta'),
  op('DeregisterTable', POST, '/v1/table/{id}/deregister', 'meta'),
  op('RestoreTable', POST, '/v1/table/{id}/restore', 'data'),
  op('RenameTable', POST, '/v1/table/{id}/rename', 'meta'),
  op('DeclareTable', POST, '/v1/table/{id}/declare', 'meta'),
  // Managed versioning
  op('ListTableVersions', POST, '/v1/table/{id}/version/list', 'meta'),
  op('CreateTableVersion', POST, '/v1/table/{id}/version/create', 'meta'),
  op('DescribeTableVersion', POST, '/v1/table/{id}/version/describe', 'meta'),
  op('BatchDeleteTableVersions', POST, '/v1/table/{id}/version/delete', 'meta'),
  op('BatchCreateTableVersions', POST, '/v1/table/version/batch-create', 'meta'),
  op('BatchCommitTables', POST, '/v1/table/batch-commit', 'meta'),
  // Schema
  op('UpdateTableSchemaMetadata', POST, '/v1/table/{id}/schema_metadata/update', 'data', { request: 'map' }),
  op('AlterTableAlterColumns', POST, '/v1/table/{id}/alter_columns', 'data'),
  op('UpdateFieldMetadata', POST, '/v1/table/{id}/update_field_metadata', 'data'),
  op('AlterTableDropColumns', POST, '/v1/table/{id}/drop_columns', 'data'),
  op('AlterTableAddColumns', POST, '/v1/table/{id}/add_columns', 'data'),
  op('AlterTableBackfillColumns', POST, '/v1/table/{id}/backfill_column', 'data', { status: 202 }),
  // Data
  op('GetTableStats', BOTH_POST_FIRST, '/v1/table/{id}/stats', 'data'),
  op('InsertIntoTable', POST, '/v1/table/{id}/insert', 'data', { request: 'arrow' }),
  op('MergeInsertIntoTable', POST, '/v1/table/{id}/merge_insert', 'data', { request: 'arrow' }),
  op('UpdateTable', POST, '/v1/table/{id}/update', 'data'),
  op('DeleteFromTable', POST, '/v1/table/{id}/delete', 'data'),
  op('QueryTable', POST, '/v1/table/{id}/query', 'data', { response: 'arrow' }),
  op('CountTableRows', BOTH_POST_FIRST, '/v1/table/{id}/count_rows', 'data'),
  op('CreateTable', POST, '/v1/table/{id}/create', 'data', { request: 'arrow' }),
  op('ExplainTableQueryPlan', POST, '/v1/table/{id}/explain_plan', 'data'),
  op('AnalyzeTableQueryPlan', POST, '/v1/table/{id}/analyze_plan', 'data'),
  // Materialized views
  op('RefreshMaterializedView', POST, '/v1/materialized_view/{id}/refresh', 'data', { status: 202 }),
  op('CreateMaterializedView', POST, '/v1/materialized_view/{id}/create', 'data', { status: 201 }),
  // Indices
  op('CreateTableIndex', POST, '/v1/table/{id}/create_index', 'data'),
  op('CreateTableScalarIndex', POST, '/v1/table/{id}/create_scalar_index', 'data'),
  op('ListTableIndices', POST, '/v1/table/{id}/index/list', 'data'),
  op('DescribeTableIndexStats', BOTH_POST_FIRST, '/v1/table/{id}/index/{index_name}/stats', 'data'),
  op('DropTableIndex', POST, '/v1/table/{id}/index/{index_name}/drop', 'data'),
  // Tags
  op('ListTableTags', BOTH_POST_FIRST, '/v1/table/{id}/tags/list', 'data'),
  op('GetTableTagVersion', POST, '/v1/table/{id}/tags/version', 'data'),
  op('CreateTableTag', POST, '/v1/table/{id}/tags/create', 'data'),
  op('DeleteTableTag', POST, '/v1/table/{id}/tags/delete', 'data'),
  op('UpdateTableTag', POST, '/v1/table/{id}/tags/update', 'data'),
  // Branches
  op('ListTableBranches', POST, '/v1/table/{id}/branches/list', 'data'),
  op('CreateTableBranch', POST, '/v1/table/{id}/branches/create', 'data'),
  op('DeleteTableBranch', POST, '/v1/table/{id}/branches/delete', 'data'),
  // Transactions
  op('DescribeTransaction', POST, '/v1/transaction/{id}/describe', 'meta'),
  op('AlterTransaction', POST, '/v1/transaction/{id}/alter', 'meta'),
];

/**
 * Control-plane doors of ours (not in the spec): the same router, decoding and JSON error
 * contract, kept apart from OPERATIONS so the spec's 54 stay exactly the spec's. docs/COVERAGE.md
 * lists them as ours.
 */
export const CONTROL_OPERATIONS: readonly OperationDef[] = [
  // Maintenance policies (docs/maintenance.md): GET reads, POST sets or clears ({"policy": null}).
  op('GetProjectMaintenancePolicy', GET, '/v1/maintenance-policy', 'meta'),
  op('SetProjectMaintenancePolicy', POST, '/v1/maintenance-policy', 'meta'),
  op('GetNamespaceMaintenancePolicy', GET, '/v1/namespace/{id}/maintenance-policy', 'meta'),
  op('SetNamespaceMaintenancePolicy', POST, '/v1/namespace/{id}/maintenance-policy', 'meta'),
  op('GetTableMaintenancePolicy', GET, '/v1/table/{id}/maintenance-policy', 'meta'),
  op('SetTableMaintenancePolicy', POST, '/v1/table/{id}/maintenance-policy', 'meta'),
];

/** Everything the router serves and the API deploys: the spec's operations, then ours. */
export const ROUTED_OPERATIONS: readonly OperationDef[] = [...OPERATIONS, ...CONTROL_OPERATIONS];

export type OperationId = (typeof OPERATIONS)[number]['operationId'];

export const OPERATIONS_BY_ID: ReadonlyMap<string, OperationDef> = new Map(
  ROUTED_OPERATIONS.map((o) => [o.operationId, o]),
);
