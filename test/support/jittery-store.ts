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

/** Resolves after a random 0–`max` turns of the event loop (each a setImmediate hop). */
export function turns(max: number): Promise<void> {
  let left = Math.floor(Math.random() * (max + 1));
  return new Promise((resolve) => {
    const step = () => (left-- <= 0 ? resolve() : setImmediate(step));
    step();
  });
}

/**
 * Wraps a store so every call waits a random 0–`max` event-loop turns before and after it runs.
 * Interleavings vary as much as with millisecond jitter (what decides an interleaving is the
 * order of the calls, not how long they take), at a fraction of the wall time: race tests run
 * hundreds of iterations of multi-step protocols on it.
 */
export function turnJittery(store: ObjectStore, max = 3): ObjectStore {
  return intercept(store, async (_op, _args, run) => {
    await turns(max);
    const result = await run();
    await turns(max);
    return result;
  });
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

/** One store call as a gate predicate sees it. */
export interface StoreCall {
  readonly op: keyof ObjectStore;
  readonly key: string;
  /** The body of a write, as text ('' for reads and deletes). */
  readonly body: string;
}

const WRITES: ReadonlySet<string> = new Set(['putIfAbsent', 'putIfMatch', 'put', 'deleteIfMatch', 'delete']);

export const isWrite = (call: StoreCall) => WRITES.has(call.op);

/**
 * A deterministic interleaving point. The first store call matching `when` stops before it runs;
 * `reached` resolves once it is stopped there, and it runs when `release()` is called. Tests
 * wait on `reached` (never on a timer), so the interleaving is the same under any load.
 */
export interface Gate {
  readonly store: ObjectStore;
  /** Resolves when the gated call is waiting at the gate. */
  readonly reached: Promise<StoreCall>;
  release(): void;
}

export function gateFirst(store: ObjectStore, when: (call: StoreCall) => boolean): Gate {
  let gated = false;
  let arrive!: (call: StoreCall) => void;
  let open!: () => void;
  const reached = new Promise<StoreCall>((r) => (arrive = r));
  const released = new Promise<void>((r) => (open = r));
  const gatedStore = intercept(store, async (op, args, run) => {
    const body = args[1];
    const call: StoreCall = { op, key: String(args[0] ?? ''), body: WRITES.has(op) && body !== undefined ? String(body) : '' };
    if (!gated && typeof args[0] === 'string' && when(call)) {
      gated = true;
      arrive(call);
      await released;
    }
    return run();
  });
  return { store: gatedStore, reached, release: open };
}

/** The failure a simulated crash throws: the request stops, nothing after it runs. */
export class SimulatedCrash extends Error {
  constructor(after: number) {
    super(`simulated crash after write ${after}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * A store that lets `writes` writes land and then crashes: the call that performed the last
 * allowed write throws after it landed, and every later call throws before it runs. A request
 * running on it stops exactly there, like a Lambda killed between two round trips.
 */
export function crashAfterWrites(store: ObjectStore, writes: number): { store: ObjectStore; crashed(): boolean; settled(): Promise<void> } {
  let done = 0;
  let crashed = false;
  // Calls under way: a door that stops on the crash may have sent others beside it, which land
  // after its promise rejects (as a killed Lambda's last requests may still reach S3).
  let running = 0;
  const idle: (() => void)[] = [];
  const crashing = intercept(store, async (op, _args, run) => {
    if (crashed) throw new SimulatedCrash(writes);
    running++;
    try {
      if (!WRITES.has(op)) return await run();
      const result = await run();
      done++;
      if (done >= writes) {
        crashed = true;
        throw new SimulatedCrash(writes);
      }
      return result;
    } finally {
      running--;
      if (running === 0) for (const wake of idle.splice(0)) wake();
    }
  });
  return {
    store: crashing,
    crashed: () => crashed,
    /** Resolves once no call is under way any more: what the store holds then is what the crash left. */
    settled: () => (running === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r))),
  };
}
