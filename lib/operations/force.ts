import { optionalBoolean } from '../catalog/params.js';
import type { CatalogServices } from '../catalog/services.js';
import { InternalError } from '../errors.js';
import { FORCE_DOORS } from '../governance/force-right.js';
import type { OperationRequest } from '../contract/request.js';

/**
 * Flags our lifecycle adds to spec doors (docs/lifecycle.md). They travel as query parameters,
 * which every client can add to any door; a body field of the same name is accepted too.
 */
const flag = (req: OperationRequest, name: string): boolean =>
  optionalBoolean(req.query.get(name) ?? undefined, name) ?? optionalBoolean(req.body[name], name) ?? false;

/**
 * `force=true` overrides protection and nothing else, and only for a caller who may unprotect
 * the object (the guard says so in `mayOverrideProtection`; docs/lifecycle.md, "Force").
 * The flag is still parsed for everyone, so a malformed value is a 400 for everyone.
 */
export function force(req: OperationRequest, services: Pick<CatalogServices, 'mayOverrideProtection'>): boolean {
  // A door that reads force must be one the guard decides force for, or force would be free.
  if (!FORCE_DOORS.includes(req.operation.operationId)) {
    throw new InternalError(`${req.operation.operationId} reads force=true but lib/governance/force-right.ts does not know it`);
  }
  return flag(req, 'force') && services.mayOverrideProtection !== false;
}

/** `purge=true` on DropTable in a warehouse with trash grace: destroy now instead of trashing. */
export const purge = (req: OperationRequest): boolean => flag(req, 'purge');
