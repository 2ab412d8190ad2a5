/**
 * Issue #8, acceptance: a seeded generator of requests valid against the spec's own request
 * schemas (test/fuzz/spec-gen.ts), thousands of them over all 54 operations against a small real
 * world (test/fuzz/world.ts), in small concurrent batches. No answer may be >= 500 except 503
 * with Retry-After, and no error body may carry a storage path or a source location.
 *
 * RASK_FUZZ_REQUESTS raises the count (default 2000), RASK_FUZZ_SEED changes the sequence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestGenerator } from './spec-gen.js';
import { restoreScratch, seedWorld, startWorld, type World, type WorldResponse } from './world.js';

const COUNT = Number(process.env.RASK_FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.RASK_FUZZ_SEED ?? 8);
const CONCURRENCY = 4;

let world: World;

beforeAll(async () => {
  world = await startWorld();
  await seedWorld(world);
}, 60_000);

afterAll(async () => {
  await world?.close();
});

interface Finding {
  readonly what: string;
  readonly request: string;
  readonly status: number;
  readonly body: string;
}

function check(res: WorldResponse): string | undefined {
  if (res.status >= 500 && !(res.status === 503 && Number(res.headers['retry-after']) > 0)) return `status ${res.status}`;
  if (res.status >= 400) {
    if (res.text.includes(world.dataDir) || res.text.includes(world.dataDir.slice(1))) return 'error body names the data directory';
    if (/\.rs:\d+/.test(res.text)) return 'error body names a source location';
    const body = res.json();
    if (!Number.isInteger(body.code)) return 'error body without an integer code';
  }
  return undefined;
}

describe('schema-valid requests over all 54 operations', () => {
  it(`${COUNT} seeded requests (seed ${SEED}): no 5xx but 503 with Retry-After, no storage path in an error body`, async () => {
    const gen = new RequestGenerator(SEED);
    expect(gen.operations).toHaveLength(54);
    const findings: Finding[] = [];
    const statuses = new Map<number, number>();
    const seenOps = new Set<string>();
    const perOp: Record<string, Record<number, number>> = {};
    // Every operation at least once, then random ones.
    const queue = [...gen.operations.map((op) => gen.forOperation(op)), ...Array.from({ length: Math.max(0, COUNT - 54) }, () => gen.next())];
    for (let i = 0; i < queue.length; i += CONCURRENCY) {
      if (i % 200 === 0) await restoreScratch(world);
      await Promise.all(
        queue.slice(i, i + CONCURRENCY).map(async (req) => {
          const res = await world.call(req.method, req.rawPath, { query: req.query, body: req.body });
          seenOps.add(req.operationId);
          const counts = (perOp[req.operationId] ??= {});
          counts[res.status] = (counts[res.status] ?? 0) + 1;
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const what = check(res);
          if (what) {
            const shown = Buffer.isBuffer(req.body) ? `<${req.body.length} bytes>` : JSON.stringify(req.body)?.slice(0, 300);
            findings.push({ what, request: `${req.operationId} ${req.method} ${req.rawPath}?${req.query} ${shown}`, status: res.status, body: res.text.slice(0, 400) });
          }
        }),
      );
    }
    if (process.env.RASK_FUZZ_VERBOSE) console.log(JSON.stringify([...statuses].sort()), JSON.stringify(perOp));
    expect(seenOps.size).toBe(54);
    // The world answers successes too: the generator reaches past validation.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(COUNT / 20);
    const logOf = (f: Finding) => world.logs.find((l) => f.body.includes(String(l.fields.requestId)))?.fields.err;
    const shown = findings.slice(0, 8).map((f) => ({ ...f, log: String(logOf(f) ?? '').slice(0, 1500) }));
    expect(findings, JSON.stringify(shown, null, 1)).toEqual([]);
  });
});
