import { optionalBoolean, optionalString } from '../catalog/params.js';
import { namespaceTasks } from '../catalog/namespaces/tasks.js';
import { undropNamespace } from '../catalog/namespaces/undrop.js';
import { describeProtection, setProtection, type ProtectedKind } from '../catalog/protection.js';
import type { CatalogServices } from '../catalog/services.js';
import { tableTasks } from '../catalog/protocols/trash.js';
import { undropTable } from '../catalog/tables/undrop.js';
import { InvalidInputError } from '../errors.js';
import type { HandlersOf, OperationRequest } from '../contract/request.js';

/** The lifecycle doors of lib/contract/control-operations.ts (docs/lifecycle.md). */

function protectedFlag(req: OperationRequest): boolean {
  const value = optionalBoolean(req.body.protected, 'protected');
  if (value === undefined) throw new InvalidInputError('protected is required: {"protected": true} or {"protected": false}');
  return value;
}

const protect = (kind: ProtectedKind) => (req: OperationRequest, svc: CatalogServices) =>
  setProtection(svc, { kind, id: req.id, protected: protectedFlag(req), principal: req.caller?.principal ?? 'anonymous' });

function optionalStringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new InvalidInputError(`${field} must be an array of strings`);
  return value as string[];
}

export const lifecycleHandlers: HandlersOf<'lib/operations/handlers-lifecycle.ts', CatalogServices> = {
  GetNamespaceProtection: (req, svc) => describeProtection(svc, 'namespace', req.id),
  SetNamespaceProtection: protect('namespace'),
  GetTableProtection: (req, svc) => describeProtection(svc, 'table', req.id),
  SetTableProtection: protect('table'),
  UndropTable: (req, svc) =>
    undropTable(svc, {
      id: req.id,
      newName: optionalString(req.body.new_table_name, 'new_table_name'),
      newNamespace: optionalStringArray(req.body.new_namespace_id, 'new_namespace_id'),
    }),
  ListTableTasks: (req, svc) => tableTasks(svc, req.id),
  UndropNamespace: (req, svc) => undropNamespace(svc, { id: req.id, newName: optionalString(req.body.new_namespace_name, 'new_namespace_name') }),
  ListNamespaceTasks: (req, svc) => namespaceTasks(svc, req.id),
};
