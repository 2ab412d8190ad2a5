import * as z from 'zod/mini';
import { namespaceTasks } from '../catalog/namespaces/tasks.js';
import { undropNamespace } from '../catalog/namespaces/undrop.js';
import { describeProtection, setProtection, type ProtectedKind } from '../catalog/protection.js';
import type { CatalogServices } from '../catalog/services.js';
import { tableTasks } from '../catalog/protocols/trash.js';
import { undropTable } from '../catalog/tables/undrop.js';
import type { HandlersOf, OperationRequest } from '../contract/request.js';
import { decode, optionalBoolean, optionalString, optionalStringArray } from './decode.js';

/**
 * The lifecycle doors of lib/contract/control-operations.ts (docs/lifecycle.md): each decodes its
 * body here and calls the catalog with typed input.
 */

const protectionInput = z.object({
  protected: z.pipe(optionalBoolean('protected'), z.boolean({ error: 'protected is required: {"protected": true} or {"protected": false}' })),
});

const undropTableInput = z.object({
  newName: optionalString('new_table_name'),
  newNamespace: optionalStringArray('new_namespace_id'),
});

const undropNamespaceInput = z.object({ newName: optionalString('new_namespace_name') });

const protect = (kind: ProtectedKind) => async (req: OperationRequest, svc: CatalogServices) => {
  const input = decode(protectionInput, { protected: req.body.protected });
  return setProtection(svc, { kind, id: req.id, protected: input.protected, principal: req.caller?.principal ?? 'anonymous' });
};

export const lifecycleHandlers: HandlersOf<'lib/operations/handlers-lifecycle.ts', CatalogServices> = {
  GetNamespaceProtection: async (req, svc) => describeProtection(svc, 'namespace', req.id),
  SetNamespaceProtection: protect('namespace'),
  GetTableProtection: async (req, svc) => describeProtection(svc, 'table', req.id),
  SetTableProtection: protect('table'),
  UndropTable: async (req, svc) =>
    undropTable(svc, { id: req.id, ...decode(undropTableInput, { newName: req.body.new_table_name, newNamespace: req.body.new_namespace_id }) }),
  ListTableTasks: async (req, svc) => tableTasks(svc, req.id),
  UndropNamespace: async (req, svc) => undropNamespace(svc, { id: req.id, ...decode(undropNamespaceInput, { newName: req.body.new_namespace_name }) }),
  ListNamespaceTasks: async (req, svc) => namespaceTasks(svc, req.id),
};
