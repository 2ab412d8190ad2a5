/**
 * LanceDataEngine against real LanceDB 0.31.0 on temporary directories. Every test that writes
 * gets a fresh table (beforeEach), so each runs alone and in any order; the query tests only
 * read and share one. Tables are small
 * (≤ 320 rows of 8-d vectors) so the whole file runs in seconds.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Table, Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import { connectCached } from '../../lib/adapters/lance/connections.js';
import { parseLocation } from '../../lib/data/location.js';
import { CLAMP_SEARCHES_ABOVE, DEFAULT_QUERY_LIMIT } from '../../lib/adapters/lance/query.js';
import { latestHandle } from '../../lib/adapters/lance/table-handles.js';
import { ErrorCode } from '../../lib/errors.js';
import {
  decode,
  expectCode,
  ipcOf,
  ipcRows,
  ipcWrongSchema,
  plain,
  rowsTable,
  tempRoot,
  vectorOf,
} from './fixtures.js';

const { root, cleanup } = tempRoot('rask-engine-');
const engine = wireEngine(new LanceDataEngine());
let seq = 0;

/** A fresh table of `rows` rows at a new location. */
async function freshTable(rows = 300): Promise<string> {
  const location = path.join(root, `t${++seq}.lance`);
  await engine.createTable(location, ipcRows(rows), 'create');
  return location;
}

async function query(location: string, request: Record<string, unknown>) {
  const bytes = await engine.query(location, request);
  return { bytes, table: decode(bytes) };
}

afterAll(cleanup);

describe('storage layout', () => {
  it('writes nothing beside the table directory (no LanceDB __manifest in the parent)', async () => {
    const parent = path.join(root, 'layout');
    await engine.createTable(path.join(parent, 'only.lance'), ipcRows(2));
    await engine.countRows(path.join(parent, 'only.lance'));
    expect(readdirSync(parent)).toEqual(['only.lance']);
  });
});

describe('createTable', () => {
  it('creates from an IPC stream, refuses a second create, honours exist_ok and overwrite', async () => {
    const location = path.join(root, 'create.lance');
    expect(await engine.createTable(location, ipcRows(300), 'create')).toEqual({ version: 1 });
    expect(await engine.countRows(location)).toBe(300);

    await expectCode(engine.createTable(location, ipcRows(5), 'create'), ErrorCode.TableAlreadyExists);
    expect(await engine.createTable(location, ipcRows(5), 'exist_ok')).toEqual({ version: 1 });
    expect(await engine.countRows(location)).toBe(300);

    const { version } = await engine.createTable(location, ipcRows(7), 'Overwrite');
    expect(version).toBe(2);
    expect(await engine.countRows(location)).toBe(7);
  });

  it('accepts the IPC file format and a schema-only stream', async () => {
    const fromFile = path.join(root, 'from-file.lance');
    await engine.createTable(fromFile, ipcRows(3, 0, 'file'));
    expect(await engine.countRows(fromFile)).toBe(3);

    const empty = path.join(root, 'empty.lance');
    await engine.createTable(empty, ipcOf(rowsTable(0)));
    expect(await engine.countRows(empty)).toBe(0);
    const { schema } = await engine.describe(empty);
    expect(schema.fields.map((f) => f.name)).toEqual(['id', 'text', 'labels', 'vec']);
  });

  it('rejects bad IPC (13) without creating anything', async () => {
    const location = path.join(root, 'bad-ipc.lance');
    await expectCode(engine.createTable(location, Buffer.from('definitely not arrow')), ErrorCode.InvalidInput);
    await expectCode(engine.createTable(location, Buffer.alloc(0)), ErrorCode.InvalidInput);
    await expectCode(engine.createTable(location, Buffer.from('{"a":1}')), ErrorCode.InvalidInput);
    expect(existsSync(location)).toBe(false);
    await expectCode(engine.describe(location), ErrorCode.TableNotFound);
  });

  it('rejects locations it cannot open (13) and a bad mode (13)', async () => {
    await expectCode(engine.createTable('relative/x.lance', ipcRows(1)), ErrorCode.InvalidInput);
    await expectCode(engine.createTable(path.join(root, 'no-suffix'), ipcRows(1)), ErrorCode.InvalidInput);
    await expectCode(engine.createTable(path.join(root, 'bad$name.lance'), ipcRows(1)), ErrorCode.InvalidInput);
    await expectCode(engine.createTable('s3:///x.lance', ipcRows(1)), ErrorCode.InvalidInput);
    await expectCode(engine.createTable(path.join(root, 'm.lance'), ipcRows(1), 'replace'), ErrorCode.InvalidInput);
  });

  it('a missing table is 4 for every operation', async () => {
    const missing = path.join(root, 'missing.lance');
    await expectCode(engine.countRows(missing), ErrorCode.TableNotFound);
    await expectCode(engine.insert(missing, ipcRows(1)), ErrorCode.TableNotFound);
    await expectCode(engine.query(missing, { k: 1 }), ErrorCode.TableNotFound);
    await expectCode(engine.listTags(missing), ErrorCode.TableNotFound);
  });
});

describe('insert', () => {
  let location: string;
  beforeEach(async () => {
    location = await freshTable(300);
  });

  it('appends and overwrites', async () => {
    expect(await engine.insert(location, ipcRows(10, 300))).toEqual({ version: 2, num_inserted_rows: 10 });
    expect(await engine.countRows(location)).toBe(310);
    expect(await engine.insert(location, ipcRows(4, 1000), 'overwrite')).toEqual({ version: 3, num_inserted_rows: 4 });
    expect(await engine.countRows(location)).toBe(4);
    expect(await engine.insert(location, ipcRows(296, 0), 'Append')).toMatchObject({ version: 4 });
    expect(await engine.countRows(location)).toBe(300);
  });

  it('bad IPC is 13 and leaves the table unchanged', async () => {
    const before = await engine.describe(location);
    await expectCode(engine.insert(location, Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9])), ErrorCode.InvalidInput);
    // Raw bytes in overwrite mode would wipe the table if they ever reached LanceDB.
    await expectCode(engine.insert(location, Buffer.alloc(0), 'overwrite'), ErrorCode.InvalidInput);
    expect(await engine.countRows(location)).toBe(300);
    expect((await engine.describe(location)).version).toBe(before.version);
  });

  it('a wrong schema is 20 and leaves the table unchanged', async () => {
    const before = await engine.describe(location);
    await expectCode(engine.insert(location, ipcWrongSchema()), ErrorCode.TableSchemaValidationError);
    await expectCode(engine.insert(location, ipcWrongSchema(), 'overwrite'), ErrorCode.TableSchemaValidationError);
    expect(await engine.countRows(location)).toBe(300);
    expect((await engine.describe(location)).version).toBe(before.version);
  });

  it('overwrite keeps the table schema and metadata; absent nullable columns become null', async () => {
    const location = path.join(root, 'overwrite-schema.lance');
    await engine.createTable(location, ipcOf(rowsTable(5, 0, new Map([['owner', 'rask']]))));
    await engine.updateFieldMetadata(location, { updates: [{ path: 'text', metadata: { pii: 'no' } }] });
    const before = await engine.describe(location);

    // Columns reordered, `labels` left out, no schema metadata: the table must not notice.
    const t = rowsTable(3, 100);
    const reordered = new Table({ vec: t.getChild('vec')!, text: t.getChild('text')!, id: t.getChild('id')! });
    await engine.insert(location, ipcOf(reordered), 'overwrite');
    const after = await engine.describe(location);
    expect(after.schema).toEqual(before.schema);
    expect(after.metadata).toEqual({ owner: 'rask' });
    expect(await engine.countRows(location, { predicate: 'labels IS NULL AND id >= 100' })).toBe(3);
    expect(await engine.countRows(location)).toBe(3);

    const wrongType = new Table({ id: vectorFromArray(['a', 'b'], new Utf8()) });
    await expectCode(engine.insert(location, ipcOf(wrongType), 'overwrite'), ErrorCode.TableSchemaValidationError);
    const noId = new Table({ text: t.getChild('text')! });
    await expectCode(engine.insert(location, ipcOf(noId), 'overwrite'), ErrorCode.TableSchemaValidationError);
    expect(await engine.countRows(location)).toBe(3);
  });

  it('rejects an unknown mode (13)', async () => {
    await expectCode(engine.insert(location, ipcRows(1), 'upsert'), ErrorCode.InvalidInput);
  });

  it('reads the table schema once per insert: LanceDB is handed the one this call read', async () => {
    await engine.countRows(location); // the kept handle is open
    const loc = parseLocation(location);
    const kept = await latestHandle(await connectCached(loc.parent, {}), loc.name).handle;
    const schemaReads = vi.spyOn(kept, 'schema');
    try {
      expect(await engine.insert(location, ipcRows(10, 300))).toEqual({ version: 2, num_inserted_rows: 10 });
      expect(schemaReads).toHaveBeenCalledTimes(1);
      expect(await engine.insert(location, ipcRows(5, 400), 'overwrite')).toEqual({ version: 3, num_inserted_rows: 5 });
      expect(schemaReads).toHaveBeenCalledTimes(2);
    } finally {
      schemaReads.mockRestore();
    }
    expect(await engine.countRows(location)).toBe(5);
  });
});

describe('mergeInsert, update, delete', () => {
  let location: string;
  beforeEach(async () => {
    location = await freshTable(300);
  });

  it('upserts on a key', async () => {
    const r = await engine.mergeInsert(location, ipcRows(20, 290), {
      on: 'id',
      when_matched_update_all: true,
      when_not_matched_insert_all: true,
      timeout: '30s',
    });
    expect(r).toEqual({ version: 2, num_updated_rows: 10, num_inserted_rows: 10, num_deleted_rows: 0 });
    expect(await engine.countRows(location)).toBe(310);
  });

  it('updates only rows passing the filter; a filter alone enables its clause', async () => {
    const r = await engine.mergeInsert(location, ipcRows(10, 0), {
      on: ['id'],
      when_matched_update_all_filt: 'target.id < 3',
    });
    expect(r).toMatchObject({ num_updated_rows: 3, num_inserted_rows: 0, num_deleted_rows: 0 });
  });

  it('deletes target rows missing from the source, within a filter', async () => {
    await engine.insert(location, ipcRows(10, 300)); // ids 300–309: the rows the filter covers
    const r = await engine.mergeInsert(location, ipcRows(5, 0), {
      on: 'id',
      when_not_matched_by_source_delete: true,
      when_not_matched_by_source_delete_filt: 'id >= 300',
      use_index: false,
    });
    expect(r.num_deleted_rows).toBe(10);
    expect(await engine.countRows(location)).toBe(300);
  });

  it('rejects a merge that does nothing, bad keys, bad timeouts, bad data', async () => {
    await expectCode(engine.mergeInsert(location, ipcRows(1), { on: 'id' }), ErrorCode.InvalidInput);
    await expectCode(
      engine.mergeInsert(location, ipcRows(1), { on: 'zzz', when_matched_update_all: true }),
      ErrorCode.TableColumnNotFound,
    );
    await expectCode(
      engine.mergeInsert(location, ipcRows(1), { on: 'id', when_matched_update_all: true, timeout: 'soon' }),
      ErrorCode.InvalidInput,
    );
    await expectCode(
      engine.mergeInsert(location, Buffer.from('nope'), { on: 'id', when_matched_update_all: true }),
      ErrorCode.InvalidInput,
    );
    await expectCode(
      engine.mergeInsert(location, ipcWrongSchema(), { on: 'id', when_not_matched_insert_all: true }),
      ErrorCode.TableSchemaValidationError,
    );
    expect(await engine.countRows(location)).toBe(300);
  });

  it('updates with SQL expressions', async () => {
    const r = await engine.update(location, { predicate: 'id < 10', updates: [['text', "'changed'"]] });
    expect(r.updated_rows).toBe(10);
    expect(await engine.countRows(location, { predicate: "text = 'changed'" })).toBe(10);
    const all = await engine.update(location, { updates: [['text', "concat(text, '!')"]] });
    expect(all).toEqual({ updated_rows: 300, version: r.version + 1 });
  });

  it('update failures: missing column 12, bad SQL 13, malformed request 13', async () => {
    await expectCode(engine.update(location, { updates: [['zzz', '1']] }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.update(location, { predicate: 'id <<< 3', updates: [['text', "'x'"]] }), ErrorCode.InvalidInput);
    await expectCode(engine.update(location, { updates: [] }), ErrorCode.InvalidInput);
    await expectCode(engine.update(location, { updates: [['text']] }), ErrorCode.InvalidInput);
    await expectCode(engine.update(location, { updates: [['text', "'a'"], ['text', "'b'"]] }), ErrorCode.InvalidInput);
  });

  it('deletes by predicate', async () => {
    const before = await engine.describe(location);
    expect(await engine.delete(location, { predicate: 'id >= 290' })).toEqual({ version: before.version + 1 });
    expect(await engine.countRows(location)).toBe(290);
    await expectCode(engine.delete(location, {}), ErrorCode.InvalidInput);
    await expectCode(engine.delete(location, { predicate: 'zzz = 1' }), ErrorCode.TableColumnNotFound);
    expect(await engine.countRows(location)).toBe(290);
  });
});

describe('query', () => {
  let location: string;
  beforeAll(async () => {
    location = await freshTable(300);
    await engine.createIndex(location, { column: 'text', index_type: 'FTS', with_position: true });
    await engine.insert(location, ipcRows(10, 300)); // version 3, 310 rows
  });

  it('returns an Arrow IPC file for a plain scan with k', async () => {
    const { bytes, table } = await query(location, { k: 5, vector: {} });
    expect(bytes.subarray(0, 6).toString()).toBe('ARROW1');
    expect(table.numRows).toBe(5);
    expect(table.schema.fields.map((f) => f.name)).toEqual(['id', 'text', 'labels', 'vec']);
  });

  it('bounds a request without k by the documented default, and k=isize::MAX by nothing', async () => {
    expect((await query(location, {})).table.numRows).toBe(DEFAULT_QUERY_LIMIT);
    // biome-ignore lint/correctness/noPrecisionLoss: isize::MAX as LanceDB sends it; the JSON number it becomes is what counts.
    expect((await query(location, { k: 9223372036854775807 })).table.numRows).toBe(310);
    expect((await query(location, { k: 2 ** 32 })).table.numRows).toBe(310);
  });

  it('keeps the schema of an empty result (k=0, no matching row)', async () => {
    for (const request of [{ k: 0 }, { k: 5, filter: 'id < 0' }, { k: 0, vector: { single_vector: vectorOf(1) } }]) {
      const { table } = await query(location, request);
      expect(table.numRows).toBe(0);
      expect(table.schema.fields.length).toBeGreaterThanOrEqual(4);
    }
  });

  it('searches by one vector, a bare vector, or several', async () => {
    const single = plain((await query(location, { k: 3, vector: { single_vector: vectorOf(7) } })).table);
    expect(single).toHaveLength(3);
    expect(single[0]).toMatchObject({ id: 7, _distance: 0 });

    expect(plain((await query(location, { k: 1, vector: vectorOf(9) })).table)[0].id).toBe(9);

    const multi = plain((await query(location, { k: 2, vector: { multi_vector: [vectorOf(1), vectorOf(2)] } })).table);
    expect(multi).toHaveLength(4);
    expect(new Set(multi.map((r) => r.query_index))).toEqual(new Set([0, 1]));

    await expectCode(
      engine.query(location, { k: 1, vector: { single_vector: vectorOf(1), multi_vector: [vectorOf(2)] } }),
      ErrorCode.InvalidInput,
    );
    await expectCode(engine.query(location, { k: 1, vector: { single_vector: [1, 2, 3] } }), ErrorCode.InvalidInput);
  });

  it('runs a small search without reading the schema or the row count first; a large one counts rows', async () => {
    const search = (k: number) => query(location, { k, vector: vectorOf(4) });
    await search(3); // the kept handle is open
    const loc = parseLocation(location);
    const kept = await latestHandle(await connectCached(loc.parent, {}), loc.name).handle;
    const schemaReads = vi.spyOn(kept, 'schema');
    const rowCounts = vi.spyOn(kept, 'countRows');
    try {
      expect(plain((await search(3)).table)[0]).toMatchObject({ id: 4, _distance: 0 });
      expect(schemaReads).not.toHaveBeenCalled();
      expect(rowCounts).not.toHaveBeenCalled();
      expect((await search(CLAMP_SEARCHES_ABOVE + 1)).table.numRows).toBe(310);
      expect(rowCounts).toHaveBeenCalledTimes(1);
    } finally {
      schemaReads.mockRestore();
      rowCounts.mockRestore();
    }
  });

  it('refuses a search on a missing or non-vector column, or on a table without one, in its own words, run or planned', async () => {
    const noVectors = path.join(root, 'no-vectors.lance');
    await engine.createTable(noVectors, ipcOf(new Table({ name: vectorFromArray(['a', 'b'], new Utf8()) })), 'create');
    const search = (extra: Record<string, unknown>) => ({ k: 2, vector: { single_vector: vectorOf(1) }, ...extra });
    const cases = [
      { at: location, request: search({ vector_column: 'nope' }), code: ErrorCode.TableColumnNotFound, message: 'column "nope" does not exist' },
      { at: location, request: search({ vector_column: 'text' }), code: ErrorCode.InvalidInput, message: 'column "text" holds Utf8, not vectors' },
      { at: noVectors, request: search({}), code: ErrorCode.InvalidInput, message: 'a vector search needs a vector column; the table has none' },
    ];
    for (const { at, request, code, message } of cases) {
      expect((await expectCode(engine.query(at, request), code)).message).toContain(message);
      expect((await expectCode(engine.explainPlan(at, { query: request }), code)).message).toContain(message);
      expect((await expectCode(engine.analyzePlan(at, request), code)).message).toContain(message);
    }
  });

  it('projects columns by name or alias and adds _rowid on request', async () => {
    const named = (await query(location, { k: 2, columns: { column_names: ['id'] }, with_row_id: true })).table;
    expect(named.schema.fields.map((f) => f.name)).toEqual(['id', '_rowid']);
    const aliased = plain((await query(location, { k: 2, columns: { column_aliases: { ident: 'id', t: 'text' } } })).table);
    expect(Object.keys(aliased[0]).sort()).toEqual(['ident', 't']);
    await expectCode(
      engine.query(location, { k: 1, columns: { column_names: ['id'], column_aliases: { a: 'id' } } }),
      ErrorCode.InvalidInput,
    );
    await expectCode(engine.query(location, { k: 1, columns: { column_names: ['zzz'] } }), ErrorCode.TableColumnNotFound);
  });

  it('applies filter, offset, distance type, bounds and post-filtering', async () => {
    const filtered = plain((await query(location, { k: 50, filter: 'id >= 295' })).table);
    expect(filtered.map((r) => r.id)).toEqual([295, 296, 297, 298, 299, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309]);
    expect(plain((await query(location, { k: 2, offset: 305 })).table).map((r) => r.id)).toEqual([305, 306]);

    const cosine = plain((await query(location, { k: 2, vector: vectorOf(4), distance_type: 'Cosine' })).table);
    expect(cosine[0].id).toBe(4);
    await expectCode(engine.query(location, { k: 2, vector: vectorOf(4), distance_type: 'manhattan' }), ErrorCode.InvalidInput);

    const bounded = plain((await query(location, { k: 300, vector: vectorOf(4), lower_bound: 0.1, upper_bound: 1 })).table);
    expect(bounded.length).toBeGreaterThan(0);
    for (const r of bounded) expect(r._distance as number).toBeGreaterThanOrEqual(0.1);

    // Post-filtering filters the unfiltered top 5 (flat search here, so exact); pre-filtering
    // fills all 5 from the rows that pass.
    const top5 = plain((await query(location, { k: 5, vector: vectorOf(4) })).table).map((r) => r.id as number);
    expect(top5).toHaveLength(5);
    expect(top5.some((id) => id <= 100), 'the example must tell pre- from post-filtering').toBe(true);
    const post = plain((await query(location, { k: 5, vector: vectorOf(4), filter: 'id > 100', prefilter: false })).table);
    expect(post.map((r) => r.id)).toEqual(top5.filter((id) => id > 100));
    const pre = plain((await query(location, { k: 5, vector: vectorOf(4), filter: 'id > 100' })).table);
    expect(pre).toHaveLength(5);
    for (const r of pre) expect(r.id as number).toBeGreaterThan(100);
  });

  it('validates numbers before LanceDB can wrap them', async () => {
    await expectCode(engine.query(location, { k: -1 }), ErrorCode.InvalidInput);
    await expectCode(engine.query(location, { k: 1.5 }), ErrorCode.InvalidInput);
    await expectCode(engine.query(location, { k: 1, offset: -1 }), ErrorCode.InvalidInput);
    await expectCode(engine.query(location, { k: 1, vector: [Number.NaN, 1, 1, 1, 1, 1, 1, 1] }), ErrorCode.InvalidInput);
  });

  it('reads an older version', async () => {
    expect((await query(location, { k: 1000, version: 1 })).table.numRows).toBe(300);
    await expectCode(engine.query(location, { k: 1, version: 99 }), ErrorCode.TableVersionNotFound);
  });

  it('runs string and structured full-text queries', async () => {
    const str = plain((await query(location, { k: 5, full_text_query: { string_query: { query: 'banana' } } })).table);
    expect(str).toHaveLength(5);
    for (const r of str) expect(r.text).toMatch(/banana/);
    expect(str[0]).toHaveProperty('_score');

    const run = async (q: unknown, k = 5) =>
      plain((await query(location, { k, full_text_query: { structured_query: { query: q } } })).table);
    const match = await run({ match: { terms: 'cherry', column: 'text' } });
    expect(match).toHaveLength(5);
    for (const r of match) expect(r.text).toMatch(/cherry/);
    // No column: every FTS-indexed column is searched.
    expect((await run({ match: { terms: 'cherry', operator: 'And' } })).length).toBe(5);
    expect((await run({ phrase: { terms: 'fruit number 7', column: 'text' } }, 10)).map((r) => r.id)).toEqual([7]);
    const boost = await run({ boost: { positive: { match: { terms: 'fruit', column: 'text' } }, negative: { match: { terms: 'banana', column: 'text' } }, negative_boost: 0.1 } });
    expect(boost).toHaveLength(5);
    const multi = await run({ multi_match: { match_queries: [{ terms: 'date', column: 'text' }, { terms: 'date', column: 'text', boost: 2 }] } });
    expect(multi).toHaveLength(5);
    for (const r of multi) expect(r.text).toMatch(/date/);
    const mixed = await run({ multi_match: { match_queries: [{ terms: 'date', column: 'text' }, { terms: 'elder', column: 'text', fuzziness: 1 }] } }, 300);
    // 310 rows cycle through five words: 62 "date" and 62 "elder" rows.
    expect(mixed).toHaveLength(124);
    for (const r of mixed) expect(r.text).toMatch(/date|elder/);
    const bool = await run({
      boolean: { must: [{ match: { terms: 'fruit', column: 'text' } }], must_not: [{ match: { terms: 'banana', column: 'text' } }], should: [] },
    }, 300);
    expect(bool).toHaveLength(248); // every row but the 62 bananas
    for (const r of bool) expect(r.text).not.toMatch(/banana/);

    await expectCode(engine.query(location, { k: 1, full_text_query: { structured_query: { query: {} } } }), ErrorCode.InvalidInput);
    await expectCode(
      engine.query(location, { k: 1, full_text_query: { structured_query: { query: { match: { terms: 'x' }, phrase: { terms: 'y' } } } } }),
      ErrorCode.InvalidInput,
    );
  });

  it('runs a hybrid vector + full-text query', async () => {
    const rows = plain(
      (await query(location, { k: 4, vector: { single_vector: vectorOf(11) }, full_text_query: { string_query: { query: 'banana' } } })).table,
    );
    expect(rows).toHaveLength(4);
    expect(rows[0]).toHaveProperty('_relevance_score');
  });

  it('explains and analyzes plans', async () => {
    const plan = await engine.explainPlan(location, { query: { k: 3, filter: 'id > 3' }, verbose: true });
    expect(plan).toMatch(/LanceRead/);
    const vec = await engine.explainPlan(location, { query: { k: 3, vector: vectorOf(1) } });
    expect(vec).toMatch(/KNN|ANN/);
    const analysis = await engine.analyzePlan(location, { k: 3, filter: 'id > 3' });
    expect(analysis).toMatch(/output_rows=3/);
    await expectCode(engine.explainPlan(location, { query: { k: 3, filter: 'zzz > 3' } }), ErrorCode.TableColumnNotFound);
  });
});

describe('countRows, stats, describe, versions, restore', () => {
  let location: string;
  beforeEach(async () => {
    location = path.join(root, `meta${++seq}.lance`);
    await engine.createTable(location, ipcOf(rowsTable(300, 0, new Map([['owner', 'rask']]))));
    await engine.insert(location, ipcRows(20, 300));
  });

  it('counts rows, with a predicate and at a version', async () => {
    expect(await engine.countRows(location)).toBe(320);
    expect(await engine.countRows(location, { predicate: 'id < 10' })).toBe(10);
    expect(await engine.countRows(location, { version: 1 })).toBe(300);
    await expectCode(engine.countRows(location, { version: 42 }), ErrorCode.TableVersionNotFound);
    await expectCode(engine.countRows(location, { predicate: 'zzz < 1' }), ErrorCode.TableColumnNotFound);
  });

  it('reports stats in the spec shape', async () => {
    const s = await engine.stats(location);
    expect(s).toMatchObject({ num_rows: 320, num_indices: 0, fragment_stats: { num_fragments: 2 } });
    expect(s.total_bytes).toBeGreaterThan(0);
    expect(Object.keys(s.fragment_stats.lengths).sort()).toEqual(['max', 'mean', 'min', 'p25', 'p50', 'p75', 'p99']);
    for (const v of Object.values(s.fragment_stats.lengths)) expect(Number.isInteger(v)).toBe(true);
  });

  it('describes the schema as JSON Arrow, with schema metadata', async () => {
    const d = await engine.describe(location);
    expect(d.version).toBe(2);
    expect(d.metadata).toEqual({ owner: 'rask' });
    expect(d.schema.fields).toEqual([
      { name: 'id', nullable: false, type: { type: 'int64' } },
      { name: 'text', nullable: true, type: { type: 'utf8' } },
      { name: 'labels', nullable: true, type: { type: 'list', fields: [{ name: 'item', nullable: true, type: { type: 'utf8' } }] } },
      {
        name: 'vec',
        nullable: true,
        type: { type: 'fixed_size_list', length: 8, fields: [{ name: 'item', nullable: true, type: { type: 'float32' } }] },
      },
    ]);
    expect((await engine.describe(location, { version: 1 })).version).toBe(1);
    await expectCode(engine.describe(location, { version: 9 }), ErrorCode.TableVersionNotFound);
  });

  it('lists the dataset versions with V2 manifest paths, in either order, paged', async () => {
    const { versions } = await engine.listVersions(location);
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect(versions[0].manifest_path).toBe(
      `${path.join(location, '_versions').replace(/^\//, '')}/18446744073709551614.manifest`,
    );
    expect(versions[1].metadata.total_rows).toBe('320');
    expect(versions[0].timestamp_millis).toBeGreaterThan(Date.now() - 600_000);
    const desc = await engine.listVersions(location, { descending: true, limit: 1 });
    expect(desc).toMatchObject({ versions: [{ version: 2 }], page_token: '2' });
    expect((await engine.listVersions(location, { descending: true, page_token: '2' })).versions.map((v) => v.version)).toEqual([1]);
  });

  it('restores an old version as a new one', async () => {
    const r = await engine.restore(location, { version: 1 });
    expect(r.version).toBe(3);
    expect(await engine.countRows(location)).toBe(300);
    expect(await engine.restore(location, { version: 2 })).toEqual({ version: 4 });
    expect(await engine.countRows(location)).toBe(320);
    await expectCode(engine.restore(location, { version: 77 }), ErrorCode.TableVersionNotFound);
  });
});

describe('indexes', () => {
  let location: string;
  beforeEach(async () => {
    location = await freshTable(300);
  });

  const requests: Record<string, unknown>[] = [
      { column: 'id', index_type: 'BTREE', name: 'id_idx' },
      { column: 'text', index_type: 'bitmap', name: 'text_bitmap' },
      { column: 'labels', index_type: 'LABEL_LIST' },
      {
        column: 'text',
        index_type: 'FTS',
        name: 'text_fts',
        base_tokenizer: 'simple',
        language: 'english',
        max_token_length: 40,
        lower_case: true,
        stem: true,
        remove_stop_words: true,
        ascii_folding: true,
        with_position: false,
      },
      { column: 'vec', index_type: 'IVF_FLAT', name: 'v_flat', num_partitions: 2, distance_type: 'l2' },
      { column: 'vec', index_type: 'IVF_PQ', name: 'v_pq', num_partitions: 2, num_sub_vectors: 2, num_bits: 8, max_iterations: 10, sample_rate: 256 },
      { column: 'vec', index_type: 'IVF_HNSW_SQ', name: 'v_hsq', num_partitions: 1, m: 8, ef_construction: 50, distance_type: 'cosine' },
      { column: 'vec', index_type: 'IVF_HNSW_PQ', name: 'v_hpq', num_partitions: 1, num_sub_vectors: 2 },
      { column: 'vec', index_type: 'IVF_RQ', name: 'v_rq', target_partition_size: 150 },
    ];
  /** Builds the indexes named (all of them when none is named). */
  async function build(...names: string[]) {
    const chosen = names.length ? requests.filter((r) => names.includes(String(r.name))) : requests;
    expect(chosen.length).toBe(names.length || requests.length);
    for (const r of chosen) expect(await engine.createIndex(location, r)).toEqual({});
  }

  it('builds every supported scalar and vector index type', async () => {
    await build();

    const { indexes } = await engine.listIndices(location);
    const byName = Object.fromEntries(indexes.map((i) => [i.index_name, i]));
    expect(Object.keys(byName).sort()).toEqual(
      ['id_idx', 'labels_idx', 'text_bitmap', 'text_fts', 'v_flat', 'v_hpq', 'v_hsq', 'v_pq', 'v_rq'].sort(),
    );
    expect(byName.id_idx).toMatchObject({ columns: ['id'], index_type: 'BTREE', status: 'done', num_indexed_rows: 300, num_unindexed_rows: 0 });
    expect(byName.id_idx.index_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(byName.text_fts.index_type).toBe('FTS');
    expect(byName.v_hsq.index_type).toBe('IVF_HNSW_SQ');
    expect(byName.labels_idx.index_type).toBe('LABEL_LIST');
    expect(JSON.parse(byName.v_pq.index_details as string)).toMatchObject({ metric_type: 'L2' });
    expect(typeof byName.v_pq.created_at).toBe('string');

    expect(await engine.indexStats(location, { index_name: 'v_pq' })).toEqual({
      index_type: 'IVF_PQ',
      distance_type: 'l2',
      num_indexed_rows: 300,
      num_unindexed_rows: 0,
      num_indices: 1,
    });
    expect((await engine.stats(location)).num_indices).toBe(9);
  });

  it('uses vector indexes in queries, with the ANN knobs', async () => {
    await build('v_pq');
    const rows = plain(
      (
        await query(location, {
          k: 3,
          vector: vectorOf(12),
          nprobes: 2,
          refine_factor: 2,
          ef: 20,
          fast_search: true,
          distance_type: 'l2',
        })
      ).table,
    );
    expect(rows[0].id).toBe(12);
    const exact = plain((await query(location, { k: 3, vector: vectorOf(12), bypass_vector_index: true })).table);
    expect(exact[0]).toMatchObject({ id: 12, _distance: 0 });
    expect(await engine.explainPlan(location, { query: { k: 3, vector: vectorOf(1) } })).toMatch(/ANN/);
  });

  it('pages the index list', async () => {
    await build();
    const first = await engine.listIndices(location, { limit: 4 });
    expect(first.indexes.map((i) => i.index_name)).toEqual(['id_idx', 'labels_idx', 'text_bitmap', 'text_fts']);
    expect(first.page_token).toBe('text_fts');
    const rest = await engine.listIndices(location, { page_token: first.page_token });
    expect(rest.indexes.map((i) => i.index_name)).toEqual(['v_flat', 'v_hpq', 'v_hsq', 'v_pq', 'v_rq']);
    expect(rest.page_token).toBeUndefined();
  });

  it('refuses duplicates (7), unknown types, bad parameters and missing columns', async () => {
    await build('id_idx');
    await expectCode(engine.createIndex(location, { column: 'id', index_type: 'BTREE', name: 'id_idx' }), ErrorCode.TableIndexAlreadyExists);
    await expectCode(engine.createIndex(location, { column: 'id', index_type: 'RTREE' }), ErrorCode.InvalidInput);
    await expectCode(engine.createIndex(location, { column: 'id', index_type: 'BTREE', num_partitions: 4 }), ErrorCode.InvalidInput);
    // An unknown language aborts the process inside LanceDB; it must never get there.
    await expectCode(engine.createIndex(location, { column: 'text', index_type: 'FTS', name: 'k', language: 'Klingon' }), ErrorCode.InvalidInput);
    // So does hamming on float vectors (a panic in the index builder).
    await expectCode(engine.createIndex(location, { column: 'vec', index_type: 'IVF_FLAT', name: 'h', distance_type: 'hamming' }), ErrorCode.InvalidInput);
    await expectCode(engine.createIndex(location, { column: 'zzz', index_type: 'BTREE' }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.createIndex(location, { column: 'vec', index_type: 'BTREE', name: 'vb' }), ErrorCode.InvalidInput);
    await expectCode(
      engine.createIndex(location, { column: 'vec', index_type: 'IVF_PQ', num_partitions: 2, target_partition_size: 10 }),
      ErrorCode.InvalidInput,
    );
  });

  it('reports a missing index as 6 and drops indexes', async () => {
    await build('text_bitmap');
    await expectCode(engine.indexStats(location, { index_name: 'nope' }), ErrorCode.TableIndexNotFound);
    await expectCode(engine.dropIndex(location, { index_name: 'nope' }), ErrorCode.TableIndexNotFound);
    expect(await engine.dropIndex(location, { index_name: 'text_bitmap' })).toEqual({});
    expect((await engine.listIndices(location)).indexes.map((i) => i.index_name)).not.toContain('text_bitmap');
    // Older versions still list the index they had.
    const version = (await engine.describe(location)).version;
    expect((await engine.listIndices(location, { version: version - 1 })).indexes.map((i) => i.index_name)).toContain('text_bitmap');
  });
});

describe('tags', () => {
  let location: string;
  beforeEach(async () => {
    location = await freshTable(300);
    await engine.insert(location, ipcRows(5, 300)); // version 2
  });

  it('creates, reads, lists, updates and deletes tags', async () => {
    expect(await engine.createTag(location, { tag: 'first', version: 1 })).toEqual({});
    await engine.createTag(location, { tag: 'second', version: 2 });
    await engine.createTag(location, { tag: 'also-first', version: 1 });
    expect(await engine.getTagVersion(location, { tag: 'first' })).toEqual({ version: 1 });

    const all = await engine.listTags(location);
    expect(Object.keys(all.tags).sort()).toEqual(['also-first', 'first', 'second']);
    expect(all.tags.second).toMatchObject({ version: 2 });
    expect(all.tags.second.manifestSize).toBeGreaterThan(0);
    expect(all.page_token).toBeUndefined();

    const page1 = await engine.listTags(location, { limit: 2 });
    expect(Object.keys(page1.tags)).toEqual(['also-first', 'first']);
    expect(page1.page_token).toBe('first');
    expect(Object.keys((await engine.listTags(location, { page_token: 'first' })).tags)).toEqual(['second']);

    expect(await engine.updateTag(location, { tag: 'first', version: 2 })).toEqual({});
    expect((await engine.getTagVersion(location, { tag: 'first' })).version).toBe(2);
    expect(await engine.describe(location, { tag: 'also-first' })).toMatchObject({ version: 1 });
    expect(await engine.deleteTag(location, { tag: 'also-first' })).toEqual({});
    expect(Object.keys((await engine.listTags(location)).tags).sort()).toEqual(['first', 'second']);
  });

  it('maps tag failures: missing 8, duplicate 9, missing version 11', async () => {
    await engine.createTag(location, { tag: 'dup', version: 1 });
    await expectCode(engine.getTagVersion(location, { tag: 'nope' }), ErrorCode.TableTagNotFound);
    await expectCode(engine.deleteTag(location, { tag: 'nope' }), ErrorCode.TableTagNotFound);
    await expectCode(engine.updateTag(location, { tag: 'nope', version: 1 }), ErrorCode.TableTagNotFound);
    await expectCode(engine.describe(location, { tag: 'nope' }), ErrorCode.TableTagNotFound);
    await expectCode(engine.createTag(location, { tag: 'dup', version: 1 }), ErrorCode.TableTagAlreadyExists);
    await expectCode(engine.createTag(location, { tag: 'far', version: 99 }), ErrorCode.TableVersionNotFound);
    await expectCode(engine.updateTag(location, { tag: 'dup', version: 99 }), ErrorCode.TableVersionNotFound);
    await expectCode(engine.createTag(location, { tag: 'x' }), ErrorCode.InvalidInput);
    await expectCode(engine.createTag(location, { tag: '../escape', version: 1 }), ErrorCode.InvalidInput);
  });
});

describe('branches', () => {
  let location: string;
  beforeEach(async () => {
    location = await freshTable(300);
  });

  /** Branch dev of main at version 1, with 5 rows appended on it. */
  async function dev() {
    expect(await engine.createBranch(location, { name: 'dev' })).toEqual({});
    await engine.insert(location, ipcRows(5, 300), 'append', { branch: 'dev' });
  }

  it('creates branches whose writes stay on the branch', async () => {
    expect(await engine.createBranch(location, { name: 'dev' })).toEqual({});
    const written = await engine.insert(location, ipcRows(5, 300), 'append', { branch: 'dev' });
    expect(await engine.countRows(location, { branch: 'dev' })).toBe(305);
    expect(await engine.countRows(location)).toBe(300);
    expect((await query(location, { k: 1000, branch: 'dev' })).table.numRows).toBe(305);
    await engine.delete(location, { predicate: 'id < 5', branch: 'dev' });
    expect(await engine.countRows(location, { branch: 'dev' })).toBe(300);
    expect(await engine.countRows(location, { branch: 'main' })).toBe(300);
    expect((await engine.describe(location, { branch: 'dev' })).version).toBeGreaterThan(written.version);
    expect((await engine.listVersions(location, { branch: 'dev' })).versions[0].manifest_path).toContain('/tree/dev/_versions/');
  });

  it('branches from a version or from another branch, and lists them', async () => {
    await dev();
    await engine.insert(location, ipcRows(1, 500)); // main version 2
    await engine.createBranch(location, { name: 'old', from_version: 1 });
    await engine.createBranch(location, { name: 'dev2', from_branch: 'dev' });
    expect(await engine.countRows(location, { branch: 'old' })).toBe(300);
    expect(await engine.countRows(location, { branch: 'dev2' })).toBe(305);

    const { branches } = await engine.listBranches(location);
    expect(Object.keys(branches).sort()).toEqual(['dev', 'dev2', 'old']);
    expect(branches.old).toMatchObject({ parentVersion: 1 });
    expect(branches.old.parentBranch).toBeUndefined();
    expect(branches.dev2.parentBranch).toBe('dev');
    expect(branches.dev.createAt).toBeGreaterThan(1_600_000_000);
    expect(branches.dev.manifestSize).toBeGreaterThan(0);

    const page1 = await engine.listBranches(location, { limit: 1 });
    expect(page1).toMatchObject({ page_token: 'dev' });
    expect(Object.keys(page1.branches)).toEqual(['dev']);
  });

  it('records the branch of a tag made on a branch', async () => {
    await dev();
    const devVersion = (await engine.describe(location, { branch: 'dev' })).version;
    await engine.createTag(location, { tag: 'on-dev', version: devVersion, branch: 'dev' });
    expect(await engine.getTagVersion(location, { tag: 'on-dev' })).toEqual({ version: devVersion, branch: 'dev' });
    expect((await engine.listTags(location)).tags['on-dev']).toMatchObject({ version: devVersion, branch: 'dev' });
  });

  it('maps branch failures: missing 22, duplicate 23', async () => {
    await dev();
    await expectCode(engine.createBranch(location, { name: 'dev' }), ErrorCode.TableBranchAlreadyExists);
    await expectCode(engine.createBranch(location, { name: 'main' }), ErrorCode.TableBranchAlreadyExists);
    // 'dev' forked from an older main version than the latest: Lance's own error differs then.
    await engine.insert(location, ipcRows(1, 900));
    await expectCode(engine.createBranch(location, { name: 'dev' }), ErrorCode.TableBranchAlreadyExists);
    await expectCode(engine.createBranch(location, { name: '../escape' }), ErrorCode.InvalidInput);
    await expectCode(engine.countRows(location, { branch: '../..' }), ErrorCode.InvalidInput);
    await expectCode(engine.createBranch(location, { name: 'x', from_branch: 'nope' }), ErrorCode.TableBranchNotFound);
    await expectCode(engine.createBranch(location, { name: 'y', from_version: 99 }), ErrorCode.TableVersionNotFound);
    await expectCode(engine.deleteBranch(location, { name: 'nope' }), ErrorCode.TableBranchNotFound);
    await expectCode(engine.countRows(location, { branch: 'nope' }), ErrorCode.TableBranchNotFound);
    await expectCode(engine.insert(location, ipcRows(1), 'append', { branch: 'nope' }), ErrorCode.TableBranchNotFound);
  });

  it('reads branch ref files through the configured reader', async () => {
    await dev();
    const seen: string[] = [];
    const custom = wireEngine(new LanceDataEngine({
      readTableFile: async (uri, rel) => {
        seen.push(`${uri}|${rel}`);
        return JSON.stringify({ createAt: 1234, metadata: { team: 'x' } });
      },
    }));
    const { branches } = await custom.listBranches(location, { limit: 1 });
    expect(branches.dev).toMatchObject({ createAt: 1234, metadata: { team: 'x' } });
    expect(seen).toEqual([`${location}|_refs/branches/dev.json`]);
  });

  it('deletes branches', async () => {
    await dev();
    await engine.createBranch(location, { name: 'dev2', from_branch: 'dev' });
    await engine.createBranch(location, { name: 'old', from_version: 1 });
    expect(await engine.deleteBranch(location, { name: 'dev2' })).toEqual({});
    expect(await engine.deleteBranch(location, { name: 'old' })).toEqual({});
    expect(Object.keys((await engine.listBranches(location)).branches)).toEqual(['dev']);
  });
});

describe('schema evolution', () => {
  let location: string;
  beforeEach(async () => {
    location = await freshTable(300);
  });

  it('adds columns from SQL expressions and typed all-null columns', async () => {
    const v1 = await engine.addColumns(location, {
      new_columns: [
        { name: 'double_id', expression: 'id * 2' },
        { name: 'id_f64', expression: 'CAST(id AS DOUBLE)' },
      ],
    });
    expect(v1).toEqual({ version: 2 });
    expect(plain((await query(location, { k: 1, offset: 21, columns: { column_names: ['double_id'] } })).table)).toEqual([{ double_id: 42 }]);
    const v2 = await engine.addColumns(location, {
      new_columns: [{ name: 'note', type: { type: 'utf8' } }, { name: 'emb', type: { type: 'fixed_size_list', length: 2, fields: [{ name: 'item', nullable: true, type: { type: 'float32' } }] } }],
    });
    expect(v2).toEqual({ version: 3 });
    const fields = (await engine.describe(location)).schema.fields;
    expect(fields.find((f) => f.name === 'note')).toEqual({ name: 'note', nullable: true, type: { type: 'utf8' } });
    expect(fields.find((f) => f.name === 'emb')?.type).toMatchObject({ type: 'fixed_size_list', length: 2 });
    expect(await engine.countRows(location, { predicate: 'note IS NULL' })).toBe(300);
  });

  it('refuses what it cannot do', async () => {
    await expectCode(
      engine.addColumns(location, { new_columns: [{ name: 'a', expression: '1' }, { name: 'b', type: { type: 'int32' } }] }),
      ErrorCode.InvalidInput,
    );
    // A computed column and an expression column are two different commits.
    await expectCode(
      engine.addColumns(location, { new_columns: [{ name: 'c', computed: 'id + 1' }, { name: 'c2', expression: 'id + 1' }] }),
      ErrorCode.InvalidInput,
    );
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'd' }] }), ErrorCode.InvalidInput);
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'text', expression: "'x'" }] }), ErrorCode.InvalidInput);
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'e', expression: 'nosuch + 1' }] }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'f', type: { type: 'weird' } }] }), ErrorCode.InvalidInput);
  });

  it('renames, changes nullability and casts columns', async () => {
    await engine.addColumns(location, { new_columns: [{ name: 'double_id', expression: 'id * 2' }, { name: 'id_f64', expression: 'CAST(id AS DOUBLE)' }] });
    await engine.addColumns(location, { new_columns: [{ name: 'note', type: { type: 'utf8' } }] });
    const { version } = await engine.alterColumns(location, {
      alterations: [
        { path: 'double_id', rename: 'twice' },
        { path: 'id_f64', data_type: { type: 'float32' } },
        { path: 'id', nullable: true },
      ],
    });
    const fields = Object.fromEntries((await engine.describe(location)).schema.fields.map((f) => [f.name, f]));
    expect(fields.twice).toBeDefined();
    expect(fields.double_id).toBeUndefined();
    expect(fields.id_f64.type).toEqual({ type: 'float32' });
    expect(fields.id.nullable).toBe(true);
    expect((await engine.describe(location)).version).toBe(version);

    await expectCode(engine.alterColumns(location, { alterations: [{ path: 'zzz', rename: 'y' }] }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.alterColumns(location, { alterations: [{ path: 'text', data_type: { type: 'int32' } }] }), ErrorCode.InvalidInput);
    await expectCode(engine.alterColumns(location, { alterations: [{ path: 'text' }] }), ErrorCode.InvalidInput);
    await expectCode(engine.alterColumns(location, { alterations: [{ path: 'note', nullable: false }] }), ErrorCode.TableSchemaValidationError);
  });

  it('drops columns', async () => {
    await engine.addColumns(location, { new_columns: [{ name: 'twice', expression: 'id * 2' }] });
    await engine.addColumns(location, {
      new_columns: [{ name: 'emb', type: { type: 'fixed_size_list', length: 2, fields: [{ name: 'item', nullable: true, type: { type: 'float32' } }] } }],
    });
    const before = (await engine.describe(location)).version;
    expect(await engine.dropColumns(location, { columns: ['twice', 'emb'] })).toEqual({ version: before + 1 });
    expect((await engine.describe(location)).schema.fields.map((f) => f.name)).not.toContain('twice');
    await expectCode(engine.dropColumns(location, { columns: ['zzz'] }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.dropColumns(location, { columns: [] }), ErrorCode.InvalidInput);
  });

  it('updates field metadata: merge, delete with null, replace', async () => {
    const r1 = await engine.updateFieldMetadata(location, { updates: [{ path: 'text', metadata: { a: '1', b: '2' } }] });
    expect(r1.fields).toEqual({ text: { a: '1', b: '2' } });
    const r2 = await engine.updateFieldMetadata(location, { updates: [{ path: 'text', metadata: { a: null, c: '3' } }] });
    expect(r2).toEqual({ version: r1.version + 1, fields: { text: { b: '2', c: '3' } } });
    const r3 = await engine.updateFieldMetadata(location, { updates: [{ path: 'text', metadata: { z: '9' }, replace: true }] });
    expect(r3.fields).toEqual({ text: { z: '9' } });
    const text = (await engine.describe(location)).schema.fields.find((f) => f.name === 'text');
    expect(text?.metadata).toEqual({ z: '9' });
    await expectCode(engine.updateFieldMetadata(location, { updates: [{ path: 'zzz', metadata: { a: 'b' } }] }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.updateFieldMetadata(location, { updates: [{ path: 'text', metadata: { a: 1 } }] }), ErrorCode.InvalidInput);
  });
});
