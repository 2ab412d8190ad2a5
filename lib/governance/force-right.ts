import { ALL_OPERATIONS, type Action, type OperationId } from '../contract/operations.js';
import type { Admission } from './admission.js';
import type { ResourceChain } from './policy-engine.js';

/**
 * `force=true` may override protection only for a caller who may also clear it
 * (docs/lifecycle.md, "Force"; issue 24 finding 4): forcing must never need less than
 * unprotecting. Each door with force maps to the door that clears the protection it overrides;
 * the right asked is that door's action (from the operation table, so the two cannot drift), on
 * the project for catalog objects and on the door's own resource for warehouses and projects.
 *
 * This is not part of the door's authorization, which runs first and identically with or
 * without force (docs/rules.md rule 3): a caller without the right is told exactly what it is told
 * without force — a protected object answers 409 — and an unprotected object is done.
 */
const UNPROTECT_DOOR: Readonly<Partial<Record<OperationId, OperationId>>> = {
  DropTable: 'SetTableProtection',
  DeregisterTable: 'SetTableProtection',
  RenameTable: 'SetTableProtection',
  RegisterTable: 'SetTableProtection', // mode overwrite replaces (deregisters) a table
  DropNamespace: 'SetNamespaceProtection', // and, for a cascade, every protected descendant's
  DeleteWarehouse: 'UpdateWarehouse',
  DeleteProject: 'UpdateProject',
};

const ACTIONS = new Map(ALL_OPERATIONS.map((o) => [o.operationId, o.action]));

/** The doors that take `force` (for tests and docs). */
export const FORCE_DOORS = Object.keys(UNPROTECT_DOOR) as readonly OperationId[];

/** Whether a door with force was asked for it (query or body); its value is parsed by the handler. */
export const asksForce = (admission: Admission): boolean => FORCE_DOORS.includes(admission.operation.operationId) && admission.namesForce;

/** The right to unprotect what `operationId` would force past, decided on `chain`. */
export function unprotectRight(operationId: OperationId, chain: ResourceChain): { action: Action; chain: ResourceChain } | undefined {
  const door = UNPROTECT_DOOR[operationId];
  const action = door === undefined ? undefined : ACTIONS.get(door);
  return action === undefined ? undefined : { action, chain };
}
