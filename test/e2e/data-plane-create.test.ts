// @covers CreateTable, DescribeTable, DeclareTable, TableExists
/**
 * CreateTable over raw HTTP: Arrow IPC bodies sent with no Content-Type, `mode` and the
 * JSON-encoded `properties` / `storage_options` in the query. Every refused request is followed
 * by a read proving nothing was written.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Field, Float64, Schema, Table, tableFromArrays, tableToIPC, Utf8 } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcOf, ipcRows, rowsTable } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
const t = (name: string) => new TableApi(s, ['cr', name]);

/** Files (not directories) in any table directory called `dirName` in the warehouse. */
async function filesOf(dirName: string): Promise<string[]> {
  const root = path.join(s.dataDir, 'warehouses');
  // Before any table is written the warehouses directory does not exist: then there are no files.
  if (!existsSync(root)) return [];
  const all = await readdir(root, { recursive: true, withFileTypes: true });
  return all.filter((e) => e.isFile() && path.join(e.parentPath, e.name).includes(`/${dirName}/`)).map((e) => e.name);
}

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'cr');
});
afterAll(() => s?.stop());

describe('CreateTable', () => {
  it('creates from an IPC stream without a content-type and answers version, location, properties', async () => {
    const a = t('a');
    const props = encodeURIComponent(JSON.stringify({ team: 'eng', owner: 'ana' }));
    const res = await a.arrow('create', ipcRows(30), `properties=${props}`);
    const body = expectOk(res);
    expect(body).toMatchObject({ version: 1, properties: { team: 'eng', owner: 'ana' } });
    expect(body).not.toHaveProperty('storage_options');
    expect(body.location).toMatch(/\/a\.lance$/);
    expect(await a.count()).toBe(30);
    const described = await a.describe();
    expect(described).toMatchObject({ location: body.location, version: 1, is_only_declared: false, properties: { team: 'eng' } });
    expect(described.schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'text', 'labels', 'vec']);
  });

  it('accepts the IPC file format and a schema-only stream (an empty table)', async () => {
    expectOk(await t('file').arrow('create', ipcRows(4, 0, 'file')));
    expect(await t('file').count()).toBe(4);
    expectOk(await t('empty').arrow('create', ipcOf(rowsTable(0))));
    expect(await t('empty').count()).toBe(0);
  });

  it("a list column as apache-arrow's tableFromArrays builds it (a child field without a name) is created and read back", async () => {
    // tableFromArrays gives the list's child field a null name; the child is not a column, so
    // its name is not checked (it once reached Buffer.byteLength(null) and answered 500).
    const table = tableFromArrays({ id: Int32Array.from([1, 2]), tags: [[1, 2], [3]] });
    const a = t('unnamed-child');
    expectOk(await a.arrow('create', Buffer.from(tableToIPC(table, 'stream'))));
    expect(await a.count()).toBe(2);
    const rows = await a.rows();
    expect(rows.map((r) => Array.from(r.tags as Iterable<number>))).toEqual([[1, 2], [3]]);
  });

  it('nested unnamed children (lists of lists, lists in structs, structs in lists) are created and read back, never a 5xx', async () => {
    const bodies = {
      grid: tableFromArrays({ id: Int32Array.from([1, 2]), grid: [[[1], [2, 3]], [[4]]] }),
      inStruct: tableFromArrays({ id: Int32Array.from([1, 2]), s: [{ tags: [1, 2] }, { tags: [3] }] }),
      structs: tableFromArrays({ id: Int32Array.from([1, 2]), points: [[{ x: 1 }, { x: 2 }], [{ x: 3 }]] }),
    };
    for (const [name, table] of Object.entries(bodies)) {
      const a = t(`nested-${name}`);
      expectOk(await a.arrow('create', Buffer.from(tableToIPC(table, 'stream'))));
      expect(await a.count()).toBe(2);
    }
  });

  it('mode=create on an existing table → 409 / 5, data unchanged', async () => {
    const a = t('dup');
    expectOk(await a.arrow('create', ipcRows(5)));
    expectError(await a.arrow('create', ipcRows(9, 100)), 409, 5);
    expectError(await a.arrow('create', ipcRows(9, 100), 'mode=Create'), 409, 5);
    expect(await a.count()).toBe(5);
  });

  it('mode=exist_ok returns the existing table untouched; overwrite replaces its data', async () => {
    const a = t('modes');
    expectOk(await a.arrow('create', ipcRows(5), `properties=${encodeURIComponent('{"k":"v"}')}`));
    const kept = expectOk(await a.arrow('create', ipcRows(9, 100), 'mode=exist_ok'));
    expect(kept).toMatchObject({ version: 1, properties: { k: 'v' } });
    expect(await a.count()).toBe(5);
    expect(expectOk(await a.arrow('create', ipcRows(2, 100), 'mode=ExistOk')).version).toBe(1);

    const over = expectOk(await a.arrow('create', ipcRows(7, 200), 'mode=overwrite'));
    expect(over.version).toBe(2);
    expect((await a.rows()).map((r) => r.id)).toEqual([200, 201, 202, 203, 204, 205, 206]);
    // Overwrite and exist_ok on a missing table create it.
    expect(expectOk(await t('over-new').arrow('create', ipcRows(3), 'mode=overwrite')).version).toBe(1);
    expect(await t('over-new').count()).toBe(3);
  });

  it('bad Arrow → 400 / 13 and no table (no registry record, no dataset)', async () => {
    const bad = t('bad-arrow');
    const body = expectError(await bad.arrow('create', Buffer.from('definitely not arrow')), 400, 13);
    expect(body.error).toMatch(/Arrow IPC/);
    expectError(await bad.arrow('create', Buffer.alloc(0)), 400, 13);
    expectError(await bad.arrow('create', Buffer.from(JSON.stringify({ id: 1 }))), 400, 13);
    expect(await bad.exists()).toBe(false);
    expect(await filesOf('bad-arrow.lance')).toEqual([]);
    const listed = expectOk(await s.request('GET', '/v1/namespace/cr/table/list?delimiter=%24'));
    expect(listed.tables).not.toContain('bad-arrow');
  });

  it('data that decodes but LanceDB refuses → 400 / 13, no table and no files left behind', async () => {
    // Decodes as Arrow, but two columns share a name: only the dataset write can refuse it.
    const twice = new Table(new Schema([new Field('x', new Float64()), new Field('x', new Utf8())]), []);
    const w = t('refused');
    const body = expectError(await w.arrow('create', ipcOf(twice)), 400, 13);
    expect(body.error).toBe('duplicate field name "x"');
    expect(await w.exists()).toBe(false);
    expect(await filesOf('refused.lance')).toEqual([]);
    // The name is free.
    expectOk(await w.arrow('create', ipcRows(2)));
    expect(await w.count()).toBe(2);
    expect((await filesOf('refused.lance')).length).toBeGreaterThan(0);
  });

  it('bad mode, properties or storage_options → 400 / 13, nothing created', async () => {
    const x = t('bad-params');
    expectError(await x.arrow('create', ipcRows(2), 'mode=sometimes'), 400, 13);
    expectError(await x.arrow('create', ipcRows(2), 'properties=%7Bnot-json'), 400, 13);
    expectError(await x.arrow('create', ipcRows(2), `properties=${encodeURIComponent('{"k":1}')}`), 400, 13);
    expectError(await x.arrow('create', ipcRows(2), `properties=${encodeURIComponent('["a"]')}`), 400, 13);
    expectError(await x.arrow('create', ipcRows(2), `storage_options=${encodeURIComponent('{"timeout":30}')}`), 400, 13);
    expectError(await x.arrow('create', ipcRows(2), 'mode=create&mode=overwrite'), 400, 13);
    expect(await x.exists()).toBe(false);
  });

  it('a missing namespace → 404 / 1, nothing created', async () => {
    const orphan = new TableApi(s, ['no-such-ns', 'x']);
    expectError(await orphan.arrow('create', ipcRows(2)), 404, 1);
    expectError(await orphan.post('exists'), 404, 4);
  });

  it('writes the data of a declared table into its declared location', async () => {
    const d = t('declared');
    const declared = expectOk(await d.post('declare'));
    expect((await d.describe()).is_only_declared).toBe(true);
    const created = expectOk(await d.arrow('create', ipcRows(6)));
    expect(created.location).toBe(declared.location);
    expect(await d.count()).toBe(6);
    expect((await d.describe()).is_only_declared).toBe(false);
  });

  it('two concurrent creates of one name: exactly one wins, the loser gets 5, the table holds the winner\'s rows', async () => {
    for (let i = 0; i < 6; i++) {
      const r = t(`race${i}`);
      const [a, b] = await Promise.all([r.arrow('create', ipcRows(3)), r.arrow('create', ipcRows(4, 100))]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.json().code).toBe(5);
      expect(await r.count()).toBe(a.status === 200 ? 3 : 4);
      expect((await r.describe()).version).toBe(1);
    }
  });
});
