import { optionalBoolean } from '../catalog/params.js';
import type { OperationRequest } from './types.js';

/**
 * `force=true` overrides protection (docs/lifecycle.md) and nothing else. It travels as a query
 * parameter, which every client can add to any door; a body field `force` is accepted too.
 */
export const force = (req: OperationRequest): boolean =>
  optionalBoolean(req.query.get('force') ?? undefined, 'force') ?? optionalBoolean(req.body.force, 'force') ?? false;
