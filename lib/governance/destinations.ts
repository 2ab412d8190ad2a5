import type { Action } from '../contract/operations.js';
import type { OperationRequest } from '../contract/request.js';
import type { ResourceChain } from './policy-engine.js';
import { namespaceChain, tableChain } from './resources.js';

/**
 * Doors that create something somewhere other than their path's `{id}` (docs/governance.md,
 * "Destinations, force and tenants"). The guard authorizes the source with the door's own action
 * and then this destination with the action that creates there, so a door can never put an
 * object where its caller could not have created it.
 *
 * Audited against lib/contract/operations.ts and control-table.ts: RenameTable, UndropTable and
 * UndropNamespace are the only doors whose body names a destination. RegisterTable, DeclareTable,
 * CreateTable and CreateNamespace create at `{id}` itself (checked as the source);
 * BindNamespace creates a top-level namespace but needs `warehouse:manage`, which only a
 * project-wide admin holds and which implies `namespace:create` there; the batch and
 * materialized-view doors are unsupported.
 */

export interface Destination {
  readonly action: Action;
  readonly chain: ResourceChain;
  /** The spec id of what would be created (for the refusal). */
  readonly id: readonly string[];
}

const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === 'string');
/** The handlers read `null` as "not given" (lib/catalog/params.ts); so must this. */
const given = (v: unknown): unknown => (v === null ? undefined : v);

/**
 * The destination of `request` when it differs from `{id}`, or undefined. Only fields the
 * handler would refuse (400, before anything is written) yield undefined: every form the
 * handler accepts is read here exactly as the handler reads it.
 */
export function destinationOf(request: OperationRequest, project: string): Destination | undefined {
  const body = request.body;
  if (request.id.length === 0) return undefined;
  switch (request.operation.operationId) {
    case 'RenameTable':
    case 'UndropTable': {
      const name = given(body.new_table_name);
      const ns = given(body.new_namespace_id);
      if (name === undefined && ns === undefined) return undefined; // undrop in place; a rename without a name is a 400
      if ((name !== undefined && typeof name !== 'string') || (ns !== undefined && !stringArray(ns))) return undefined; // 400
      if (request.operation.operationId === 'RenameTable' && name === undefined) return undefined; // 400: new_table_name is required
      const id = [...(stringArray(ns) ? ns : request.id.slice(0, -1)), typeof name === 'string' ? name : request.id[request.id.length - 1]];
      return { action: 'table:create', chain: tableChain(project, id), id };
    }
    case 'UndropNamespace': {
      const name = given(body.new_namespace_name);
      if (typeof name !== 'string') return undefined; // in place, or a 400
      const id = [...request.id.slice(0, -1), name];
      return { action: 'namespace:create', chain: namespaceChain(project, id), id };
    }
    default:
      return undefined;
  }
}
