// @covers ListTableTags, GetTableTagVersion, CreateTableTag, UpdateTableTag, DeleteTableTag, ListTableBranches, CreateTableBranch, DeleteTableBranch
/**
 * Tags and branches over raw HTTP, plus branch selection on writes and reads. Refusals re-read
 * the tag or branch list to prove nothing changed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ipcRows } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
let t: TableApi;
let seq = 0;

beforeAll(async () => {
  s = await startTestServer();
  await ensureNamespace(s, 'rf');
});
// Each test gets its own table with two versions (10 rows, then 15), so it runs alone and in any order.
beforeEach(async () => {
  t = new TableApi(s, ['rf', `rows${++seq}`]);
  expectOk(await t.arrow('create', ipcRows(10))); // version 1
  expectOk(await t.arrow('insert', ipcRows(5, 100))); // version 2
});
afterAll(() => s?.stop());

const tags = async () => expectOk(await t.get('tags/list')).tags as Record<string, { version: number }>;
const branches = async () => Object.keys(expectOk(await t.post('branches/list')).branches).sort();

describe('tags', () => {
  it('creates, lists (GET as the client does, and POST), resolves, moves and deletes a tag', async () => {
    expect(expectOk(await t.post('tags/create', { tag: 'v1', version: 1 }), 200)).toEqual({});
    expectOk(await t.post('tags/create', { tag: 'v2', version: 2 }));
    expect(await tags()).toMatchObject({ v1: { version: 1 }, v2: { version: 2 } });
    expect(expectOk(await t.post('tags/list')).tags).toMatchObject({ v1: { version: 1 } });
    const page = expectOk(await t.get('tags/list', 'limit=1'));
    expect(Object.keys(page.tags)).toEqual(['v1']);
    expect(page.page_token).toBe('v1');
    expect(Object.keys(expectOk(await t.get('tags/list', 'page_token=v1')).tags)).toEqual(['v2']);

    expect(expectOk(await t.post('tags/version', { tag: 'v1' }))).toEqual({ version: 1 });
    expect(expectOk(await t.post('tags/update', { tag: 'v1', version: 2 }))).toEqual({});
    expect(expectOk(await t.post('tags/version', { tag: 'v1' }))).toEqual({ version: 2 });
    expect(expectOk(await t.post('tags/delete', { tag: 'v1' }))).toEqual({});
    expect(Object.keys(await tags())).toEqual(['v2']);
  });

  it('a tag selects a snapshot for reads', async () => {
    expectOk(await t.post('tags/create', { tag: 'first', version: 1 }));
    expect((await t.post('count_rows', { tag: 'first' })).text).toBe('10');
    expect((await t.post('count_rows', {})).text).toBe('15');
  });

  it('refusals leave the tags unchanged: missing tag (8), duplicate (9), missing version (11)', async () => {
    expectOk(await t.post('tags/create', { tag: 'v2', version: 2 }));
    const before = await tags();
    expect(Object.keys(before)).toEqual(['v2']);
    expectError(await t.post('tags/version', { tag: 'nope' }), 404, 8);
    expectError(await t.post('tags/update', { tag: 'nope', version: 1 }), 404, 8);
    expectError(await t.post('tags/delete', { tag: 'nope' }), 404, 8);
    expectError(await t.post('tags/create', { tag: 'v2', version: 1 }), 409, 9);
    expectError(await t.post('tags/create', { tag: 'future', version: 99 }), 404, 11);
    expectError(await t.post('tags/update', { tag: 'v2', version: 99 }), 404, 11);
    expectError(await t.post('tags/create', { tag: 'x' }), 400, 13);
    expectError(await t.post('count_rows', { tag: 'nope' }), 404, 8);
    expect(await tags()).toEqual(before);
  });
});

describe('branches', () => {
  it('creates a branch whose writes stay on it, lists and deletes it', async () => {
    expect(expectOk(await t.post('branches/create', { name: 'dev' }))).toEqual({});
    expectOk(await t.arrow('insert', ipcRows(3, 500), 'branch=dev'));
    expect((await t.post('count_rows', { branch: 'dev' })).text).toBe('18');
    expect(await t.count()).toBe(15);
    expect((await t.rows({ branch: 'dev', filter: 'id >= 500' })).map((r) => r.id)).toEqual([500, 501, 502]);

    expectOk(await t.post('branches/create', { name: 'old', from_version: 1 }));
    expect((await t.post('count_rows', { branch: 'old' })).text).toBe('10');
    const listed = expectOk(await t.post('branches/list', {}, 'limit=1'));
    expect(Object.keys(listed.branches)).toEqual(['dev']);
    expect(listed.page_token).toBe('dev');
    expect(expectOk(await t.post('branches/list')).branches.old).toMatchObject({ parentVersion: 1 });

    expect(expectOk(await t.post('branches/delete', { name: 'old' }))).toEqual({});
    expect(await branches()).toEqual(['dev']);
  });

  it('refusals leave the branches unchanged: missing branch (22), duplicate (23), missing version (11)', async () => {
    expectOk(await t.post('branches/create', { name: 'dev' }));
    const before = await branches();
    expect(before).toEqual(['dev']);
    expectError(await t.post('branches/delete', { name: 'nope' }), 404, 22);
    expectError(await t.post('branches/create', { name: 'dev' }), 409, 23);
    expectError(await t.post('branches/create', { name: 'x', from_branch: 'nope' }), 404, 22);
    expectError(await t.post('branches/create', { name: 'y', from_version: 99 }), 404, 11);
    expectError(await t.post('count_rows', { branch: 'nope' }), 404, 22);
    expectError(await t.arrow('insert', ipcRows(1, 900), 'branch=nope'), 404, 22);
    expect(await branches()).toEqual(before);
    expect(await t.count()).toBe(15);
  });
});
