import type { OperationRequest } from '../contract/request.js';
import type { CatalogServices } from '../catalog/services.js';
import { NO_QUOTAS, reserveQuota, type QuotaHold, type QuotaKind } from '../catalog/quotas.js';
import { keys, validateName } from '../registry/keys.js';

/**
 * Which quota a door that adds an object takes a slot of, and the record key it writes
 * (docs/operations.md, "Object quotas"):
 * - the operation table's `creates` column (CreateNamespace; DeclareTable, CreateTable,
 *   RegisterTable): the object at the request's `{id}`;
 * - UndropTable: a table back from trash is one more table, at the target its body names
 *   (`new_namespace_id`, `new_table_name`), else at `{id}`.
 * UndropNamespace brings back a whole subtree, known only once its trash is read: it reserves
 * its slots itself (lib/catalog/namespaces/undrop.ts). RenameTable moves a table within its
 * project and adds none. A request whose target is not a valid name takes none: its door refuses
 * it with 400 anyway. The quotas are the project's own or the deployment's (`services.limits`).
 */
export async function quotaAdmission(request: OperationRequest, services: CatalogServices): Promise<QuotaHold | undefined> {
  const target = targetOf(request);
  if (!target) return undefined;
  const { creates, id } = target;
  if (id.length === 0) return undefined;
  const kind: QuotaKind = creates === 'namespace' ? 'namespaces' : 'tables';
  try {
    for (const part of id) validateName(creates, part);
  } catch {
    return undefined;
  }
  const objectKey = creates === 'namespace' ? keys.namespace(services.project, id) : keys.table(services.project, id);
  return reserveQuota(services, kind, objectKey, services.limits?.quotas ?? NO_QUOTAS);
}

function targetOf(request: OperationRequest): { creates: 'namespace' | 'table'; id: readonly string[] } | undefined {
  const creates = request.operation.creates;
  if (creates) return { creates, id: request.id };
  if (request.operation.operationId !== 'UndropTable' || request.id.length === 0) return undefined;
  const body = (request.body ?? {}) as { new_table_name?: unknown; new_namespace_id?: unknown };
  const namespace = body.new_namespace_id === undefined ? request.id.slice(0, -1) : body.new_namespace_id;
  const name = body.new_table_name === undefined ? request.id[request.id.length - 1] : body.new_table_name;
  // A malformed body is the door's 400; it takes no slot.
  if (!Array.isArray(namespace) || !namespace.every((p) => typeof p === 'string') || typeof name !== 'string') return undefined;
  return { creates: 'table', id: [...namespace, name] };
}
