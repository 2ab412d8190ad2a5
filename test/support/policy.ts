import type { CatalogServices } from '../../lib/catalog/services.js';
import { parsePolicyFields } from '../../lib/maintenance/policy.js';
import { setMaintenancePolicy, type PolicyTarget } from '../../lib/maintenance/policy-doors.js';

/** Sets a policy as its door would for the body `{"policy": policy}` (fields checked first). */
export const setPolicy = (services: CatalogServices, target: PolicyTarget, body: { readonly policy: unknown }) =>
  setMaintenancePolicy(services, target, parsePolicyFields(body.policy));
