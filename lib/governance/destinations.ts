import type { Action } from '../contract/operations.js';
import type { Admission } from './admission.js';
import type { ResourceChain } from './policy-engine.js';
import { namespaceChain, tableChain } from './resources.js';

/**
 * Doors that create something somewhere other than their path's `{id}` (docs/governance.md,
 * "Destinations, force and tenants"). The guard authorizes the source with the door's own action
 * and then this destination with the action that creates there, so a door can never put an
 * object where its caller could not have created it.
 *
 * Audited against lib/contract/operations.ts and control-operations.ts: RenameTable, UndropTable and
 * UndropNamespace are the only doors whose body names a destination (read by
 * lib/operations/admission.ts). RegisterTable, DeclareTable,
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

/**
 * The destination of a request when it differs from `{id}` (decoded from its body by
 * lib/operations/admission.ts), with the action that creates there.
 */
export function destinationOf(destination: Admission['destination'], project: string): Destination | undefined {
  if (!destination) return undefined;
  const { kind, id } = destination;
  return kind === 'table'
    ? { action: 'table:create', chain: tableChain(project, id), id }
    : { action: 'namespace:create', chain: namespaceChain(project, id), id };
}
