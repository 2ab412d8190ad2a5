import type { CatalogServices } from '../catalog/services.js';
import { InvalidInputError } from '../errors.js';
import { grantRole, listGrants, revokeRole } from '../catalog/control/grants.js';
import { createApiKey, createPrincipal, listApiKeys, listPrincipals, revokeApiKey } from '../catalog/control/principals.js';
import { createProject, deleteProject, describeProject, listProjects, updateProject } from '../catalog/control/projects.js';
import {
  bindNamespace,
  createWarehouse,
  deleteWarehouse,
  describeWarehouse,
  listWarehouses,
  setWarehouseActive,
  updateWarehouse,
} from '../catalog/control/warehouses.js';
import { force } from './force.js';
import type { HandlersOf, OperationRequest } from '../contract/request.js';

/**
 * The control-plane doors (lib/contract/control-operations.ts). The guard has already scoped
 * `svc.project` to the project the request addresses (field, query, base URI or default).
 */
const param = (req: OperationRequest, name: string): string => {
  const value = req.params?.[name];
  if (value === undefined || value.length === 0) throw new InvalidInputError(`${name} is required in the path`);
  return value;
};

export const controlHandlers: HandlersOf<'lib/operations/handlers-control.ts', CatalogServices> = {
  CreateProject: (req, svc) => createProject(svc, req.caller, req.body),
  ListProjects: (req, svc) => listProjects(svc, req.query),
  DescribeProject: (req, svc) => describeProject(svc, param(req, 'project')),
  UpdateProject: (req, svc) => updateProject(svc, param(req, 'project'), req.body, req.caller),
  DeleteProject: (req, svc) => deleteProject(svc, param(req, 'project'), { force: force(req, svc) }),

  CreateWarehouse: (req, svc) => createWarehouse(svc, svc.project, req.body, req.caller),
  ListWarehouses: (req, svc) => listWarehouses(svc, svc.project, req.query),
  DescribeWarehouse: (req, svc) => describeWarehouse(svc, svc.project, param(req, 'warehouse')),
  UpdateWarehouse: (req, svc) => updateWarehouse(svc, svc.project, param(req, 'warehouse'), req.body, req.caller),
  DeleteWarehouse: (req, svc) => deleteWarehouse(svc, svc.project, param(req, 'warehouse'), req.body, { force: force(req, svc) }),
  DeactivateWarehouse: (req, svc) => setWarehouseActive(svc, svc.project, param(req, 'warehouse'), false),
  ActivateWarehouse: (req, svc) => setWarehouseActive(svc, svc.project, param(req, 'warehouse'), true),
  BindNamespace: (req, svc) => bindNamespace(svc, svc.project, param(req, 'warehouse'), req.body),

  CreatePrincipal: (req, svc) => createPrincipal(svc, req.body),
  ListPrincipals: (req, svc) => listPrincipals(svc, req.query),
  CreateApiKey: (req, svc) => createApiKey(svc, param(req, 'principal'), req.body, req.caller),
  ListApiKeys: (req, svc) => listApiKeys(svc, param(req, 'principal')),
  RevokeApiKey: (req, svc) => revokeApiKey(svc, param(req, 'principal'), param(req, 'key_id')),

  GrantRole: (req, svc) => grantRole(svc, svc.project, req.body),
  ListGrants: (req, svc) => listGrants(svc, svc.project, req.query),
  RevokeRole: (req, svc) => revokeRole(svc, svc.project, req.body),
};
