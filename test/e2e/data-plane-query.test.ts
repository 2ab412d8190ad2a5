// @covers QueryTable, CountTableRows, ExplainTableQueryPlan, AnalyzeTableQueryPlan, GetTableStats
/**
 * Reads over raw HTTP: QueryTable answers Arrow IPC *file* bytes, explain/analyze a JSON string,
 * GetTableStats a JSON object. Results above the response limit are refused, never cut.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode, ipcRows, plain, vectorOf } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
let t: TableApi;

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'q');
  t = new TableApi(s, ['q', 'fruit']);
  expectOk(await t.arrow('create', ipcRows(40)));
  expectOk(await t.post('create_scalar_index', { column: 'text', index_type: 'FTS' }));
  // Version 3: 10 more rows, so version 1 (40 rows) is an older snapshot.
  expectOk(await t.arrow('insert', ipcRows(10, 100)));
});
afterAll(() => s?.stop());

async function query(body: Record<string, unknown>) {
  const res = await t.post('query', body);
  expect(res.status, res.text).toBe(200);
  return { res, rows: plain(decode(res.bytes)), table: decode(res.bytes) };
}

describe('QueryTable', () => {
  it('answers an Arrow IPC file (ARROW1 magic) with its content-type; vector search ranks the nearest first', async () => {
    const { res, rows } = await query({ k: 3, vector: { single_vector: vectorOf(7) } });
    expect(res.headers.get('content-type')).toBe('application/vnd.apache.arrow.file');
    expect(res.bytes.subarray(0, 6).toString('latin1')).toBe('ARROW1');
    expect(rows).toHaveLength(3);
    expect(rows[0].id).toBe(7);
    expect(rows[0]._distance).toBeCloseTo(0, 5);
  });

  it('k, offset, filter, prefilter and columns', async () => {
    const base = { vector: { single_vector: vectorOf(7) }, columns: { column_names: ['id'] } };
    const top = (await query({ ...base, k: 4 })).rows.map((r) => r.id);
    const paged = (await query({ ...base, k: 2, offset: 2 })).rows.map((r) => r.id);
    expect(paged).toEqual(top.slice(2, 4));
    const filtered = await query({ ...base, k: 5, filter: 'id >= 100' });
    expect(filtered.rows.every((r) => Number(r.id) >= 100)).toBe(true);
    expect(filtered.rows).toHaveLength(5);
    expect(filtered.table.schema.fields.map((f) => f.name)).toEqual(['id', '_distance']);
    // Post-filtering the 3 nearest (ids near 7) keeps none of ids ≥ 100.
    expect((await query({ ...base, k: 3, filter: 'id >= 100', prefilter: false })).rows.length).toBeLessThan(3);
  });

  it('a plain scan needs no vector: a filter alone, column aliases, with_row_id', async () => {
    const { rows, table } = await query({ k: 100, filter: 'id < 3', columns: { column_aliases: { ident: 'id', words: 'text' } }, with_row_id: true });
    expect(rows.map((r) => r.ident).sort()).toEqual([0, 1, 2]);
    expect(table.schema.fields.map((f) => f.name)).toEqual(['ident', 'words', '_rowid']);
  });

  it('distance type, bounds, bypass_vector_index, fast_search, nprobes, refine_factor and ef are accepted', async () => {
    const { rows } = await query({
      k: 50,
      vector: { single_vector: vectorOf(7) },
      vector_column: 'vec',
      distance_type: 'cosine',
      lower_bound: 0,
      upper_bound: 0.05,
      bypass_vector_index: true,
      fast_search: false,
      nprobes: 4,
      refine_factor: 2,
      ef: 16,
    });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => Number(r._distance) <= 0.05)).toBe(true);
    expect(rows.map((r) => r.id)).toContain(7);
  });

  it('several query vectors answer per-vector results tagged with query_index', async () => {
    const { rows } = await query({ k: 1, vector: { multi_vector: [vectorOf(1), vectorOf(2)] } });
    expect(rows.map((r) => [r.query_index, r.id]).sort()).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it('full-text: a string query, a structured boolean query, and hybrid with a vector', async () => {
    const str = await query({ k: 100, full_text_query: { string_query: { query: 'cherry', columns: ['text'] } } });
    expect(str.rows.length).toBe(10);
    expect(str.rows.every((r) => String(r.text).startsWith('cherry'))).toBe(true);

    const structured = await query({
      k: 100,
      full_text_query: {
        structured_query: {
          query: { boolean: { must: [{ match: { terms: 'fruit', column: 'text' } }], must_not: [{ match: { terms: 'apple', column: 'text' } }] } },
        },
      },
    });
    expect(structured.rows.length).toBe(40);
    expect(structured.rows.some((r) => String(r.text).startsWith('apple'))).toBe(false);

    const hybrid = await query({ k: 5, vector: { single_vector: vectorOf(2) }, full_text_query: { string_query: { query: 'cherry' } } });
    expect(hybrid.rows.length).toBeGreaterThan(0);
    expect(hybrid.table.schema.fields.map((f) => f.name)).toContain('_relevance_score');
  });

  it('reads an older version', async () => {
    expect((await query({ k: 1000, version: 1, columns: { column_names: ['id'] } })).rows).toHaveLength(40);
    expect((await query({ k: 1000, columns: { column_names: ['id'] } })).rows).toHaveLength(50);
  });

  it('refusals: missing table (4), missing version (11), unknown column (12), bad request (13)', async () => {
    expectError(await new TableApi(s, ['q', 'nope']).post('query', { k: 1 }), 404, 4);
    expectError(await t.post('query', { k: 1, version: 99 }), 404, 11);
    expectError(await t.post('query', { k: 1, filter: 'nope = 1' }), 404, 12);
    expectError(await t.post('query', { k: 1, columns: { column_names: ['nope'] } }), 404, 12);
    expectError(await t.post('query', { k: -1 }), 400, 13);
    expectError(await t.post('query', { k: 1, vector: { single_vector: ['x'] } }), 400, 13);
    expectError(await t.post('query', { k: 1, distance_type: 'manhattan', vector: { single_vector: vectorOf(1) } }), 400, 13);
  });
});

describe('QueryTable order_by (spec main after 0.11.1)', () => {
  const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r.id));

  it('a scan sorts every matching row before offset and limit; later entries break ties', async () => {
    const all = (await query({ k: 1000, columns: { column_names: ['id', 'text'] } })).rows;
    const desc = ids(all).sort((a, b) => b - a);
    const { rows } = await query({ k: 5, offset: 3, order_by: [{ column_name: 'id', ascending: false }] });
    expect(ids(rows)).toEqual(desc.slice(3, 8));
    // text first (ascending, the default), id descending among equal texts.
    const byText = (await query({ k: 1000, order_by: [{ column_name: 'text' }, { column_name: 'id', ascending: false }] })).rows;
    const expected = [...all].sort((a, b) => (a.text === b.text ? Number(b.id) - Number(a.id) : String(a.text) < String(b.text) ? -1 : 1));
    expect(ids(byText)).toEqual(ids(expected));
  });

  it('the sort column need not be projected, and only the asked-for columns come back', async () => {
    const { rows, table } = await query({ k: 4, columns: { column_names: ['text'] }, order_by: [{ column_name: 'id', ascending: false }] });
    expect(table.schema.fields.map((f) => f.name)).toEqual(['text']);
    expect(rows.map((r) => r.text)).toEqual([109, 108, 107, 106].map((i) => expect.stringContaining(`number ${i}`)));
    const aliased = await query({ k: 2, columns: { column_aliases: { twice: 'id * 2' } }, order_by: [{ column_name: 'id' }] });
    expect(aliased.table.schema.fields.map((f) => f.name)).toEqual(['twice']);
    expect(aliased.rows.map((r) => Number(r.twice))).toEqual([0, 2]);
    const withRowId = await query({ k: 2, with_row_id: true, columns: { column_names: ['id'] }, order_by: [{ column_name: 'id' }] });
    expect(withRowId.table.schema.fields.map((f) => f.name)).toEqual(['id', '_rowid']);
  });

  it('a vector search orders its k nearest candidates', async () => {
    const nearest = ids((await query({ k: 4, vector: { single_vector: vectorOf(7) } })).rows);
    const { rows } = await query({ k: 4, vector: { single_vector: vectorOf(7) }, order_by: [{ column_name: 'id', ascending: false }] });
    expect(ids(rows)).toEqual([...nearest].sort((a, b) => b - a));
  });

  it('refusals: a missing column (12); null, bad entries, unsortable types and hybrid queries (13)', async () => {
    expectError(await t.post('query', { k: 1, order_by: [{ column_name: 'nope' }] }), 404, 12);
    expectError(await t.post('query', { k: 1, order_by: [{ column_name: 'text.inner' }] }), 404, 12);
    for (const order_by of [null, 'id', [{}], [{ column_name: '' }], [{ column_name: 'id', ascending: 'yes' }], [{ column_name: 'id', nulls_first: 1 }]]) {
      const err = expectError(await t.post('query', { k: 1, order_by }), 400, 13);
      expect(err.error).toMatch(/order_by/);
    }
    expect(expectError(await t.post('query', { k: 1, order_by: [{ column_name: 'vec' }] }), 400, 13).error).toMatch(/cannot be sorted/);
    const hybrid = {
      k: 3,
      vector: { single_vector: vectorOf(7) },
      full_text_query: { string_query: { query: 'apple' } },
      order_by: [{ column_name: 'id' }],
    };
    expect(expectError(await t.post('query', hybrid), 400, 13).error).toMatch(/hybrid/);
    // An empty list keeps the query's own order.
    expect((await query({ k: 3, order_by: [] })).rows).toHaveLength(3);
  });

  it('explain shows the sort', async () => {
    const res = await t.post('explain_plan', { query: { k: 3, order_by: [{ column_name: 'id', ascending: false }] } });
    expect(res.status, res.text).toBe(200);
    expect(String(res.json())).toMatch(/Sort/i);
  });

  it('analyze runs the sort; explain and analyze answer a missing column 12 and a bad entry 13, as the query does', async () => {
    const analyzed = await t.post('analyze_plan', { k: 3, order_by: [{ column_name: 'id', ascending: false }] });
    expect(analyzed.status, analyzed.text).toBe(200);
    expect(String(analyzed.json())).toMatch(/Sort/i);
    expectError(await t.post('explain_plan', { query: { k: 1, order_by: [{ column_name: 'nope' }] } }), 404, 12);
    expectError(await t.post('analyze_plan', { k: 1, order_by: [{ column_name: 'nope' }] }), 404, 12);
    for (const order_by of [null, [{ column_name: 'id', ascending: 'yes' }]]) {
      expect(expectError(await t.post('explain_plan', { query: { k: 1, order_by } }), 400, 13).error).toMatch(/order_by/);
      expect(expectError(await t.post('analyze_plan', { k: 1, order_by }), 400, 13).error).toMatch(/order_by/);
    }
  });
});

describe('explain and analyze', () => {
  it('answer the plan as a JSON string', async () => {
    const explain = await t.post('explain_plan', { query: { k: 3, filter: 'id > 3', vector: { single_vector: vectorOf(1) } }, verbose: true });
    expect(explain.status).toBe(200);
    expect(explain.headers.get('content-type')).toBe('application/json');
    expect(explain.text.startsWith('"')).toBe(true);
    expect(JSON.parse(explain.text)).toMatch(/KNN|Take|LanceRead|LanceScan/);

    const analyze = await t.post('analyze_plan', { k: 3, filter: 'id > 3' });
    expect(analyze.status).toBe(200);
    expect(JSON.parse(analyze.text)).toMatch(/metrics|elapsed|output_rows/i);
    expectError(await t.post('explain_plan', { query: { k: 1, filter: 'nope > 1' } }), 404, 12);
  });
});

describe('GetTableStats', () => {
  it('answers row count, sizes and fragment statistics, on POST and GET', async () => {
    const stats = expectOk(await t.post('stats'));
    expect(stats).toMatchObject({ num_rows: 50, num_indices: 1, fragment_stats: { num_fragments: 2 } });
    expect(stats.total_bytes).toBeGreaterThan(0);
    expect(Number.isInteger(stats.fragment_stats.lengths.mean)).toBe(true);
    expect(expectOk(await t.get('stats'))).toEqual(stats);
    expectError(await new TableApi(s, ['q', 'nope']).post('stats'), 404, 4);
  });
});

describe('result size limit', () => {
  it('a result above RASK_MAX_RESULT_BYTES is refused with 13 naming k and columns; a smaller one passes', async () => {
    const small = await startTestServer({ RASK_MAX_RESULT_BYTES: '4096' });
    try {
      await ensureNamespace(small, 'lim');
      const big = new TableApi(small, ['lim', 'rows']);
      expectOk(await big.arrow('create', ipcRows(300)));
      const body = expectError(await big.post('query', { k: 300 }), 400, 13);
      expect(body.error).toMatch(/4096-byte limit/);
      expect(body.error).toMatch(/"k"/);
      expect(body.error).toMatch(/"columns"/);
      // A client asking for "everything" (LanceDB sends k = isize::MAX) is refused too, not truncated.
      // biome-ignore lint/correctness/noPrecisionLoss: isize::MAX as LanceDB sends it; the JSON number it becomes is what counts.
      expectError(await big.post('query', { k: 9223372036854775807 }), 400, 13);
      const fits = await big.post('query', { k: 5, columns: { column_names: ['id'] } });
      expect(fits.status).toBe(200);
      expect(decode(fits.bytes).numRows).toBe(5);
      expect(await big.count()).toBe(300);
    } finally {
      await small.stop();
    }
  });
});
