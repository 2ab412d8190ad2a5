import { optionalBoolean } from '../catalog/params.js';
import type { OperationRequest } from './types.js';

/**
 * Flags our lifecycle adds to spec doors (docs/lifecycle.md). They travel as query parameters,
 * which every client can add to any door; a body field of the same name is accepted too.
 */
const flag = (req: OperationRequest, name: string): boolean =>
  optionalBoolean(req.query.get(name) ?? undefined, name) ?? optionalBoolean(req.body[name], name) ?? false;

/** `force=true` overrides protection and nothing else. */
export const force = (req: OperationRequest): boolean => flag(req, 'force');

/** `purge=true` on DropTable in a warehouse with trash grace: destroy now instead of trashing. */
export const purge = (req: OperationRequest): boolean => flag(req, 'purge');
