/**
 * Defect 1 of issue #8: a filter of ~700 chained `+` or `OR` terms (a few KB) overflowed
 * LanceDB's native stack and ended the server with SIGSEGV. Every door that hands SQL text to
 * LanceDB must refuse such text with 400 / code 13 naming the limit, and the server must still
 * be up afterwards. The server runs in a child process so that a crash fails this test instead
 * of killing the test runner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_LIMITS } from '../../lib/data/sql-bounds.js';
import { ipcRows } from '../data/fixtures.js';
import { TableApi } from '../support/data-http.js';
import type { RawResponse, TestServer } from '../support/server.js';
import { type ChildServer, startChildServer } from './child-server.js';

/** Bombs that crashed LanceDB 0.31.0 in a child process (measured: crashes from ~680 terms). */
const BOMBS: Record<string, string> = {
  plus: `id${' + 1'.repeat(1000)} > 0`,
  or: Array.from({ length: 1000 }, (_, i) => `id = ${i}`).join(' OR '),
  concat: `text${" || 'x'".repeat(1000)} = 'a'`,
};
const PLUS_EXPR = `id${' + 1'.repeat(1000)}`;

let server: ChildServer;
let t: TableApi;

beforeAll(async () => {
  server = await startChildServer();
  const res = await server.request('POST', '/v1/namespace/bombs/create', '{}');
  expect(res.status, res.text).toBe(200);
  t = new TableApi(server as unknown as TestServer, ['bombs', 't']);
  const created = await t.arrow('create', ipcRows(20));
  expect(created.status, created.text).toBe(200);
  // A vector index: with one, a search allocates per k (the k = 2^31 case below).
  const index = await t.post('create_index', { column: 'vec', index_type: 'IVF_FLAT', name: 'vec_idx', num_partitions: 2 });
  expect(index.status, index.text).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

function expectLimitRefusal(res: RawResponse, field: string): void {
  expect({ status: res.status, body: res.text }).toMatchObject({ status: 400 });
  const body = res.json();
  expect(body.code).toBe(13);
  // The message names the field and the limits, so a client knows what to change.
  expect(body.error).toContain(field);
  expect(body.error).toContain(`${SQL_LIMITS.maxOperators} operators`);
}

async function expectAlive(): Promise<void> {
  expect(await server.alive(), `server died: ${server.stderr().slice(-2000)}`).toBe(true);
}

describe('SQL expression bombs answer 400 / 13 on every door and the server survives', () => {
  for (const [kind, bomb] of Object.entries(BOMBS)) {
    it(`QueryTable filter (${kind})`, async () => {
      expectLimitRefusal(await t.post('query', { k: 10, filter: bomb }), 'filter');
      await expectAlive();
    });
  }

  it('CountTableRows predicate (POST body and GET query)', async () => {
    expectLimitRefusal(await t.post('count_rows', { predicate: BOMBS.or }), 'predicate');
    expectLimitRefusal(await t.get('count_rows', `predicate=${encodeURIComponent(BOMBS.plus)}`), 'predicate');
    await expectAlive();
  });

  it('DeleteFromTable predicate', async () => {
    expectLimitRefusal(await t.post('delete', { predicate: BOMBS.plus }), 'predicate');
    await expectAlive();
    expect(await t.count()).toBe(20);
  });

  it('UpdateTable expressions and predicate', async () => {
    expectLimitRefusal(await t.post('update', { updates: [['id', PLUS_EXPR]] }), 'updates[0][1]');
    expectLimitRefusal(await t.post('update', { updates: [['id', 'id']], predicate: BOMBS.or }), 'predicate');
    await expectAlive();
  });

  it('MergeInsertIntoTable conditions', async () => {
    // Compact (no spaces): the conditions travel in the query string, which Node caps at 16 KB of headers.
    const compact = `id${'+1'.repeat(1000)}>0`;
    const q = (k: string) => `on=id&when_matched_update_all=true&${k}=${encodeURIComponent(compact)}`;
    expectLimitRefusal(await t.arrow('merge_insert', ipcRows(2), q('when_matched_update_all_filt')), 'when_matched_update_all_filt');
    expectLimitRefusal(
      await t.arrow('merge_insert', ipcRows(2), q('when_not_matched_by_source_delete_filt')),
      'when_not_matched_by_source_delete_filt',
    );
    await expectAlive();
  });

  it('AlterTableAddColumns expression and computed', async () => {
    expectLimitRefusal(await t.post('add_columns', { new_columns: [{ name: 'c', expression: PLUS_EXPR }] }), 'new_columns[0].expression');
    expectLimitRefusal(await t.post('add_columns', { new_columns: [{ name: 'c', computed: PLUS_EXPR }] }), 'new_columns[0].computed');
    await expectAlive();
  });

  it('AlterTableBackfillColumns where', async () => {
    const added = await t.post('add_columns', { new_columns: [{ name: 'doubled', computed: 'id * 2' }] });
    expect(added.status, added.text).toBe(200);
    expectLimitRefusal(await t.post('backfill_column', { column: 'doubled', where: BOMBS.plus }), 'where');
    await expectAlive();
  });

  it('Explain / Analyze plan filters and column aliases', async () => {
    expectLimitRefusal(await t.post('explain_plan', { query: { k: 10, filter: BOMBS.or } }), 'filter');
    expectLimitRefusal(await t.post('analyze_plan', { k: 10, filter: BOMBS.or }), 'filter');
    expectLimitRefusal(await t.post('query', { k: 10, columns: { column_aliases: { x: PLUS_EXPR } } }), 'columns.column_aliases.x');
    await expectAlive();
  });

  it('a vector search with k = 2^31 (which aborted the process out of memory) answers and the server survives', async () => {
    const vector = Array.from({ length: 8 }, (_, i) => i / 10);
    for (const body of [{ k: 2 ** 31, vector }, { k: 2 ** 31 - 2, vector: { multi_vector: [vector, vector] } }, { k: 5, offset: 2 ** 31 - 1, vector }]) {
      const res = await t.post('query', body);
      expect(res.status, res.text).toBe(200);
    }
    expect(await t.post('analyze_plan', { k: 2 ** 31, vector }).then((r) => r.status)).toBe(200);
    await expectAlive();
  });

  it('depth and length are bounded too, and ordinary filters still run', async () => {
    const deep = `${'('.repeat(SQL_LIMITS.maxDepth + 1)}id > 0${')'.repeat(SQL_LIMITS.maxDepth + 1)}`;
    const deepRes = await t.post('query', { k: 10, filter: deep });
    expect(deepRes.status).toBe(400);
    expect(deepRes.json().error).toContain(`nesting depth ${SQL_LIMITS.maxDepth}`);
    const long = `text = '${'x'.repeat(SQL_LIMITS.maxLength)}'`;
    const longRes = await t.post('count_rows', { predicate: long });
    expect(longRes.status).toBe(400);
    expect(longRes.json().error).toContain(`${SQL_LIMITS.maxLength} characters`);
    // Under the limits: 100 OR terms, and operators inside string literals do not count.
    const fine = Array.from({ length: 100 }, (_, i) => `id = ${i}`).join(' OR ');
    expect(await t.count(`predicate=${encodeURIComponent(fine)}`)).toBe(20);
    // Exactly at the operator limit, in the shape that crashed: LanceDB evaluates it.
    const atLimit = `id${' + 1'.repeat(SQL_LIMITS.maxOperators - 1)} > 0`;
    expect(await t.count(`predicate=${encodeURIComponent(atLimit)}`)).toBe(20);
    const literal = `text <> '${'-+*/'.repeat(200)}'`;
    expect(await t.count(`predicate=${encodeURIComponent(literal)}`)).toBe(20);
    await expectAlive();
  });
});
