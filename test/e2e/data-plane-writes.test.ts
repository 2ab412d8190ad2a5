// @covers InsertIntoTable, MergeInsertIntoTable, UpdateTable, DeleteFromTable, RestoreTable, CountTableRows
/**
 * Writes over raw HTTP. Arrow bodies carry no Content-Type; insert and merge_insert take their
 * parameters from the query (`on` repeated once per key column). Every refused write is
 * followed by a read proving the table is unchanged.
 */
import { Int64, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcOf, ipcRows, ipcWrongSchema, rowsTable } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
let seq = 0;

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'wr');
});
afterAll(() => s?.stop());

/** A new table of rows 0…n-1. */
async function fresh(n = 10): Promise<TableApi> {
  const t = new TableApi(s, ['wr', `t${++seq}`]);
  expectOk(await t.arrow('create', ipcRows(n)));
  return t;
}

const ids = async (t: TableApi) => (await t.rows()).map((r) => r.id);
const textOf = async (t: TableApi, id: number) => (await t.rows({ filter: `id = ${id}` }))[0]?.text;

/** Rows with only `id` and `text` (a partial-schema merge source). */
function idText(rows: [number, string][]): Buffer {
  return ipcOf(
    new Table({
      id: vectorFromArray(rows.map(([i]) => BigInt(i)), new Int64()),
      text: vectorFromArray(rows.map(([, t]) => t), new Utf8()),
    }),
  );
}

describe('InsertIntoTable', () => {
  it('appends by default and with mode=append; answers version and row count', async () => {
    const t = await fresh(3);
    expect(expectOk(await t.arrow('insert', ipcRows(2, 100)))).toEqual({ version: 2, num_inserted_rows: 2 });
    expect(expectOk(await t.arrow('insert', ipcRows(1, 200), 'mode=Append'))).toEqual({ version: 3, num_inserted_rows: 1 });
    expect(await ids(t)).toEqual([0, 1, 2, 100, 101, 200]);
  });

  it('mode=overwrite replaces every row and keeps the schema', async () => {
    const t = await fresh(5);
    expect(expectOk(await t.arrow('insert', ipcRows(2, 50), 'mode=overwrite'))).toMatchObject({ num_inserted_rows: 2 });
    expect(await ids(t)).toEqual([50, 51]);
    expect((await t.describe()).schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'text', 'labels', 'vec']);
  });

  it('bad Arrow → 400 / 13, rows unchanged', async () => {
    const t = await fresh(4);
    expectError(await t.arrow('insert', Buffer.from('garbage bytes')), 400, 13);
    expectError(await t.arrow('insert', Buffer.alloc(0), 'mode=overwrite'), 400, 13);
    expect(await t.count()).toBe(4);
    expect((await t.describe()).version).toBe(1);
  });

  it('wrong schema → 400 / 20, rows unchanged (append and overwrite)', async () => {
    const t = await fresh(4);
    expectError(await t.arrow('insert', ipcWrongSchema()), 400, 20);
    expectError(await t.arrow('insert', ipcWrongSchema(), 'mode=overwrite'), 400, 20);
    expect(await ids(t)).toEqual([0, 1, 2, 3]);
    expect((await t.describe()).version).toBe(1);
  });

  it('a bad mode → 400 / 13; a missing table → 404 / 4', async () => {
    const t = await fresh(2);
    expectError(await t.arrow('insert', ipcRows(1, 9), 'mode=upsert'), 400, 13);
    expect(await t.count()).toBe(2);
    expectError(await new TableApi(s, ['wr', 'missing']).arrow('insert', ipcRows(1)), 404, 4);
    expect(await new TableApi(s, ['wr', 'missing']).exists()).toBe(false);
  });

  it('creates a declared table with the inserted rows', async () => {
    const d = new TableApi(s, ['wr', 'declared-insert']);
    expectOk(await d.post('declare'));
    // A declared table has no branches yet.
    expectError(await d.arrow('insert', ipcRows(3), 'branch=dev'), 404, 22);
    expect((await d.describe()).is_only_declared).toBe(true);
    expect(expectOk(await d.arrow('insert', ipcRows(3)))).toEqual({ version: 1, num_inserted_rows: 3 });
    expect(expectOk(await d.arrow('insert', ipcRows(1, 10)))).toEqual({ version: 2, num_inserted_rows: 1 });
    expect(await ids(d)).toEqual([0, 1, 2, 10]);
  });
});

describe('MergeInsertIntoTable', () => {
  it('upserts on one key: matched rows updated, new rows inserted', async () => {
    const t = await fresh(3);
    const res = expectOk(
      await t.arrow('merge_insert', idText([[1, 'one'], [7, 'seven']]), 'on=id&when_matched_update_all=true&when_not_matched_insert_all=true'),
    );
    expect(res).toMatchObject({ version: 2, num_updated_rows: 1, num_inserted_rows: 1, num_deleted_rows: 0 });
    expect(await ids(t)).toEqual([0, 1, 2, 7]);
    expect(await textOf(t, 1)).toBe('one');
  });

  it('`on` repeated once per key column matches on the composite key', async () => {
    const t = await fresh(3);
    // text of row 1 is "banana fruit number 1": (1, that text) matches; (2, "x") does not.
    const src = idText([[1, 'banana fruit number 1'], [2, 'x']]);
    const res = expectOk(await t.arrow('merge_insert', src, 'on=id&on=text&when_not_matched_insert_all=true'));
    expect(res).toMatchObject({ num_inserted_rows: 1, num_updated_rows: 0 });
    expect(await t.count()).toBe(4);
    expect(await t.count('predicate=' + encodeURIComponent("text = 'x'"))).toBe(1);
  });

  it('when_matched_update_all_filt updates only the matches it accepts', async () => {
    const t = await fresh(4);
    const filt = encodeURIComponent('target.id >= 2');
    const res = expectOk(
      await t.arrow('merge_insert', idText([[1, 'u1'], [2, 'u2'], [3, 'u3']]), `on=id&when_matched_update_all=true&when_matched_update_all_filt=${filt}`),
    );
    expect(res).toMatchObject({ num_updated_rows: 2, num_inserted_rows: 0 });
    expect(await textOf(t, 1)).toBe('banana fruit number 1');
    expect(await textOf(t, 2)).toBe('u2');
  });

  it('when_not_matched_by_source_delete (with and without a filter), use_index and timeout', async () => {
    const t = await fresh(6);
    const filt = encodeURIComponent('id < 3');
    const res = expectOk(
      await t.arrow(
        'merge_insert',
        idText([[4, 'keep']]),
        `on=id&when_matched_update_all=true&when_not_matched_by_source_delete=true&when_not_matched_by_source_delete_filt=${filt}&use_index=false&timeout=30s`,
      ),
    );
    expect(res).toMatchObject({ num_updated_rows: 1, num_deleted_rows: 3 });
    expect(await ids(t)).toEqual([3, 4, 5]);
    const all = expectOk(await t.arrow('merge_insert', idText([[5, 'five']]), 'on=id&when_not_matched_by_source_delete=true'));
    expect(all).toMatchObject({ num_deleted_rows: 2 });
    expect(await ids(t)).toEqual([5]);
  });

  it('refusals leave the table unchanged: no clause (13), no `on` (13), bad flag (13), unknown key (12), extra column (20), bad Arrow (13)', async () => {
    const t = await fresh(3);
    expectError(await t.arrow('merge_insert', idText([[1, 'x']]), 'on=id'), 400, 13);
    expectError(await t.arrow('merge_insert', idText([[1, 'x']]), 'when_matched_update_all=true'), 400, 13);
    expectError(await t.arrow('merge_insert', idText([[1, 'x']]), 'on=id&when_matched_update_all=yes'), 400, 13);
    expectError(await t.arrow('merge_insert', idText([[1, 'x']]), 'on=id&timeout=soon&when_matched_update_all=true'), 400, 13);
    expectError(await t.arrow('merge_insert', idText([[1, 'x']]), 'on=nope&when_matched_update_all=true'), 404, 12);
    expectError(await t.arrow('merge_insert', ipcWrongSchema(), 'on=foo&when_not_matched_insert_all=true'), 404, 12);
    const extra = ipcOf(new Table({ id: vectorFromArray([9n], new Int64()), extra: vectorFromArray(['x'], new Utf8()) }));
    expectError(await t.arrow('merge_insert', extra, 'on=id&when_not_matched_insert_all=true'), 400, 20);
    expectError(await t.arrow('merge_insert', Buffer.from('nope'), 'on=id&when_not_matched_insert_all=true'), 400, 13);
    expect(await ids(t)).toEqual([0, 1, 2]);
    expect(await textOf(t, 1)).toBe('banana fruit number 1');
    expect((await t.describe()).version).toBe(1);
  });

  it('into a declared table: inserts everything with insert_all, otherwise only creates the schema', async () => {
    const a = new TableApi(s, ['wr', 'declared-merge']);
    expectOk(await a.post('declare'));
    expect(expectOk(await a.arrow('merge_insert', ipcRows(3), 'on=id&when_not_matched_insert_all=true'))).toEqual({
      version: 1,
      num_updated_rows: 0,
      num_inserted_rows: 3,
      num_deleted_rows: 0,
    });
    expect(await a.count()).toBe(3);

    const b = new TableApi(s, ['wr', 'declared-merge-update']);
    expectOk(await b.post('declare'));
    expectError(await b.arrow('merge_insert', ipcRows(2), 'on=nope&when_matched_update_all=true'), 404, 12);
    expect((await b.describe()).is_only_declared).toBe(true);
    expect(expectOk(await b.arrow('merge_insert', ipcRows(2), 'on=id&when_matched_update_all=true'))).toMatchObject({ num_inserted_rows: 0 });
    expect(await b.count()).toBe(0);
    expect((await b.describe()).schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'text', 'labels', 'vec']);
  });
});

describe('UpdateTable and DeleteFromTable', () => {
  it('update takes [column, SQL expression] pairs and a predicate', async () => {
    const t = await fresh(4);
    const res = expectOk(await t.post('update', { predicate: 'id >= 2', updates: [['text', "concat(text, '!')"], ['id', 'id + 10']] }));
    // Plus what the UPDATE wrote (docs/data-plane.md, "Column-only fills"); the table has no index to lose.
    expect(res).toEqual({ updated_rows: 2, version: 2, bytes_written: expect.any(Number) });
    expect(await ids(t)).toEqual([0, 1, 12, 13]);
    expect(await textOf(t, 12)).toBe('cherry fruit number 2!');
  });

  it('update refusals leave rows unchanged: missing column (12), bad SQL (13), bad shape (13)', async () => {
    const t = await fresh(3);
    expectError(await t.post('update', { updates: [['nope', '1']] }), 404, 12);
    expectError(await t.post('update', { updates: [['text', "'a'"]], predicate: 'nope > 1' }), 404, 12);
    expectError(await t.post('update', { updates: [['text', 'this is not sql )']] }), 400, 13);
    expectError(await t.post('update', { updates: 'text = 1' }), 400, 13);
    expect((await t.rows()).map((r) => r.text)).toEqual(['apple fruit number 0', 'banana fruit number 1', 'cherry fruit number 2']);
    expect((await t.describe()).version).toBe(1);
  });

  it('delete removes the rows its predicate matches; a missing column is 12 and deletes nothing', async () => {
    const t = await fresh(5);
    expect(expectOk(await t.post('delete', { predicate: 'id IN (1, 3)' }))).toMatchObject({ version: 2 });
    expect(await ids(t)).toEqual([0, 2, 4]);
    expectError(await t.post('delete', { predicate: 'nope = 1' }), 404, 12);
    expectError(await t.post('delete', {}), 400, 13);
    expect(await ids(t)).toEqual([0, 2, 4]);
    expectError(await new TableApi(s, ['wr', 'missing']).post('delete', { predicate: 'true' }), 404, 4);
  });
});

describe('RestoreTable', () => {
  it('restores an old version as a new one; a missing version is 11 and changes nothing', async () => {
    const t = await fresh(2);
    expectOk(await t.arrow('insert', ipcRows(3, 10)));
    expect(await t.count()).toBe(5);
    expect(expectOk(await t.post('restore', { version: 1 }))).toEqual({ version: 3 });
    expect(await ids(t)).toEqual([0, 1]);
    expectError(await t.post('restore', { version: 99 }), 404, 11);
    expectError(await t.post('restore', {}), 400, 13);
    expect((await t.describe()).version).toBe(3);
    expect(await t.count()).toBe(2);
  });
});

describe('CountTableRows', () => {
  it('GET answers a bare integer; POST takes a predicate and a version', async () => {
    const t = await fresh(6);
    expectOk(await t.arrow('insert', ipcRows(4, 100)));
    const get = await t.get('count_rows');
    expect(get.headers.get('content-type')).toBe('application/json');
    expect(get.text).toBe('10');
    expect((await t.post('count_rows', { predicate: 'id >= 100' })).text).toBe('4');
    expect((await t.post('count_rows', { version: 1 })).text).toBe('6');
    expect((await t.post('count_rows', { version: 1, predicate: 'id < 2' })).text).toBe('2');
    expect(await t.count('version=1')).toBe(6);
    expectError(await t.post('count_rows', { version: 42 }), 404, 11);
    expectError(await t.post('count_rows', { predicate: 'nope > 1' }), 404, 12);
    expectError(await t.get('count_rows', 'version=abc'), 400, 13);
    expectError(await new TableApi(s, ['wr', 'missing']).get('count_rows'), 404, 4);
  });
});

describe('request limits', () => {
  it('an Arrow body over the limit → 413 / 13 naming the limit and the direct-write path; nothing written', async () => {
    const small = await startTestServer({ RASK_MAX_BODY_BYTES: '4096' });
    try {
      await ensureNamespace(small, 'lim');
      const t = new TableApi(small, ['lim', 'big']);
      const huge = ipcRows(400);
      expect(huge.length).toBeGreaterThan(4096);
      for (const op of ['create', 'insert'] as const) {
        const body = expectError(await t.arrow(op, huge), 413, 13);
        expect(body.error).toMatch(/4096-byte limit/);
        expect(body.error).toMatch(/declare the table and write directly with vended credentials/);
        if (op === 'create') {
          expect(await t.exists()).toBe(false);
          expectOk(await t.arrow('create', ipcOf(rowsTable(2))));
        }
      }
      expect(await t.count()).toBe(2);
    } finally {
      await small.stop();
    }
  });
});
