/**
 * The data function as Lambda runs it (functions/api-data.ts: its handler, its configuration
 * from the environment, API Gateway proxy events) over S3 on the loopback AWS fake, with a small
 * cache budget configured: many tables, many versions each, and the process's one LanceDB session
 * stays within the budget throughout — read through the session's own size accounting
 * (lib/adapters/lance/session.ts), so the check is deterministic, not an RSS reading (issue #36).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiEvent } from '../deploy/api-events.js';
import { ipcRows } from '../data/fixtures.js';
import { lambdaContext } from '../support/lambda-context.js';
import { startAwsHttpFake, type AwsHttpFake } from '../support/aws-http-fake.js';

const MIB = 1024 * 1024;
const INDEX_MB = 2;
const METADATA_MB = 1;

let fake: AwsHttpFake;
const written: string[] = [];
let invoke: (event: unknown) => Promise<{ statusCode: number; body: string; isBase64Encoded?: boolean }>;
let cacheUse: (options?: { fresh?: boolean }) => { bytes: number; budgetBytes: number; indexBudgetBytes: number; metadataBudgetBytes: number } | undefined;

beforeAll(async () => {
  fake = await startAwsHttpFake();
  const key = fake.principal('rask-data');
  // What Lambda and the stack give the data function (test/deploy/lambda-sandbox.ts sets the same).
  Object.assign(process.env, {
    RASK_REGISTRY_BUCKET: 'registry-bucket',
    RASK_WAREHOUSE_BUCKET: 'warehouse-bucket',
    RASK_LOG_LEVEL: 'warn',
    RASK_LANCE_INDEX_CACHE_MB: String(INDEX_MB),
    RASK_LANCE_METADATA_CACHE_MB: String(METADATA_MB),
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048',
    AWS_LAMBDA_FUNCTION_NAME: 'rask-data',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: key.accessKeyId,
    AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    AWS_ENDPOINT_URL: fake.endpoint,
    AWS_ENDPOINT: fake.endpoint,
    AWS_ALLOW_HTTP: 'true',
    AWS_VIRTUAL_HOSTED_STYLE_REQUEST: 'false',
  });
  // The function's EMF lines go to stdout: kept for the metrics test, not printed.
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const { handler } = await import('../../functions/api-data.js');
  invoke = (event) => handler(event as never, lambdaContext()) as never;
  ({ lanceCacheUse: cacheUse } = await import('../../lib/adapters/lance/session.js'));
});
afterAll(async () => {
  vi.restoreAllMocks();
  await fake?.close();
});

const table = (name: string) => `/v1/table/soak%24${name}`;
async function ok(event: unknown): Promise<void> {
  const res = await invoke(event);
  expect(res.statusCode, res.body).toBe(200);
}

describe('the data function under many tables and versions', () => {
  it('keeps the LanceDB caches within the configured budget', async () => {
    await ok(apiEvent('POST', '/v1/namespace/soak/create', { json: { id: ['soak'] } }));
    const budget = (INDEX_MB + METADATA_MB) * MIB;
    let peak = 0;
    let versions = 0;
    for (let t = 0; t < 12; t++) {
      const name = `t${t}`;
      await ok(apiEvent('POST', `${table(name)}/create`, { binary: ipcRows(20) }));
      for (let v = 0; v < 6; v++) {
        await ok(apiEvent('POST', `${table(name)}/insert`, { binary: ipcRows(5, 100 + v * 5) }));
        await ok(
          apiEvent('POST', `${table(name)}/merge_insert`, {
            binary: ipcRows(3, 100 + v * 5),
            query: { on: 'id', when_matched_update_all: 'true', when_not_matched_insert_all: 'true' },
          }),
        );
        await ok(apiEvent('POST', `${table(name)}/count_rows`, { json: { id: ['soak', name] } }));
        versions += 2;
        const use = cacheUse({ fresh: true })!;
        expect(use.budgetBytes).toBe(budget);
        peak = Math.max(peak, use.bytes);
        expect(use.bytes, `after ${versions} versions`).toBeLessThanOrEqual(budget * 1.1);
      }
      await ok(apiEvent('POST', `${table(name)}/query`, { json: { id: ['soak', name], k: 5, vector: { single_vector: Array(8).fill(0.5) } } }));
    }
    // The workload filled the metadata budget several times over (~23 KB a version): the bound
    // above is eviction at work, not a workload too small to reach it.
    expect(peak).toBeGreaterThan((METADATA_MB * MIB) / 2);
    // LanceDB worked on S3 (the fake), not on a local path.
    expect(fake.calls.some((c) => c.action === 's3:PutObject' && c.resource.includes('warehouse-bucket'))).toBe(true);
    expect(cacheUse()).toMatchObject({ indexBudgetBytes: INDEX_MB * MIB, metadataBudgetBytes: METADATA_MB * MIB });
  });

  it('reports the cache use and the RSS as metrics after each request (docs/operations.md, "Memory")', async () => {
    const from = written.length;
    await ok(apiEvent('POST', `${table('t0')}/count_rows`, { json: { id: ['soak', 't0'] } }));
    const blob = written
      .slice(from)
      .flatMap((w) => w.split('\n'))
      .filter((l) => l.startsWith('{') && l.includes('CloudWatchMetrics'))
      .map((l) => JSON.parse(l) as Record<string, number>)
      .find((l) => 'LanceCacheBytes' in l);
    expect(blob).toBeDefined();
    expect(blob!.LanceCacheBudgetBytes).toBe((INDEX_MB + METADATA_MB) * MIB);
    expect(blob!.LanceCacheBytes).toBeGreaterThan(0);
    expect(blob!.LanceCacheBytes).toBeLessThanOrEqual(blob!.LanceCacheBudgetBytes * 1.1);
    expect(blob!.MemoryRss).toBeGreaterThan(blob!.LanceCacheBytes);
  });
});
