import { OPERATIONS, type Action, type HttpMethod, type OperationDef } from './operations.js';

/**
 * The control-plane doors: ours, not the spec's (docs/governance.md). They sit in the same
 * table as the 54 spec operations (same router, same error contract, same authorization
 * column), marked `plane: 'control'` so the spec-conformance tests still see exactly the spec.
 * Every door is a JSON door in the metadata bundle: none of them touches LanceDB.
 *
 * Projects and warehouses can also be addressed through a project base URI
 * (`/projects/{project}/v1/warehouses`): the router matches from the `v1` segment.
 */
const control = (operationId: string, action: Action, methods: readonly HttpMethod[], path: string): OperationDef => ({
  operationId,
  action,
  plane: 'control',
  methods,
  path,
  bundle: 'meta',
  request: 'json',
  response: 'json',
  status: 200,
});

const POST: readonly HttpMethod[] = ['POST'];
const GET: readonly HttpMethod[] = ['GET'];

export const CONTROL_OPERATIONS: readonly OperationDef[] = [
  // Projects
  control('CreateProject', 'project:create', POST, '/v1/projects'),
  control('ListProjects', 'project:list', GET, '/v1/projects'),
  control('DescribeProject', 'project:read', GET, '/v1/projects/{project}'),
  control('UpdateProject', 'project:manage', POST, '/v1/projects/{project}/update'),
  control('DeleteProject', 'project:delete', POST, '/v1/projects/{project}/delete'),
  // Warehouses (scoped by a `project` field / query parameter or the project base URI)
  control('CreateWarehouse', 'warehouse:create', POST, '/v1/warehouses'),
  control('ListWarehouses', 'project:read', GET, '/v1/warehouses'),
  control('DescribeWarehouse', 'warehouse:read', GET, '/v1/warehouses/{warehouse}'),
  control('UpdateWarehouse', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/update'),
  control('DeleteWarehouse', 'warehouse:delete', POST, '/v1/warehouses/{warehouse}/delete'),
  control('DeactivateWarehouse', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/deactivate'),
  control('ActivateWarehouse', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/activate'),
  control('BindNamespace', 'warehouse:manage', POST, '/v1/warehouses/{warehouse}/bind'),
  // Principals, API keys and grants
  control('CreatePrincipal', 'principal:manage', POST, '/v1/principals'),
  control('ListPrincipals', 'principal:manage', GET, '/v1/principals'),
  control('CreateApiKey', 'key:manage', POST, '/v1/principals/{principal}/keys'),
  control('ListApiKeys', 'key:manage', GET, '/v1/principals/{principal}/keys'),
  control('RevokeApiKey', 'key:manage', POST, '/v1/principals/{principal}/keys/{key_id}/revoke'),
  control('GrantRole', 'grant:manage', POST, '/v1/grants'),
  control('ListGrants', 'grant:manage', GET, '/v1/grants'),
  control('RevokeRole', 'grant:manage', POST, '/v1/grants/revoke'),
  // Maintenance policies (docs/maintenance.md): GET reads, POST sets or clears ({"policy": null}).
  control('GetProjectMaintenancePolicy', 'project:read', GET, '/v1/maintenance-policy'),
  control('SetProjectMaintenancePolicy', 'project:manage', POST, '/v1/maintenance-policy'),
  control('GetNamespaceMaintenancePolicy', 'namespace:read', GET, '/v1/namespace/{id}/maintenance-policy'),
  control('SetNamespaceMaintenancePolicy', 'project:manage', POST, '/v1/namespace/{id}/maintenance-policy'),
  control('GetTableMaintenancePolicy', 'table:read', GET, '/v1/table/{id}/maintenance-policy'),
  control('SetTableMaintenancePolicy', 'project:manage', POST, '/v1/table/{id}/maintenance-policy'),
  // Lifecycle (docs/lifecycle.md): protection is admin-gated; undrop needs what a drop needs.
  control('GetNamespaceProtection', 'namespace:read', GET, '/v1/namespace/{id}/protection'),
  control('SetNamespaceProtection', 'project:manage', POST, '/v1/namespace/{id}/protection'),
  control('GetTableProtection', 'table:read', GET, '/v1/table/{id}/protection'),
  control('SetTableProtection', 'project:manage', POST, '/v1/table/{id}/protection'),
  control('UndropTable', 'table:drop', POST, '/v1/table/{id}/undrop'),
  control('ListTableTasks', 'table:read', GET, '/v1/table/{id}/tasks'),
  control('UndropNamespace', 'namespace:drop', POST, '/v1/namespace/{id}/undrop'),
  control('ListNamespaceTasks', 'namespace:read', GET, '/v1/namespace/{id}/tasks'),
];

/** The spec's operations and ours: what the router serves and the API deploys. */
export const ALL_OPERATIONS: readonly OperationDef[] = [...OPERATIONS, ...CONTROL_OPERATIONS];
