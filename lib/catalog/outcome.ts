import { currentDeadline, remainingMs } from '../deadline.js';
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

/**
 * Attempts of a step that must follow one already done (persist). Six, not three: without the
 * SDK's retries (RASK_S3_MAX_ATTEMPTS=1) a step of two or three requests fails one attempt in
 * five at p = 0.10, and three attempts left about one claim per 3,000 doors that only reconcile
 * settled (docs/testing.md, "Faults on the AWS path"). The backoff of six is at most 620 ms and
 * the request's deadline bounds it (docs/deploy.md, "S3 budgets"); the happy path never retries.
 */
export const PERSIST_ATTEMPTS = 6;

/**
 * Runs a step that must follow one this request already did (a drop's purge after its record
 * went, a look that decides an unknown outcome) again when the store did not answer, a few times
 * and never past the request's deadline (lib/deadline.ts): every such step is idempotent, and each
 * attempt that lands spares reconcile a leftover. The last error is thrown.
 */
export async function persist<T>(step: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await step();
    } catch (err) {
      const delay = 10 * 2 ** n * (0.5 + Math.random() / 2);
      const deadline = currentDeadline();
      if (!outcomeUnknown(err) || n >= PERSIST_ATTEMPTS || remainingMs(deadline) <= delay) throw err;
      await (deadline ? deadline.clock.sleep(delay) : new Promise((resolve) => setTimeout(resolve, delay)));
    }
  }
}
