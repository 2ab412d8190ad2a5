import { currentDeadline, remainingMs } from '../../deadline.js';
import { ConcurrentModificationError } from '../../errors.js';

/**
 * Server-side writes to one table, one at a time per process.
 *
 * Concurrent LanceDB writers to one dataset conflict at commit and Lance retries internally,
 * re-reading and rebasing each time, with no deadline the server can set: with a handful of
 * writers on a hot table single inserts took 43–65 s while the p99 was 30 ms (issue #8,
 * defect 9), past API Gateway's 29 s, so clients saw a timeout for inserts that then committed.
 * Queued in-process, each write commits on its first attempt; and the wait for a turn is what
 * the request's commit deadline bounds (lib/deadline.ts): a write whose turn does not come in
 * time never starts and answers 409 / code 14, so nothing lands after the client gave up. A
 * write that has started runs to its end.
 *
 * Across processes (Lambda instances, several local servers) Lance's own commit retry still
 * arbitrates; there each invocation serves one request, and the function timeout bounds it.
 */
const tails = new Map<string, Promise<void>>();

export async function serializedWrite<T>(location: string, write: () => Promise<T>): Promise<T> {
  const ahead = tails.get(location);
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const tail = ahead ? ahead.then(() => done) : done;
  tails.set(location, tail);
  try {
    if (ahead) await waitForTurn(ahead);
    return await write();
  } finally {
    release();
    if (tails.get(location) === tail) tails.delete(location);
  }
}

/** Writers queued or running per table, for tests and diagnostics. */
export function queuedTables(): number {
  return tails.size;
}

async function waitForTurn(ahead: Promise<void>): Promise<void> {
  const deadline = currentDeadline();
  if (!deadline) return ahead;
  const left = remainingMs(deadline);
  let expired = left <= 0;
  if (!expired) {
    expired = await Promise.race([ahead.then(() => false), deadline.clock.sleep(left).then(() => true)]);
  }
  if (expired) {
    throw new ConcurrentModificationError(
      `the writes queued ahead of this one on the table did not finish within the request's ${deadline.budgetMs} ms commit deadline; nothing was written, retry later`,
    );
  }
}
