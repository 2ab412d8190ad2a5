import { control, GET, POST } from './operation-columns.js';

/**
 * The control-plane doors: ours, not the spec's (docs/governance.md). They are rows of the one
 * operation table (lib/contract/operations.ts joins them to the spec's 54: same router, same
 * error contract, same authorization column), marked `plane: 'control'` so the
 * spec-conformance tests still see exactly the spec. Every door is a JSON door in the metadata
 * bundle: none of them touches LanceDB. Columns: lib/contract/operation-columns.ts.
 *
 * Projects and warehouses can also be addressed through a project base URI
 * (`/projects/{project}/v1/warehouses`): the router matches from the `v1` segment.
 */
export const CONTROL_ROWS = [
  // Projects
  control('CreateProject', 'project:create', POST, '/v1/projects', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('ListProjects', 'project:list', GET, '/v1/projects', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('DescribeProject', 'project:read', GET, '/v1/projects/{project}', 'lib/operations/handlers-control.ts', { scope: 'project-param' }),
  control('UpdateProject', 'project:manage', POST, '/v1/projects/{project}/update', 'lib/operations/handlers-control.ts', { scope: 'project-param' }),
  control('DeleteProject', 'project:delete', POST, '/v1/projects/{project}/delete', 'lib/operations/handlers-control.ts', { destructive: true, scope: 'project-param' }),
  // Warehouses (scoped by a `project` field / query parameter or the project base URI)
  control('CreateWarehouse', 'warehouse:create', POST, '/v1/warehouses', 'lib/operations/handlers-control.ts'),
  control('ListWarehouses', 'project:read', GET, '/v1/warehouses', 'lib/operations/handlers-control.ts'),
  control('DescribeWarehouse', 'warehouse:read', GET, '/v1/warehouses/{warehouse}', 'lib/operations/handlers-control.ts'),
  control('UpdateWarehouse', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/update', 'lib/operations/handlers-control.ts'),
  control('DeleteWarehouse', 'warehouse:delete', POST, '/v1/warehouses/{warehouse}/delete', 'lib/operations/handlers-control.ts', { destructive: true }),
  control('DeactivateWarehouse', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/deactivate', 'lib/operations/handlers-control.ts', { destructive: true }),
  control('ActivateWarehouse', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/activate', 'lib/operations/handlers-control.ts', { destructive: true }),
  control('BindNamespace', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/bind', 'lib/operations/handlers-control.ts'),
  // Principals, API keys and grants
  control('CreatePrincipal', 'principal:manage', POST, '/v1/principals', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('ListPrincipals', 'principal:manage', GET, '/v1/principals', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('CreateApiKey', 'key:manage', POST, '/v1/principals/{principal}/keys', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('ListApiKeys', 'key:manage', GET, '/v1/principals/{principal}/keys', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('RevokeApiKey', 'key:manage', POST, '/v1/principals/{principal}/keys/{key_id}/revoke', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('GrantRole', 'grant:manage', POST, '/v1/grants', 'lib/operations/handlers-control.ts'),
  control('ListGrants', 'grant:manage', GET, '/v1/grants', 'lib/operations/handlers-control.ts'),
  control('RevokeRole', 'grant:manage', POST, '/v1/grants/revoke', 'lib/operations/handlers-control.ts'),
  // Maintenance policies (docs/maintenance.md): GET reads, POST sets or clears ({"policy": null}).
  control('GetProjectMaintenancePolicy', 'project:read', GET, '/v1/maintenance-policy', 'lib/operations/handlers-maintenance.ts'),
  control('SetProjectMaintenancePolicy', 'project:manage', POST, '/v1/maintenance-policy', 'lib/operations/handlers-maintenance.ts'),
  control('GetNamespaceMaintenancePolicy', 'namespace:read', GET, '/v1/namespace/{id}/maintenance-policy', 'lib/operations/handlers-maintenance.ts'),
  control('SetNamespaceMaintenancePolicy', 'project:manage', POST, '/v1/namespace/{id}/maintenance-policy', 'lib/operations/handlers-maintenance.ts'),
  control('GetTableMaintenancePolicy', 'table:read', GET, '/v1/table/{id}/maintenance-policy', 'lib/operations/handlers-maintenance.ts'),
  control('SetTableMaintenancePolicy', 'project:manage', POST, '/v1/table/{id}/maintenance-policy', 'lib/operations/handlers-maintenance.ts'),
  // Run a sweep now (docs/console.md): queues the table's sweep job, answers the job to follow.
  control('SweepTable', 'project:manage', POST, '/v1/table/{id}/maintenance/sweep', 'lib/operations/handlers-maintenance.ts'),
  // Lifecycle (docs/lifecycle.md): protection is admin-gated; undrop needs what a drop needs.
  control('GetNamespaceProtection', 'namespace:read', GET, '/v1/namespace/{id}/protection', 'lib/operations/handlers-lifecycle.ts'),
  control('SetNamespaceProtection', 'project:manage', POST, '/v1/namespace/{id}/protection', 'lib/operations/handlers-lifecycle.ts'),
  control('GetTableProtection', 'table:read', GET, '/v1/table/{id}/protection', 'lib/operations/handlers-lifecycle.ts'),
  control('SetTableProtection', 'project:manage', POST, '/v1/table/{id}/protection', 'lib/operations/handlers-lifecycle.ts'),
  control('UndropTable', 'table:drop', POST, '/v1/table/{id}/undrop', 'lib/operations/handlers-lifecycle.ts', { scope: 'object' }),
  control('ListTableTasks', 'table:read', GET, '/v1/table/{id}/tasks', 'lib/operations/handlers-lifecycle.ts', { scope: 'object' }),
  control('UndropNamespace', 'namespace:drop', POST, '/v1/namespace/{id}/undrop', 'lib/operations/handlers-lifecycle.ts', { scope: 'object' }),
  control('ListNamespaceTasks', 'namespace:read', GET, '/v1/namespace/{id}/tasks', 'lib/operations/handlers-lifecycle.ts', { scope: 'object' }),
  // Limits and quotas (docs/operations.md, "Object quotas", "Rate limits"): members read them, platform administrators set them.
  control('GetProjectLimits', 'project:read', GET, '/v1/limits', 'lib/operations/handlers-control.ts'),
  control('SetProjectLimits', 'limits:manage', POST, '/v1/limits', 'lib/operations/handlers-control.ts'),
  // A principal's own limits: it reads them, platform administrators set them.
  control('GetPrincipalLimits', 'limits:read', GET, '/v1/principals/{principal}/limits', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  control('SetPrincipalLimits', 'limits:manage', POST, '/v1/principals/{principal}/limits', 'lib/operations/handlers-control.ts', { scope: 'platform' }),
  // The change feed (docs/events.md, "The feed"): each event is decided on its own object.
  control('ListChanges', 'project:read', GET, '/v1/changes', 'lib/operations/handlers-control.ts', { scope: 'events' }),
  // "Did my commit land?" (docs/operations.md): what the caller's own request changed, from the same log.
  control('GetRequestChanges', 'project:read', GET, '/v1/requests/{request_id}', 'lib/operations/handlers-control.ts', { scope: 'events' }),
  // The console's operations views (docs/console.md): reads only, each item decided as the feed's.
  control('ListMaintenanceReports', 'project:read', GET, '/v1/maintenance/reports', 'lib/operations/handlers-maintenance.ts', { scope: 'events' }),
  control('ListJobs', 'project:read', GET, '/v1/jobs', 'lib/operations/handlers-control.ts', { scope: 'events' }),
] as const;
