import type { OperationRequest } from '../contract/request.js';
import type { CatalogServices } from '../catalog/services.js';
import { NO_QUOTAS, reserveQuota, type QuotaHold, type QuotaKind } from '../catalog/quotas.js';
import { keys, validateName } from '../registry/keys.js';

/**
 * Which quota a create door takes a slot of, and the record key it writes: the operation table's
 * `creates` column (CreateNamespace; DeclareTable, CreateTable, RegisterTable), the object at the
 * request's `{id}` (docs/operations.md, "Object quotas"). A request whose id is not a valid name
 * takes none: its door refuses it with 400 anyway. The quotas are the project's own or the
 * deployment's (`services.limits`).
 */
export async function quotaAdmission(request: OperationRequest, services: CatalogServices): Promise<QuotaHold | undefined> {
  const creates = request.operation.creates;
  if (!creates || request.id.length === 0) return undefined;
  const kind: QuotaKind = creates === 'namespace' ? 'namespaces' : 'tables';
  try {
    for (const part of request.id) validateName(creates, part);
  } catch {
    return undefined;
  }
  const objectKey = creates === 'namespace' ? keys.namespace(services.project, request.id) : keys.table(services.project, request.id);
  return reserveQuota(services, kind, objectKey, services.limits?.quotas ?? NO_QUOTAS);
}
