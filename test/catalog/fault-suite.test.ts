// @covers CreateNamespace, DropNamespace, DeclareTable, RegisterTable, RenameTable, DropTable, UndropTable, SetTableProtection, CreateTableVersion, DescribeTable
import { describe, expect, it } from 'vitest';
import { runFaultWorkload, summarize, type RunReport } from '../support/fault-workload.js';

/**
 * The fault-injection suite (issue #35; docs/testing.md, "Faults on the AWS path"): 8 concurrent
 * clients through the metadata Lambda's composition over the S3 fake, every S3 attempt failing
 * with probability p as S3 fails (503 SlowDown, 500, timeouts and resets before or after the
 * write applied, 409 on conditional writes), with the SDK's retries and without. `npm test` runs
 * a short seeded run per (p, mode); RASK_FAULT_SOAK=1 (`npm run soak:faults`) runs 800 doors each.
 * RASK_FAULT_SEED replays a seed.
 */
const SOAK = process.env.RASK_FAULT_SOAK === '1';
const SEED = Number(process.env.RASK_FAULT_SEED ?? 35);
const DOORS_PER_CLIENT = SOAK ? 100 : 12;

describe('faults on the AWS path: acknowledged changes survive, answers are honest (issue #35)', () => {
  for (const p of [0.02, 0.05, 0.1]) {
    for (const sdkRetries of [true, false]) {
      it(`p = ${p}, ${sdkRetries ? 'with' : 'without'} SDK retries`, async () => {
        const report: RunReport = await runFaultWorkload({ seed: SEED + Math.round(p * 100) + (sdkRetries ? 0 : 1000), p, sdkRetries, clients: 8, doorsPerClient: DOORS_PER_CLIENT });
        console.log(summarize(report));
        expect(report.doors).toBeGreaterThan(0);
        expect(report.internal, 'answers of 500 / code 18').toBe(0);
        expect(report.badUnavailable, '5xx answers other than 503 / 17 with Retry-After').toBe(0);
        expect(report.lost, 'acknowledged effects lost').toEqual([]);
        expect(report.violations, 'registry invariants after one read').toEqual([]);
        expect(report.misleading, 'misleading answers').toEqual([]);
      }, SOAK ? 600_000 : 60_000);
    }
  }
});
