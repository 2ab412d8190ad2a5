// @covers AlterTableAddColumns, AlterTableAlterColumns, AlterTableDropColumns, UpdateFieldMetadata, UpdateTableSchemaMetadata, DescribeTable
/**
 * Schema evolution and metadata over raw HTTP, DescribeTable's detailed metadata, and the data
 * operations the pinned SDK cannot serve (code 0 with a reason). Refusals re-read the schema to
 * prove it is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcRows } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
let seq = 0;

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'sc');
});
afterAll(() => s?.stop());

async function fresh(n = 5): Promise<TableApi> {
  const t = new TableApi(s, ['sc', `t${++seq}`]);
  expectOk(await t.arrow('create', ipcRows(n)));
  return t;
}

type JsonField = { name: string; nullable: boolean; type: { type: string }; metadata?: Record<string, string> };
const fields = async (t: TableApi): Promise<JsonField[]> => (await t.describe()).schema.fields;
const names = async (t: TableApi) => (await fields(t)).map((f) => f.name);

describe('DescribeTable with load_detailed_metadata', () => {
  it('opens the dataset: table, namespace, version and JSON Arrow schema', async () => {
    const t = await fresh(3);
    const d = await t.describe();
    expect(d).toMatchObject({ table: t.id[1], namespace: ['sc'], version: 1, is_only_declared: false });
    expect(d.schema.fields[0]).toEqual({ name: 'id', nullable: false, type: { type: 'int64' } });
    expect(d.schema.fields[3].type).toMatchObject({ type: 'fixed_size_list', length: 8 });
    const plain = expectOk(await t.post('describe'));
    expect(plain.schema).toBeUndefined();
    expect(plain.version).toBeUndefined();
  });
});

describe('columns', () => {
  it('adds columns from SQL expressions', async () => {
    const t = await fresh(3);
    expect(expectOk(await t.post('add_columns', { new_columns: [{ name: 'double', expression: 'id * 2' }, { name: 'tag', expression: "'x'" }] }))).toEqual({
      version: 2,
    });
    expect((await t.rows()).map((r) => [r.double, r.tag])).toEqual([
      [0, 'x'],
      [2, 'x'],
      [4, 'x'],
    ]);
  });

  it('alters columns: rename, nullability and a type cast', async () => {
    const t = await fresh(3);
    const res = await t.post('alter_columns', {
      alterations: [
        { path: 'text', rename: 'label' },
        { path: 'id', nullable: true },
      ],
    });
    expect(expectOk(res)).toEqual({ version: 2 });
    expectOk(await t.post('add_columns', { new_columns: [{ name: 'f', expression: 'cast(id as double)' }] }));
    expectOk(await t.post('alter_columns', { alterations: [{ path: 'f', data_type: { type: 'float32' } }] }));
    const after = await fields(t);
    expect(after.map((f) => f.name)).toEqual(['id', 'label', 'labels', 'vec', 'f']);
    expect(after[0].nullable).toBe(true);
    expect(after[4].type.type).toBe('float32');
  });

  it('drops columns', async () => {
    const t = await fresh(3);
    expect(expectOk(await t.post('drop_columns', { columns: ['labels', 'text'] }))).toEqual({ version: 2 });
    expect(await names(t)).toEqual(['id', 'vec']);
    expect((await t.rows()).map((r) => Object.keys(r).sort())[0]).toEqual(['id', 'vec']);
  });

  it('refusals leave the schema unchanged: missing column (12), bad expression or type (13)', async () => {
    const t = await fresh(3);
    const before = await t.describe();
    expectError(await t.post('drop_columns', { columns: ['nope'] }), 404, 12);
    expectError(await t.post('alter_columns', { alterations: [{ path: 'nope', rename: 'x' }] }), 404, 12);
    expectError(await t.post('add_columns', { new_columns: [{ name: 'bad', expression: 'nope + 1' }] }), 404, 12);
    expectError(await t.post('add_columns', { new_columns: [{ name: 'bad', expression: 'id +* )' }] }), 400, 13);
    expectError(await t.post('alter_columns', { alterations: [{ path: 'id', data_type: { type: 'no-such-type' } }] }), 400, 13);
    expectError(await t.post('drop_columns', { columns: [] }), 400, 13);
    const after = await t.describe();
    expect(after.schema).toEqual(before.schema);
    expect(after.version).toBe(before.version);
  });
});

describe('UpdateFieldMetadata', () => {
  it('merges field metadata, null deleting a key; a missing field is 12 and changes nothing', async () => {
    const t = await fresh(2);
    const res = expectOk(await t.post('update_field_metadata', { updates: [{ path: 'text', metadata: { unit: 'words', pii: 'no' } }] }));
    expect(res).toEqual({ version: 2, fields: { text: { unit: 'words', pii: 'no' } } });
    expectOk(await t.post('update_field_metadata', { updates: [{ path: 'text', metadata: { pii: null } }] }));
    expect((await fields(t))[1].metadata).toEqual({ unit: 'words' });
    expectError(await t.post('update_field_metadata', { updates: [{ path: 'nope', metadata: { a: 'b' } }] }), 404, 12);
    expectError(await t.post('update_field_metadata', { updates: [{ path: 'text', metadata: { a: 1 } }] }), 400, 13);
    expect((await fields(t))[1].metadata).toEqual({ unit: 'words' });
  });
});

describe('UpdateTableSchemaMetadata', () => {
  const update = (t: TableApi, map: Record<string, unknown>) =>
    s.request('POST', t.path('schema_metadata/update'), JSON.stringify(map), { 'content-type': 'application/json' });

  it('takes a bare map, MERGES it, null deletes a key, and answers the full map', async () => {
    const t = await fresh(2);
    expect(expectOk(await update(t, { description: 'fruit rows', owner: 'ana' }))).toEqual({ description: 'fruit rows', owner: 'ana' });
    expect(expectOk(await update(t, { team: 'eng', owner: 'bo' }))).toEqual({ description: 'fruit rows', owner: 'bo', team: 'eng' });
    expect(expectOk(await update(t, { owner: null, never_set: null }))).toEqual({ description: 'fruit rows', team: 'eng' });
    // "id" is an ordinary key in a bare map, not the request's id.
    expect(expectOk(await update(t, { id: 'ext-42' }))).toMatchObject({ id: 'ext-42' });
    const d = await t.describe();
    expect(d.metadata).toEqual({ description: 'fruit rows', team: 'eng', id: 'ext-42' });
    expect(d.schema.metadata).toEqual(d.metadata);
  });

  it('never rewrites or re-commits the data: the dataset version stays the same', async () => {
    const t = await fresh(3);
    const before = await t.describe();
    expectOk(await update(t, { k: 'v' }));
    const after = await t.describe();
    expect(after.version).toBe(before.version);
    expect(await t.count()).toBe(3);
  });

  it('overlays and deletes keys the dataset itself carries', async () => {
    const t = new TableApi(s, ['sc', 'own-meta']);
    // Arrow schema metadata written with the data.
    const { rowsTable, ipcOf } = await import('../data/fixtures.js');
    expectOk(await t.arrow('create', ipcOf(rowsTable(2, 0, new Map([['source', 'import'], ['format', 'v1']])))));
    expect((await t.describe()).metadata).toEqual({ source: 'import', format: 'v1' });
    expect(expectOk(await update(t, { format: 'v2', source: null }))).toEqual({ format: 'v2' });
    expect((await t.describe()).metadata).toEqual({ format: 'v2' });
  });

  it('accepts the wrapped request model too', async () => {
    const t = await fresh(1);
    expect(expectOk(await t.post('schema_metadata/update', { metadata: { a: '1' } }))).toEqual({ a: '1' });
  });

  it('refusals change nothing: non-string value (13), branch (0), missing table (4)', async () => {
    const t = await fresh(1);
    expectOk(await update(t, { keep: 'me' }));
    expectError(await update(t, { n: 1 }), 400, 13);
    expectError(await update(t, { nested: { a: 'b' }, also: 'x' }), 400, 13);
    expectError(
      await s.request('POST', t.path('schema_metadata/update', 'branch=dev'), JSON.stringify({ k: 'v' })),
      406,
      0,
    );
    expect((await t.describe()).metadata).toEqual({ keep: 'me' });
    expectError(await update(new TableApi(s, ['sc', 'nope']), { a: 'b' }), 404, 4);
  });

  it('concurrent updates of different keys all land (compare-and-swap on the record)', async () => {
    const t = await fresh(1);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => update(t, { [`k${i}`]: String(i) })));
    for (const r of results) expect(r.status, r.text).toBe(200);
    expect((await t.describe()).metadata).toEqual(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, String(i)])));
  });

  it('applies to a declared table, which has no dataset yet', async () => {
    const d = new TableApi(s, ['sc', 'declared']);
    expectOk(await d.post('declare'));
    expect(expectOk(await update(d, { description: 'soon' }))).toEqual({ description: 'soon' });
    expect(await d.describe()).toMatchObject({ is_only_declared: true, metadata: { description: 'soon' } });
    expectOk(await d.arrow('insert', ipcRows(2)));
    expect((await d.describe()).metadata).toEqual({ description: 'soon' });
  });
});

describe('operations the pinned LanceDB 0.31.0 cannot serve', () => {
  it('answer 406 / 0 with the reason, and change nothing', async () => {
    const t = await fresh(2);
    const cases: [string, string, RegExp][] = [
      ['/v1/materialized_view/sc%24mv/create?delimiter=%24', '{}', /CreateMaterializedView is not supported: .*no materialized views/],
      ['/v1/materialized_view/sc%24mv/refresh?delimiter=%24', '{}', /RefreshMaterializedView is not supported: .*no materialized views/],
    ];
    for (const [path, body, reason] of cases) {
      expect(expectError(await s.request('POST', path, body), 406, 0).error).toMatch(reason);
    }
    expect((await t.describe()).version).toBe(1);
    expect(await new TableApi(s, ['sc', 'mv']).exists()).toBe(false);
  });
});
