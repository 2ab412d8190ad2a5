import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request's commit deadline. API Gateway gives up on a request after 29 s; a commit that
 * lands after that is a write the client was told nothing about (and will likely retry). So
 * every place the server *waits to commit* — registry compare-and-swap retries, the queue of
 * writers to one table — stops waiting at the deadline and answers 409 / code 14, and a write
 * that has not started by then never starts. A write already running is not abandoned: it is
 * finished and answered (issue #8, defect 9).
 *
 * The deadline travels with the request through AsyncLocalStorage, so the registry and the
 * write queue see it without every signature in between carrying it. Time comes from a Clock,
 * so tests drive it by hand.
 */
export interface Clock {
  now(): number;
  /** Resolves after `ms` of this clock's time. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref()),
};

export interface Deadline {
  readonly clock: Clock;
  /** Epoch ms (of `clock`) after which no new commit attempt starts. */
  readonly at: number;
  /** The budget it was made with, for messages. */
  readonly budgetMs: number;
}

/** Default budget: under API Gateway's 29 s integration timeout, with room to answer. */
export const DEFAULT_COMMIT_DEADLINE_MS = 25_000;

const current = new AsyncLocalStorage<Deadline>();

export function deadlineIn(budgetMs: number, clock: Clock = systemClock): Deadline {
  return { clock, at: clock.now() + budgetMs, budgetMs };
}

/** Runs `fn` with `deadline` as the current request's deadline. */
export function withDeadline<T>(deadline: Deadline, fn: () => Promise<T>): Promise<T> {
  return current.run(deadline, fn);
}

/** The current request's deadline, if it has one (background jobs have none). */
export function currentDeadline(): Deadline | undefined {
  return current.getStore();
}

/** Milliseconds left, or Infinity without a deadline. */
export function remainingMs(deadline = currentDeadline()): number {
  return deadline ? deadline.at - deadline.clock.now() : Number.POSITIVE_INFINITY;
}
