/**
 * A clock that moves only when the test says so: time-dependent protocol steps (leases, backoff,
 * retention, start budgets) are tested by advancing it, never by sleeping against the wall clock.
 * It starts at the real time so that ids and timestamps derived from it look ordinary.
 */
export interface ManualClock {
  /** Milliseconds since the epoch. */
  ms(): number;
  /** As a Date (the shape CatalogServices.now has). */
  now(): Date;
  advance(ms: number): void;
}

export function manualClock(start = Date.now()): ManualClock {
  let t = start;
  return {
    ms: () => t,
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
  };
}
