import { CatalogError, ErrorCode } from '../errors.js';
import { ConditionFailedError } from '../ports/object-store.js';

/**
 * Whether a failed step may still have taken effect (docs/protocols.md, "Faults: outcomes the
 * door cannot know"). A lost race (the condition did not hold) and every answer of the catalog's
 * own rules (already exists, not found, invalid…) say what happened; a store that did not answer
 * (503 / 17 once the adapter's retries are spent: a timeout, a reset, a 5xx after S3 acted) or
 * a bug (18) do not. A door never rolls back what it may have done on such an error: it leaves
 * the state to the next read and to reconcile, which finish it from what the records say.
 */
export function outcomeUnknown(err: unknown): boolean {
  if (err instanceof ConditionFailedError) return false;
  if (err instanceof CatalogError) return err.code === ErrorCode.ServiceUnavailable || err.code === ErrorCode.Internal;
  return true;
}
