/**
 * The query result bound (RASK_MAX_RESULT_BYTES) has two checks, and each has its own job:
 * - while streaming: stop reading batches as soon as the buffered bytes cross the limit, so a
 *   huge result never sits in memory (checked here by counting the batches pulled);
 * - after encoding: the IPC file adds framing (schema, footer, padding) on top of the buffers,
 *   so a result whose buffers fit can still be too large to send.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadArrow } from '../../lib/data/arrow.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import { type BuiltQuery, runQuery } from '../../lib/adapters/lance/query.js';
import { ErrorCode } from '../../lib/errors.js';
import { decode, expectCode, ipcRows, tempRoot } from './fixtures.js';

describe('the streaming check', () => {
  /** A query yielding `total` copies of one batch, counting how many the reader pulled. */
  function countingQuery(total: number) {
    // Built with the engine's own (CJS) Arrow, as LanceDB's batches are.
    const arrow = loadArrow();
    const batch = arrow.tableFromIPC(ipcRows(64)).batches[0];
    const pulled = { count: 0 };
    const query = {
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < total; i++) {
          pulled.count++;
          yield batch;
        }
      },
      outputSchema: async () => batch.schema,
    };
    return { built: { query, zeroRows: false } as unknown as BuiltQuery, pulled, batchBytes: batch.data.byteLength };
  }

  it('stops reading a huge result at the first batch over the limit', async () => {
    const { built, pulled, batchBytes } = countingQuery(100_000);
    const limit = Math.floor(3.5 * batchBytes);
    await expectCode(runQuery(built, limit), ErrorCode.InvalidInput);
    // Three batches fit, the fourth crosses the limit: nothing after it is read.
    expect(pulled.count).toBe(4);
  });

  it('reads a result that fits to the end', async () => {
    const { built, pulled, batchBytes } = countingQuery(3);
    const table = await runQuery(built, 3 * batchBytes);
    expect(pulled.count).toBe(3);
    expect(table.numRows).toBe(3 * 64);
  });
});

describe('the check after encoding (real LanceDB)', () => {
  const { root, cleanup } = tempRoot('rask-bound-');
  afterAll(cleanup);
  const engine = wireEngine(new LanceDataEngine());

  it('refuses a result whose buffers fit but whose encoded file does not', async () => {
    const location = path.join(root, 'bound.lance');
    await engine.createTable(location, ipcRows(50), 'create');
    const request = { k: 50, columns: ['id', 'vec'] };
    const encoded = (await engine.query(location, request)).length;
    const buffers = decode(await engine.query(location, request)).batches.reduce((n, b) => n + b.data.byteLength, 0);
    // The framing is what the second check is for: the file is well over its buffers.
    expect(encoded).toBeGreaterThan(buffers + 100);
    expect(decode(await engine.query(location, request, { maxBytes: encoded })).numRows).toBe(50);
    await expectCode(engine.query(location, request, { maxBytes: encoded - 1 }), ErrorCode.InvalidInput);
  });
});
