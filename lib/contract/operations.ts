import { CONTROL_ROWS } from './control-operations.js';
import { BOTH_POST_FIRST, GET, op, POST, UNSUPPORTED, type HandlerModule, type OperationRow } from './operation-columns.js';

export type { Action, Bundle, Creates, HandlerModule, HttpMethod, RequestKind, ResponseKind, Scope } from './operation-columns.js';
export { HANDLER_EXPORTS } from './operation-columns.js';

/**
 * The operation table: the single source of truth for the 54 Lance Namespace operations (below)
 * and our control-plane doors (control-operations.ts). One row says everything about one
 * operation: its route and codecs, the authorization action, the Lambda bundle, the module that
 * holds its handler, and the facts the guard decides by (destructive, creates, scope; the
 * columns are described in operation-columns.ts). Routing, request decoding, response
 * encoding, authorization, the CDK API resources and the Lambda bundle split all derive from it.
 *
 * `OperationId` is the union of the rows' ids, so a misspelled id is a compile error wherever
 * it is written; handler maps (`HandlersOf`, lib/contract/request.ts), the event vocabulary and
 * the unsupported reasons are typed by it. Handlers are named by path, never imported, so
 * loading the table never pulls in the data plane.
 */

const SPEC_ROWS = [
  // Namespaces
  op('CreateNamespace', 'namespace:create', POST, '/v1/namespace/{id}/create', 'meta', 'lib/operations/handlers-namespace.ts', { creates: 'namespace' }),
  op('ListNamespaces', 'namespace:read', GET, '/v1/namespace/{id}/list', 'meta', 'lib/operations/handlers-namespace.ts'),
  op('DescribeNamespace', 'namespace:read', POST, '/v1/namespace/{id}/describe', 'meta', 'lib/operations/handlers-namespace.ts'),
  op('DropNamespace', 'namespace:drop', POST, '/v1/namespace/{id}/drop', 'meta', 'lib/operations/handlers-namespace.ts', { destructive: true }),
  op('NamespaceExists', 'namespace:read', POST, '/v1/namespace/{id}/exists', 'meta', 'lib/operations/handlers-namespace.ts', { response: 'empty' }),
  // Table catalog entries
  op('ListTables', 'namespace:read', GET, '/v1/namespace/{id}/table/list', 'meta', 'lib/operations/handlers-table.ts'),
  op('ListAllTables', 'project:read', GET, '/v1/table', 'meta', 'lib/operations/handlers-table.ts'),
  op('RegisterTable', 'table:create', POST, '/v1/table/{id}/register', 'meta', 'lib/operations/handlers-table.ts', { creates: 'table' }),
  op('DescribeTable', 'table:read', POST, '/v1/table/{id}/describe', 'meta', 'lib/operations/handlers-table.ts'),
  op('TableExists', 'table:read', POST, '/v1/table/{id}/exists', 'meta', 'lib/operations/handlers-table.ts', { response: 'empty' }),
  op('DropTable', 'table:drop', POST, '/v1/table/{id}/drop', 'meta', 'lib/operations/handlers-table.ts', { destructive: true }),
  op('DeregisterTable', 'table:drop', POST, '/v1/table/{id}/deregister', 'meta', 'lib/operations/handlers-table.ts', { destructive: true }),
  op('RestoreTable', 'table:write', POST, '/v1/table/{id}/restore', 'data', 'lib/operations/data/writes.ts'),
  op('RenameTable', 'table:drop', POST, '/v1/table/{id}/rename', 'meta', 'lib/operations/handlers-table.ts', { destructive: true }),
  op('DeclareTable', 'table:create', POST, '/v1/table/{id}/declare', 'meta', 'lib/operations/handlers-table.ts', { creates: 'table' }),
  // Managed versioning
  op('ListTableVersions', 'table:read', POST, '/v1/table/{id}/version/list', 'meta', 'lib/operations/handlers-version.ts'),
  op('CreateTableVersion', 'table:write', POST, '/v1/table/{id}/version/create', 'meta', 'lib/operations/handlers-version.ts'),
  op('DescribeTableVersion', 'table:read', POST, '/v1/table/{id}/version/describe', 'meta', 'lib/operations/handlers-version.ts'),
  op('BatchDeleteTableVersions', 'table:write', POST, '/v1/table/{id}/version/delete', 'meta', 'lib/operations/handlers-version.ts'),
  op('BatchCreateTableVersions', 'table:write', POST, '/v1/table/version/batch-create', 'meta', UNSUPPORTED),
  op('BatchCommitTables', 'table:write', POST, '/v1/table/batch-commit', 'meta', UNSUPPORTED),
  // Schema
  op('UpdateTableSchemaMetadata', 'table:write', POST, '/v1/table/{id}/schema_metadata/update', 'data', 'lib/operations/data/schema.ts', { request: 'map' }),
  op('AlterTableAlterColumns', 'table:write', POST, '/v1/table/{id}/alter_columns', 'data', 'lib/operations/data/schema.ts'),
  op('UpdateFieldMetadata', 'table:write', POST, '/v1/table/{id}/update_field_metadata', 'data', 'lib/operations/data/schema.ts'),
  op('AlterTableDropColumns', 'table:write', POST, '/v1/table/{id}/drop_columns', 'data', 'lib/operations/data/schema.ts'),
  op('AlterTableAddColumns', 'table:write', POST, '/v1/table/{id}/add_columns', 'data', 'lib/operations/data/schema.ts'),
  op('AlterTableBackfillColumns', 'table:write', POST, '/v1/table/{id}/backfill_column', 'data', 'lib/operations/data/backfill.ts', { status: 202 }),
  // Data
  op('GetTableStats', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/stats', 'data', 'lib/operations/data/reads.ts'),
  op('InsertIntoTable', 'table:write', POST, '/v1/table/{id}/insert', 'data', 'lib/operations/data/writes.ts', { request: 'arrow' }),
  op('MergeInsertIntoTable', 'table:write', POST, '/v1/table/{id}/merge_insert', 'data', 'lib/operations/data/writes.ts', { request: 'arrow' }),
  op('UpdateTable', 'table:write', POST, '/v1/table/{id}/update', 'data', 'lib/operations/data/writes.ts'),
  op('DeleteFromTable', 'table:write', POST, '/v1/table/{id}/delete', 'data', 'lib/operations/data/writes.ts'),
  op('QueryTable', 'table:read', POST, '/v1/table/{id}/query', 'data', 'lib/operations/data/reads.ts', { response: 'arrow' }),
  op('CountTableRows', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/count_rows', 'data', 'lib/operations/data/reads.ts'),
  op('CreateTable', 'table:create', POST, '/v1/table/{id}/create', 'data', 'lib/operations/data/writes.ts', { request: 'arrow', creates: 'table' }),
  op('ExplainTableQueryPlan', 'table:read', POST, '/v1/table/{id}/explain_plan', 'data', 'lib/operations/data/reads.ts'),
  op('AnalyzeTableQueryPlan', 'table:read', POST, '/v1/table/{id}/analyze_plan', 'data', 'lib/operations/data/reads.ts'),
  // Materialized views
  op('RefreshMaterializedView', 'table:write', POST, '/v1/materialized_view/{id}/refresh', 'data', UNSUPPORTED, { status: 202 }),
  op('CreateMaterializedView', 'table:create', POST, '/v1/materialized_view/{id}/create', 'data', UNSUPPORTED, { status: 201, creates: 'table' }),
  // Indices
  op('CreateTableIndex', 'table:write', POST, '/v1/table/{id}/create_index', 'data', 'lib/operations/data/indices.ts'),
  op('CreateTableScalarIndex', 'table:write', POST, '/v1/table/{id}/create_scalar_index', 'data', 'lib/operations/data/indices.ts'),
  op('ListTableIndices', 'table:read', POST, '/v1/table/{id}/index/list', 'data', 'lib/operations/data/indices.ts'),
  op('DescribeTableIndexStats', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/index/{index_name}/stats', 'data', 'lib/operations/data/indices.ts'),
  op('DropTableIndex', 'table:write', POST, '/v1/table/{id}/index/{index_name}/drop', 'data', 'lib/operations/data/indices.ts'),
  // Tags
  op('ListTableTags', 'table:read', BOTH_POST_FIRST, '/v1/table/{id}/tags/list', 'data', 'lib/operations/data/refs.ts'),
  op('GetTableTagVersion', 'table:read', POST, '/v1/table/{id}/tags/version', 'data', 'lib/operations/data/refs.ts'),
  op('CreateTableTag', 'table:write', POST, '/v1/table/{id}/tags/create', 'data', 'lib/operations/data/refs.ts'),
  op('DeleteTableTag', 'table:write', POST, '/v1/table/{id}/tags/delete', 'data', 'lib/operations/data/refs.ts'),
  op('UpdateTableTag', 'table:write', POST, '/v1/table/{id}/tags/update', 'data', 'lib/operations/data/refs.ts'),
  // Branches
  op('ListTableBranches', 'table:read', POST, '/v1/table/{id}/branches/list', 'data', 'lib/operations/data/refs.ts'),
  op('CreateTableBranch', 'table:write', POST, '/v1/table/{id}/branches/create', 'data', 'lib/operations/data/refs.ts'),
  op('DeleteTableBranch', 'table:write', POST, '/v1/table/{id}/branches/delete', 'data', 'lib/operations/data/refs.ts'),
  // Transactions
  op('DescribeTransaction', 'transaction:read', POST, '/v1/transaction/{id}/describe', 'meta', 'lib/operations/handlers-transaction.ts'),
  op('AlterTransaction', 'transaction:alter', POST, '/v1/transaction/{id}/alter', 'meta', 'lib/operations/handlers-transaction.ts'),
] as const;

type Row = (typeof SPEC_ROWS)[number] | (typeof CONTROL_ROWS)[number];

/** Every operation's id: the spec's 54 and our control-plane doors. */
export type OperationId = Row['operationId'];

/** The operations whose row names `module` as their handler module. */
export type OperationsOf<M extends HandlerModule> = Extract<Row, { readonly handler: M }>['operationId'];

/** The operations without a handler: each answers code 0 with a reason (lib/contract/unsupported.ts). */
export type UnsupportedOperationId = Extract<Row, { readonly handler: undefined }>['operationId'];

export interface OperationDef extends OperationRow<OperationId> {}

/** The spec's operations, exactly (test/unit/operation-table.test.ts compares them with the spec). */
export const OPERATIONS: readonly OperationDef[] = SPEC_ROWS;

/** The control-plane doors (ours, `plane: 'control'`). */
export const CONTROL_OPERATIONS: readonly OperationDef[] = CONTROL_ROWS;

/** The spec's operations and ours: what the router serves and the API deploys. */
export const ALL_OPERATIONS: readonly OperationDef[] = [...OPERATIONS, ...CONTROL_OPERATIONS];

export const OPERATIONS_BY_ID: ReadonlyMap<string, OperationDef> = new Map(OPERATIONS.map((o) => [o.operationId, o]));
