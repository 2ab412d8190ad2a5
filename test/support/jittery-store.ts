import type { ObjectStore } from '../../lib/ports/object-store.js';

type AnyOp = (...args: never[]) => Promise<unknown>;

/** A store whose every call goes through `around(name, run)`; the base for test wrappers. */
function intercept(store: ObjectStore, around: (op: keyof ObjectStore, args: unknown[], run: () => Promise<unknown>) => Promise<unknown>): ObjectStore {
  const ops = ['get', 'head', 'putIfAbsent', 'copyIfAbsent', 'putIfMatch', 'put', 'deleteIfMatch', 'delete', 'list'] as const;
  const wrapped: Record<string, unknown> = { url: store.url };
  for (const op of ops) {
    const fn = (store[op] as AnyOp).bind(store) as (...a: unknown[]) => Promise<unknown>;
    wrapped[op] = (...args: unknown[]) => around(op, args, () => fn(...args));
  }
  return wrapped as unknown as ObjectStore;
}

/**
 * Wraps a store so every call waits a random 0–`maxMs` ms before and after it runs, like network
 * round trips to S3. Without it an in-memory store answers in call order and races between
 * multi-step protocols rarely interleave.
 */
export function jittery(store: ObjectStore, maxMs = 3): ObjectStore {
  const pause = () => new Promise((r) => setTimeout(r, Math.random() * maxMs));
  return intercept(store, async (_op, _args, run) => {
    await pause();
    const result = await run();
    await pause();
    return result;
  });
}

/**
 * Wraps a store so that the first `putIfAbsent` of `key` waits for `release` before it runs:
 * a deterministic "this write lands after everything else happened" interleaving.
 */
export function gateFirstCreate(store: ObjectStore, key: string, release: Promise<unknown>): ObjectStore {
  let gated = false;
  return intercept(store, async (op, args, run) => {
    if (op === 'putIfAbsent' && args[0] === key && !gated) {
      gated = true;
      await release;
    }
    return run();
  });
}
