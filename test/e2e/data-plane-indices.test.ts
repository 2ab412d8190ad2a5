// @covers CreateTableIndex, CreateTableScalarIndex, ListTableIndices, DescribeTableIndexStats, DropTableIndex
/**
 * Indices over raw HTTP, and the guard that keeps vector index builds on large tables off the
 * request path (docs/index-builds.md): such builds are queued as jobs (test/e2e/jobs-http.test.ts
 * follows them to the end). Refusals re-read the index list to prove nothing changed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Field, FixedSizeList, Float32, Table, vectorFromArray } from 'apache-arrow';
import { ipcOf, ipcRows, vectorOf } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
let t: TableApi;

const names = async (table: TableApi) =>
  (expectOk(await table.post('index/list')).indexes as { index_name: string }[]).map((i) => i.index_name).sort();

let seq = 0;

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'ix');
});
afterAll(() => s?.stop());

const vector = [
  { column: 'vec', index_type: 'IVF_FLAT', name: 'v_flat', num_partitions: 2, distance_type: 'l2' },
  { column: 'vec', index_type: 'IVF_PQ', name: 'v_pq', num_partitions: 2, num_sub_vectors: 2, num_bits: 8, max_iterations: 10 },
  { column: 'vec', index_type: 'IVF_HNSW_SQ', name: 'v_hsq', num_partitions: 1, m: 8, ef_construction: 50, distance_type: 'cosine' },
];
const scalar = [
  { column: 'id', index_type: 'BTREE', name: 'id_idx' },
  { column: 'text', index_type: 'BITMAP', name: 'text_bitmap' },
  { column: 'labels', index_type: 'LABEL_LIST', name: 'labels_idx' },
  { column: 'text', index_type: 'FTS', name: 'text_fts', with_position: true, base_tokenizer: 'simple', language: 'English', lower_case: true },
];

/** Builds the named indexes (all seven when none is named) on the test's table. */
async function build(...which: string[]) {
  const chosen = (list: typeof vector | typeof scalar) => list.filter((r) => which.length === 0 || which.includes(r.name));
  for (const r of chosen(vector)) expect(expectOk(await t.post('create_index', r))).toEqual({});
  for (const r of chosen(scalar)) expect(expectOk(await t.post('create_scalar_index', r))).toEqual({});
}

describe('index lifecycle', () => {
  // Each test gets its own 300-row table, so each runs alone and in any order.
  beforeEach(async () => {
    t = new TableApi(s, ['ix', `rows${++seq}`]);
    expectOk(await t.arrow('create', ipcRows(300)));
  });

  it('builds vector indices (IVF_FLAT, IVF_PQ, IVF_HNSW_SQ) and scalar ones (BTREE, BITMAP, LABEL_LIST, FTS)', async () => {
    await build();

    const listed = expectOk(await t.post('index/list')).indexes as Record<string, unknown>[];
    const byName = Object.fromEntries(listed.map((i) => [i.index_name, i]));
    expect(Object.keys(byName).sort()).toEqual(['id_idx', 'labels_idx', 'text_bitmap', 'text_fts', 'v_flat', 'v_hsq', 'v_pq']);
    expect(byName.v_pq).toMatchObject({ columns: ['vec'], index_type: 'IVF_PQ', status: 'done' });
    expect(byName.id_idx).toMatchObject({ columns: ['id'], index_type: 'BTREE', num_indexed_rows: 300 });
    // The ANN index is used by queries.
    const plan = JSON.parse((await t.post('explain_plan', { query: { k: 3, vector: { single_vector: vectorOf(3) }, vector_column: 'vec' } })).text);
    expect(plan).toMatch(/ANN/);
  });

  it('lists with paging', async () => {
    await build();
    const first = expectOk(await t.post('index/list', { limit: 3 }));
    expect(first.indexes.map((i: { index_name: string }) => i.index_name)).toEqual(['id_idx', 'labels_idx', 'text_bitmap']);
    expect(first.page_token).toBe('text_bitmap');
    const rest = expectOk(await t.post('index/list', { page_token: first.page_token }));
    expect(rest.indexes.map((i: { index_name: string }) => i.index_name)).toEqual(['text_fts', 'v_flat', 'v_hsq', 'v_pq']);
  });

  it('describes index stats on POST and GET; a missing index is 404 / 6', async () => {
    await build('v_pq');
    const stats = expectOk(await t.post('index/v_pq/stats'));
    expect(stats).toEqual({ index_type: 'IVF_PQ', distance_type: 'l2', num_indexed_rows: 300, num_unindexed_rows: 0, num_indices: 1 });
    expect(expectOk(await t.get('index/v_pq/stats'))).toEqual(stats);
    expectError(await t.post('index/nope/stats'), 404, 6);
    expectError(await t.post('index/v_pq/stats', { index_name: 'other' }), 400, 13);
  });

  it('refusals leave the index list unchanged: duplicate name (7), missing column (12), bad type (13)', async () => {
    await build('id_idx');
    const before = await names(t);
    expectError(await t.post('create_scalar_index', { column: 'id', index_type: 'BTREE', name: 'id_idx' }), 409, 7);
    expectError(await t.post('create_scalar_index', { column: 'zzz', index_type: 'BTREE', name: 'z' }), 404, 12);
    expectError(await t.post('create_index', { column: 'vec', index_type: 'RTREE' }), 400, 13);
    expectError(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', num_partitions: -1 }), 400, 13);
    // PQ trains 256 centroids per sub-vector: too few rows is the caller's input, not a server fault.
    const few = new TableApi(s, ['ix', `few${++seq}`]);
    expectOk(await few.arrow('create', ipcRows(100)));
    const tooFew = expectError(await few.post('create_index', { column: 'vec', index_type: 'IVF_PQ', num_partitions: 1 }), 400, 13);
    expect(tooFew.error).toMatch(/^Not enough rows to train PQ/);
    expect(await names(few)).toEqual([]);
    expect(await names(t)).toEqual(before);
  });

  it('drops an index; dropping a missing one is 404 / 6 and drops nothing', async () => {
    await build('text_bitmap', 'id_idx');
    expect(expectOk(await t.post('index/text_bitmap/drop'))).toEqual({});
    expect(await names(t)).not.toContain('text_bitmap');
    const before = await names(t);
    expectError(await t.post('index/text_bitmap/drop'), 404, 6);
    expect(await names(t)).toEqual(before);
    expectError(await new TableApi(s, ['ix', 'nope']).post('index/list'), 404, 4);
  });
});

describe('synchronous vector index builds are bounded', () => {
  let guarded: TestServer;
  beforeAll(async () => {
    // The worker is off: what is queued stays queued, so "nothing was built in the request" is observable.
    guarded = await startTestServer({ RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '100', RASK_JOBS_INTERVAL_MS: '0' });
    await ensureNamespace(guarded, 'g');
  });
  afterAll(() => guarded?.stop());

  const costOf = async (transactionId: string) => {
    const res = await guarded.request('POST', `/v1/transaction/${transactionId}/describe`, '{}');
    const view = expectOk(res);
    expect(view.status).toBe('Queued');
    return view.properties as Record<string, string>;
  };

  it('above RASK_MAX_SYNC_VECTOR_INDEX_ROWS a vector build is queued (a transaction id, nothing built in the request)', async () => {
    const big = new TableApi(guarded, ['g', 'big']);
    expectOk(await big.arrow('create', ipcRows(300)));
    for (const [index_type, weight, extra] of [['IVF_PQ', 300, {}], ['IVF_HNSW_SQ', 300, {}], ['ivf-hnsw-pq', 900, { num_sub_vectors: 2 }]] as const) {
      const res = expectOk(await big.post('create_index', { column: 'vec', index_type, name: `v${weight}${index_type.length}`, num_partitions: 2, ...extra }));
      expect(res.transaction_id).toMatch(/^[0-9a-f]{32}$/);
      expect(await costOf(res.transaction_id)).toMatchObject({ 'rask.rows': '300', 'rask.dimension': '8', 'rask.cost_rows': String(weight), 'rask.max_sync_rows': '100' });
    }
    expect(await names(big)).toEqual([]);
    // Scalar builds are one pass and are not limited; IVF_FLAT and IVF_RQ weigh 1/16 of IVF_PQ (300 → 19).
    expect(expectOk(await big.post('create_scalar_index', { column: 'id', index_type: 'BTREE', name: 'id_idx' }))).toEqual({});
    expect(expectOk(await big.post('create_index', { column: 'vec', index_type: 'IVF_FLAT', name: 'flat', num_partitions: 2 }))).toEqual({});
    expect(expectOk(await big.post('create_index', { column: 'vec', index_type: 'IVF_RQ', name: 'rq', num_partitions: 2 }))).toEqual({});
    expect(await names(big)).toEqual(['flat', 'id_idx', 'rq']);
  });

  it('weighs wider vectors by their dimension (rows × dim / 128)', async () => {
    const within = new TableApi(guarded, ['g', 'narrow']);
    expectOk(await within.arrow('create', ipcRows(100)));
    expect(expectOk(await within.post('create_index', { column: 'vec', index_type: 'IVF_HNSW_SQ', name: 'v', num_partitions: 1 }))).toEqual({});

    const wide = new TableApi(guarded, ['g', 'wide']);
    expectOk(await wide.arrow('create', ipcOf(wideVectors(60, 256))));
    const res = expectOk(await wide.post('create_index', { column: 'emb', index_type: 'IVF_PQ', num_partitions: 2 }));
    expect(await costOf(res.transaction_id)).toMatchObject({ 'rask.rows': '60', 'rask.dimension': '256', 'rask.cost_rows': '120' });
    expect(await names(wide)).toEqual([]);
  });
});

/** `rows` random `dim`-d float32 vectors in a column `emb`. */
function wideVectors(rows: number, dim: number): Table {
  const type = new FixedSizeList(dim, new Field('item', new Float32(), true));
  const values = Array.from({ length: rows }, () => Array.from({ length: dim }, () => Math.random()));
  return new Table({ emb: vectorFromArray(values, type) });
}
