// @covers CreateNamespace, CreateTable, RenameTable, DescribeTable, CountTableRows
/**
 * `rask registry export` / `import` (issue #30, item 2): a catalog made with the official client
 * on a local data directory is exported, imported into an S3 registry (the S3 fake, intercepting
 * the client the CLI constructs), exported from there and imported into a fresh local data
 * directory. The records of every export are byte-identical (key and bytes), and every table
 * reads back through the official client from the last directory, with its rows. The table
 * data is not in an export: the warehouse directory is copied as an operator would.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../functions/cli.js';
import { startLocalServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';
import { createS3Fake } from '../support/s3-fake.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const config = (dataDir: string) => loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dataDir, RASK_HOST: '127.0.0.1', RASK_LOG_LEVEL: 'warn' });
const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));

/** Runs the CLI in-process with RASK_DATA_DIR set; answers its exit code and what it printed. */
async function cli(dataDir: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const saved = { ...process.env };
  process.env.RASK_DATA_DIR = dataDir;
  process.env.RASK_LOG_LEVEL = 'error';
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const error = vi.spyOn(console, 'error').mockImplementation(() => {});
  try {
    const code = await main(args);
    return { code, out: log.mock.calls.map((c) => String(c[0])).join('\n'), err: error.mock.calls.map((c) => String(c[0])).join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    process.env = saved;
  }
}

/** The record lines of an export (header and trailer name the source and instant, which differ). */
const recordLines = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n').slice(1, -1);

describe('registry export → import: local → S3 → local', () => {
  it('round trip is byte-identical for records and every table stays readable through the official client', { timeout: 120_000 }, async () => {
    const fake = createS3Fake({ target: S3Client });
    const work = await mkdtemp(path.join(tmpdir(), 'rask-export-'));
    dirs.push(work);
    const a = path.join(work, 'a');
    const b = path.join(work, 'b');
    const server = await startLocalServer(config(a));
    const expected = new Map<string, number>();
    try {
      const db = await lancedb.connectNamespace('rest', { uri: server.url });
      await db.createNamespace(['shop']);
      await db.createNamespace(['shop', 'eu']);
      await db.createTable('orders', rows(0, 5), ['shop']);
      await db.createTable('returns', rows(100, 3), ['shop', 'eu']);
      await (await db.openTable('orders', ['shop'])).add(rows(5, 2));
      const renamed = await fetch(`${server.url}/v1/table/shop%24eu%24returns/rename?delimiter=%24`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ new_table_name: 'refunds', new_namespace_id: ['shop'] }),
      });
      expect(renamed.status, await renamed.text()).toBe(200);
      expected.set('shop.orders', 7);
      expected.set('shop.refunds', 3);
    } finally {
      await server.close();
    }

    const first = path.join(work, 'first.ndjson');
    const second = path.join(work, 'second.ndjson');
    const third = path.join(work, 'third.ndjson');
    const s3 = ['--registry-bucket', 'backup', '--registry-prefix', 'registry/'];
    expect((await cli(a, ['registry', 'export', first, '--all', '--json'])).code).toBe(0);
    const imported = await cli(a, ['registry', 'import', first, ...s3, '--json']);
    expect(imported.code, imported.err + imported.out).toBe(0);
    expect(JSON.parse(imported.out).imported.keys).toBe((await recordLines(first)).length);
    expect((await cli(a, ['registry', 'export', second, '--all', ...s3, '--json'])).code).toBe(0);
    // An import into a registry that holds anything is refused, and writes nothing.
    const before = fake.bucketContents('backup');
    const refused = await cli(a, ['registry', 'import', first, ...s3, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out).error).toMatch(/not empty/);
    expect(fake.bucketContents('backup')).toEqual(before);

    // The data moves as files; the registry through the export.
    await cp(path.join(a, 'warehouses'), path.join(b, 'warehouses'), { recursive: true });
    const into = await cli(b, ['registry', 'import', second, '--json']);
    expect(into.code, into.err + into.out).toBe(0);
    expect((await cli(b, ['registry', 'export', third, '--all', '--json'])).code).toBe(0);

    const lines = await recordLines(first);
    expect(lines.length).toBeGreaterThan(8);
    expect(await recordLines(second)).toEqual(lines);
    expect(await recordLines(third)).toEqual(lines);
    // And the S3 bucket holds exactly those bytes under those keys.
    const inBucket = [...fake.bucketContents('backup')].map(([k, v]) => JSON.stringify({ k: k.slice('registry/'.length), b: v.toString('utf8') }));
    expect(inBucket.sort()).toEqual([...lines].sort());

    const served = await startLocalServer(config(b));
    try {
      const db = await lancedb.connectNamespace('rest', { uri: served.url });
      for (const [id, n] of expected) {
        const parts = id.split('.');
        const table = await db.openTable(parts.at(-1)!, parts.slice(0, -1));
        expect(await table.countRows(), id).toBe(n);
      }
      expect((await db.tableNames(['shop'])).sort()).toEqual(['orders', 'refunds']);
    } finally {
      await served.close();
    }
    fake.mock.restore();
  });
});
