/**
 * Waiting on a job through the API: the crash tests of the local task tier
 * (test/crash/job-task-*.test.ts) poll DescribeTransaction until the state they assert.
 */
import { expectOk } from './data-http.js';
import type { TestServer } from './server.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function describeTx(s: TestServer, id: string): Promise<{ status: string; properties: Record<string, string> }> {
  return expectOk(await s.request('POST', `/v1/transaction/${id}/describe`, '{}'));
}

/** The probe's first defined answer, polled every 100 ms; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The job once it has Succeeded or Failed. */
export function settled(s: TestServer, id: string, timeoutMs = 120_000): Promise<{ status: string; properties: Record<string, string> }> {
  return until(`job ${id} to finish`, timeoutMs, async () => {
    const v = await describeTx(s, id);
    return ['Succeeded', 'Failed'].includes(v.status) ? v : undefined;
  });
}

/** The local server's loops off (jobs, sweep, index build, reconcile, orphan scan): the test runs each pass itself. */
export const LOOPS_OFF: Readonly<Record<string, string>> = {
  RASK_JOBS_INTERVAL_MS: '0',
  RASK_SWEEP_INTERVAL_MS: '0',
  RASK_INDEX_INTERVAL_MS: '0',
  RASK_RECONCILE_INTERVAL_MS: '0',
  RASK_ORPHANS_INTERVAL_MS: '0',
};
