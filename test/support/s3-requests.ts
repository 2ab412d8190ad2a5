import type { S3Request } from './s3-fake.js';

/**
 * The serial round trips of a set of requests: the longest chain in which each request started
 * only after the one before it had finished. Requests sent together overlap and count once.
 * Read from the logical start/end instants the S3 fake records, so it is the same on a loaded
 * machine as on an idle one (an upper bound on the true dependency chain, never an undercount).
 */
export function criticalPath(requests: readonly S3Request[]): number {
  const depth = new Map<S3Request, number>();
  const byStart = [...requests].sort((a, b) => a.start - b.start);
  let longest = 0;
  for (const r of byStart) {
    let d = 1;
    for (const q of byStart) {
      if (q.end !== 0 && q.end < r.start) d = Math.max(d, (depth.get(q) ?? 1) + 1);
    }
    depth.set(r, d);
    longest = Math.max(longest, d);
  }
  return longest;
}

/** Requests counted by operation (`GetObject: 3, PutObject: 1`), as the cost benches report them. */
export function countByOp(requests: readonly S3Request[]): Record<string, number> {
  const by: Record<string, number> = {};
  for (const r of requests) by[r.op] = (by[r.op] ?? 0) + 1;
  return by;
}

/** `countByOp`'s figures per unit of work (`per` changes, cycles, …), three decimals. */
export function formatPerUnit(by: Record<string, number>, per: number): string {
  return (
    Object.entries(by)
      .map(([op, c]) => `${op} ${(c / per).toFixed(3)}`)
      .join(', ') || '-'
  );
}
