import type { OperationId } from '../contract/operations.js';

/**
 * The change-event vocabulary, defined once (docs/events.md carries the same list and the JSON
 * schema). Every operation of the operation table has an entry: the CloudEvents `type` a
 * successful call emits, or `null` for reads, which emit nothing. The map is typed by
 * `OperationId`, so a new operation without an entry (or a misspelled one) fails the type
 * check, and test/unit/events.test.ts compares the keys too: nobody adds a silent mutation.
 */

export const EVENT_SOURCE_PREFIX = 'dev.rask';

export const OPERATION_EVENTS: Readonly<Record<OperationId, string | null>> = {
  // Namespaces
  CreateNamespace: 'dev.rask.namespace.created',
  DropNamespace: 'dev.rask.namespace.dropped',
  ListNamespaces: null,
  DescribeNamespace: null,
  NamespaceExists: null,
  // Table catalog entries
  DeclareTable: 'dev.rask.table.declared',
  CreateTable: 'dev.rask.table.created',
  RegisterTable: 'dev.rask.table.registered',
  DeregisterTable: 'dev.rask.table.deregistered',
  DropTable: 'dev.rask.table.dropped',
  RenameTable: 'dev.rask.table.renamed',
  RestoreTable: 'dev.rask.table.restored',
  ListTables: null,
  ListAllTables: null,
  DescribeTable: null,
  TableExists: null,
  // Versions (managed versioning)
  CreateTableVersion: 'dev.rask.table.version.created',
  BatchDeleteTableVersions: 'dev.rask.table.versions.deleted',
  BatchCreateTableVersions: 'dev.rask.table.versions.created',
  BatchCommitTables: 'dev.rask.tables.committed',
  ListTableVersions: null,
  DescribeTableVersion: null,
  // Schema
  UpdateTableSchemaMetadata: 'dev.rask.table.schema_metadata.updated',
  AlterTableAddColumns: 'dev.rask.table.columns.added',
  AlterTableAlterColumns: 'dev.rask.table.columns.altered',
  AlterTableDropColumns: 'dev.rask.table.columns.dropped',
  AlterTableBackfillColumns: 'dev.rask.table.columns.backfill_started',
  UpdateFieldMetadata: 'dev.rask.table.field_metadata.updated',
  // Rows
  InsertIntoTable: 'dev.rask.table.rows.inserted',
  MergeInsertIntoTable: 'dev.rask.table.rows.merged',
  UpdateTable: 'dev.rask.table.rows.updated',
  DeleteFromTable: 'dev.rask.table.rows.deleted',
  QueryTable: null,
  CountTableRows: null,
  ExplainTableQueryPlan: null,
  AnalyzeTableQueryPlan: null,
  GetTableStats: null,
  // Indices
  CreateTableIndex: 'dev.rask.table.index.created',
  CreateTableScalarIndex: 'dev.rask.table.index.created',
  DropTableIndex: 'dev.rask.table.index.dropped',
  ListTableIndices: null,
  DescribeTableIndexStats: null,
  // Tags and branches
  CreateTableTag: 'dev.rask.table.tag.created',
  UpdateTableTag: 'dev.rask.table.tag.updated',
  DeleteTableTag: 'dev.rask.table.tag.deleted',
  ListTableTags: null,
  GetTableTagVersion: null,
  CreateTableBranch: 'dev.rask.table.branch.created',
  DeleteTableBranch: 'dev.rask.table.branch.deleted',
  ListTableBranches: null,
  // Materialized views
  CreateMaterializedView: 'dev.rask.materialized_view.created',
  RefreshMaterializedView: 'dev.rask.materialized_view.refreshed',
  // Transactions (asynchronous jobs)
  AlterTransaction: 'dev.rask.transaction.altered',
  DescribeTransaction: null,

  // Control-plane doors of ours (lib/contract/control-operations.ts)
  CreateProject: 'dev.rask.project.created',
  UpdateProject: 'dev.rask.project.updated',
  DeleteProject: 'dev.rask.project.deleted',
  ListProjects: null,
  DescribeProject: null,
  CreateWarehouse: 'dev.rask.warehouse.created',
  UpdateWarehouse: 'dev.rask.warehouse.updated',
  DeleteWarehouse: 'dev.rask.warehouse.deleted',
  DeactivateWarehouse: 'dev.rask.warehouse.deactivated',
  ActivateWarehouse: 'dev.rask.warehouse.activated',
  BindNamespace: 'dev.rask.namespace.bound',
  ListWarehouses: null,
  DescribeWarehouse: null,
  CreatePrincipal: 'dev.rask.principal.created',
  CreateApiKey: 'dev.rask.principal.key_created',
  RevokeApiKey: 'dev.rask.principal.key_revoked',
  ListPrincipals: null,
  ListApiKeys: null,
  GrantRole: 'dev.rask.grant.created',
  RevokeRole: 'dev.rask.grant.revoked',
  ListGrants: null,
  SetProjectMaintenancePolicy: 'dev.rask.maintenance_policy.set',
  SetNamespaceMaintenancePolicy: 'dev.rask.maintenance_policy.set',
  SetTableMaintenancePolicy: 'dev.rask.maintenance_policy.set',
  // Queuing a sweep changes no object; what the job does is announced by its report.
  SweepTable: null,
  GetProjectMaintenancePolicy: null,
  GetNamespaceMaintenancePolicy: null,
  GetTableMaintenancePolicy: null,
  SetNamespaceProtection: 'dev.rask.namespace.protection_set',
  SetTableProtection: 'dev.rask.table.protection_set',
  GetNamespaceProtection: null,
  GetTableProtection: null,
  UndropTable: 'dev.rask.table.undropped',
  ListTableTasks: null,
  UndropNamespace: 'dev.rask.namespace.undropped',
  ListNamespaceTasks: null,
  ListChanges: null,
  GetProjectLimits: null,
  // The limits live on the project record: the project changed.
  SetProjectLimits: 'dev.rask.project.updated',
  GetPrincipalLimits: null,
  // The audit trail of a principal's limits: who set what, when (docs/events.md).
  SetPrincipalLimits: 'dev.rask.principal.limits_set',
  ListMaintenanceReports: null,
  ListJobs: null,
  GetRequestChanges: null,
};

/** Emitted for a request refused for lack of permission (403 / code 15): the audit trail. */
export const ACCESS_DENIED_EVENT = 'dev.rask.access.denied';

/** Emitted by a maintenance pass that did material work (an idle pass emits nothing). */
export const maintenanceEvent = (pass: string): string => `dev.rask.maintenance.${pass}.completed`;

/**
 * Emitted by a job for each table version it commits (lib/jobs/commit-events.ts): a queued index
 * build's one commit, each slice of a backfill. The door that queued the job emitted its own
 * event already (`…index.created`, `…columns.backfill_started`, with the `transaction_id`).
 */
export const JOB_COMMIT_EVENTS: Readonly<Record<string, string>> = {
  create_index: 'dev.rask.table.index.built',
  backfill: 'dev.rask.table.columns.backfilled',
};

/** A job type without its own entry above (none today) that commits a version. */
export const JOB_COMMIT_EVENT = 'dev.rask.table.job.committed';

/** Every type this deployment can emit (docs/events.md lists the same set; a test compares them). */
export function allEventTypes(): string[] {
  const types = new Set<string>([ACCESS_DENIED_EVENT]);
  for (const type of Object.values(OPERATION_EVENTS)) if (type) types.add(type);
  for (const pass of ['sweep', 'index', 'reconcile', 'orphans']) types.add(maintenanceEvent(pass));
  for (const type of [...Object.values(JOB_COMMIT_EVENTS), JOB_COMMIT_EVENT]) types.add(type);
  return [...types].sort();
}
