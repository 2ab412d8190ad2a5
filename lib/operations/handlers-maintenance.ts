import * as z from 'zod/mini';
import type { CatalogServices } from '../catalog/services.js';
import { InvalidInputError } from '../errors.js';
import { parsePolicyFields } from '../maintenance/policy.js';
import { getMaintenancePolicy, setMaintenancePolicy, type PolicyTarget } from '../maintenance/policy-doors.js';
import { recentReports } from '../maintenance/report-reader.js';
import { queueTableSweep } from '../maintenance/sweep-now.js';
import type { HandlersOf, OperationRequest } from '../contract/request.js';
import { checkedBy, decode, optionalInteger, optionalString, queryFields } from './decode.js';

/**
 * The maintenance-policy doors (control plane, ours; docs/maintenance.md). Registry records only,
 * in the metadata bundle: nothing here opens a dataset or loads LanceDB. The body is decoded here
 * (the policy's own rules are lib/maintenance/policy.ts's) before anything is read.
 */

const NEEDS_POLICY = 'the request body needs a "policy" field: an object of policy fields to set, or null to clear the record';

/** `{"policy": {...}}` sets the record, `{"policy": null}` clears it; the field must be there. */
const policyBody = z.object({
  given: z.literal(true, { error: NEEDS_POLICY }),
  policy: checkedBy((v) => (v === null ? null : parsePolicyFields(v))),
});

const set = (target: (req: OperationRequest) => PolicyTarget) => async (req: OperationRequest, svc: CatalogServices) => {
  const { policy } = decode(policyBody, { given: 'policy' in req.body, policy: req.body.policy });
  return setMaintenancePolicy(svc, target(req), policy);
};

const reportsQuery = z.object({ pass: optionalString('pass'), table: optionalString('table'), limit: optionalInteger('limit', { min: 1 }) });

export const maintenanceHandlers: HandlersOf<'lib/operations/handlers-maintenance.ts', CatalogServices> = {
  GetProjectMaintenancePolicy: async (_req, svc) => getMaintenancePolicy(svc, { level: 'project' }),
  SetProjectMaintenancePolicy: set(() => ({ level: 'project' })),
  GetNamespaceMaintenancePolicy: async (req, svc) => getMaintenancePolicy(svc, { level: 'namespace', id: req.id }),
  SetNamespaceMaintenancePolicy: set((req) => ({ level: 'namespace', id: req.id })),
  GetTableMaintenancePolicy: async (req, svc) => getMaintenancePolicy(svc, { level: 'table', id: req.id }),
  SetTableMaintenancePolicy: set((req) => ({ level: 'table', id: req.id })),
  SweepTable: async (req, svc) => {
    // No fields but the path's `id` yet: one the door would ignore (a policy override, say) is
    // refused, not dropped.
    const fields = Object.keys(req.body ?? {}).filter((f) => f !== 'id');
    if (fields.length > 0) throw new InvalidInputError(`SweepTable takes no body fields; got ${fields.map((f) => JSON.stringify(f)).join(', ')}`);
    return queueTableSweep(svc, req.id);
  },
  ListMaintenanceReports: async (req, svc) => {
    const { pass, table, limit } = decode(reportsQuery, queryFields(req, 'pass', 'table', 'limit'));
    // `table` is an object id joined by the request's delimiter, like a path id (already decoded:
    // it is a query value).
    return recentReports(svc, { pass, limit, ...(table === undefined ? {} : { table: table.split(req.delimiter).filter((p) => p !== '') }) });
  },
};
