import type { CatalogServices } from '../catalog/services.js';
import { getMaintenancePolicy, setMaintenancePolicy } from '../maintenance/policy-doors.js';
import type { HandlersOf } from '../contract/request.js';

/**
 * The maintenance-policy doors (control plane, ours; docs/maintenance.md). Registry records only,
 * in the metadata bundle: nothing here opens a dataset or loads LanceDB.
 */
export const maintenanceHandlers: HandlersOf<'lib/operations/handlers-maintenance.ts', CatalogServices> = {
  GetProjectMaintenancePolicy: (_req, svc) => getMaintenancePolicy(svc, { level: 'project' }),
  SetProjectMaintenancePolicy: (req, svc) => setMaintenancePolicy(svc, { level: 'project' }, req.body),
  GetNamespaceMaintenancePolicy: (req, svc) => getMaintenancePolicy(svc, { level: 'namespace', id: req.id }),
  SetNamespaceMaintenancePolicy: (req, svc) => setMaintenancePolicy(svc, { level: 'namespace', id: req.id }, req.body),
  GetTableMaintenancePolicy: (req, svc) => getMaintenancePolicy(svc, { level: 'table', id: req.id }),
  SetTableMaintenancePolicy: (req, svc) => setMaintenancePolicy(svc, { level: 'table', id: req.id }, req.body),
};
