// @covers DeclareTable, DescribeTable, ListTables, ListTableVersions, CreateTableVersion, DescribeTableVersion, BatchDeleteTableVersions
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Tables through LanceDB's official REST client against the real local server. Managed
 * versioning is on (the default), so every commit below went through version/create and every
 * open through version/list: the catalog arbitrated all of them.
 */
describe('tables via connectNamespace("rest") with managed versioning', () => {
  let server: TestServer;
  let db: lancedb.Connection;
  const ns = ['shop'];
  const rows = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, 0, 0, 1], label: `row-${from + i}` }));

  /** The server's own answer for the table's versions (ascending). */
  async function serverVersions(name: string): Promise<number[]> {
    const id = encodeURIComponent(['shop', name].join('$')).replace(/%20/g, '+');
    const res = await server.request('POST', `/v1/table/${id}/version/list?delimiter=%24`, 'null', {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(200);
    return res.json().versions.map((v: { version: number }) => v.version);
  }

  async function tableDir(name: string): Promise<string> {
    const id = encodeURIComponent(['shop', name].join('$')).replace(/%20/g, '+');
    const res = await server.request('POST', `/v1/table/${id}/describe?delimiter=%24`, JSON.stringify({ id: ['shop', name] }));
    return res.json().location;
  }

  beforeAll(async () => {
    server = await startTestServer();
    db = await lancedb.connectNamespace('rest', { uri: server.url });
    await db.createNamespace(ns);
  });
  afterAll(() => server.stop());

  /**
   * Each test builds the table it needs under a name of its own (so it runs alone and in any
   * order): `items` is 10 rows at version 1, then 5 more appended from another handle at version 2.
   */
  let seq = 0;
  async function items(): Promise<string> {
    const name = `items${++seq}`;
    await db.createTable(name, rows(0, 10), ns);
    const other = await (await lancedb.connectNamespace('rest', { uri: server.url })).openTable(name, ns);
    await other.add(rows(10, 5));
    return name;
  }

  it('creates a table with rows and counts them', async () => {
    const name = `created${++seq}`;
    const t = await db.createTable(name, rows(0, 10), ns);
    expect(await t.countRows()).toBe(10);
    expect(await serverVersions(name)).toEqual([1]);
    expect(await db.tableNames(ns)).toContain(name);
  });

  it('opens the table on another handle and appends; the first handle sees it', async () => {
    const name = `appended${++seq}`;
    await db.createTable(name, rows(0, 10), ns);
    const other = await (await lancedb.connectNamespace('rest', { uri: server.url })).openTable(name, ns);
    await other.add(rows(10, 5));
    expect(await other.countRows()).toBe(15);
    const again = await db.openTable(name, ns);
    expect(await again.countRows()).toBe(15);
    expect(await serverVersions(name)).toEqual([1, 2]);
  });

  it('answers a vector search', async () => {
    const t = await db.openTable(await items(), ns);
    const hits = await t.vectorSearch([12, 0, 0, 1]).limit(3).toArray();
    expect(hits[0]).toMatchObject({ id: 12, label: 'row-12' });
    // 11 and 13 are equally far; their order is not ours to fix.
    expect(hits.map((h) => h.id).sort((a, b) => a - b)).toEqual([11, 12, 13]);
  });

  it('lists the versions the catalog committed', async () => {
    const name = await items();
    const t = await db.openTable(name, ns);
    const versions = (await t.listVersions()).map((v) => v.version);
    expect(versions).toEqual([1, 2]);
    expect(versions).toEqual(await serverVersions(name));
  });

  it('checks out an older version and back', async () => {
    const t = await db.openTable(await items(), ns);
    await t.checkout(1);
    expect(await t.countRows()).toBe(10);
    await t.checkoutLatest();
    expect(await t.countRows()).toBe(15);
  });

  it('creates a tag, which then protects its version from BatchDeleteTableVersions', async () => {
    const name = await items();
    const t = await db.openTable(name, ns);
    const tags = await t.tags();
    await tags.create('launch', 1);
    expect(await tags.getVersion('launch')).toBe(1);
    expect(Object.keys(await tags.list())).toEqual(['launch']);
    await t.checkout('launch');
    expect(await t.countRows()).toBe(10);

    const res = await server.request(
      'POST',
      `/v1/table/shop%24${name}/version/delete?delimiter=%24`,
      JSON.stringify({ id: ['shop', name], ranges: [{ start_version: 1, end_version: 2 }] }),
    );
    expect(res.status).toBe(409);
    expect(res.json()).toMatchObject({ code: 19 });
    expect(res.json().error).toMatch(/launch/);
    expect(await serverVersions(name)).toEqual([1, 2]);
  });

  it('leaves each staging file beside its final manifest (the orphan scan takes them), and the client reads on', async () => {
    const name = await items();
    const files = await readdir(path.join(await tableDir(name), '_versions'));
    const finals = files.filter((f) => f.endsWith('.manifest'));
    expect(finals).toHaveLength(2);
    // No DELETE on the commit path (docs/managed-versioning.md, step 5): each commit's staging
    // file stays, named after a committed manifest, and no reader takes it for a version.
    const staged = files.filter((f) => /\.manifest-/.test(f));
    expect(staged).toHaveLength(2);
    for (const f of staged) expect(finals).toContain(f.slice(0, f.indexOf('.manifest-') + '.manifest'.length));
    const t = await db.openTable(name, ns);
    expect(await t.countRows()).toBe(15);
    expect((await t.listVersions()).map((v) => v.version)).toEqual([1, 2]);
  });

  it('answers already exists for an existing name', async () => {
    const name = await items();
    await expect(db.createTable(name, rows(0, 1), ns)).rejects.toThrow(/already exists/i);
    expect(await (await db.openTable(name, ns)).countRows()).toBe(15);
  });

  it('handles table names containing spaces', async () => {
    const name = `my table ${++seq}`;
    const t = await db.createTable(name, rows(100, 3), ns);
    await t.add(rows(103, 2));
    expect(await (await db.openTable(name, ns)).countRows()).toBe(5);
    expect(await db.tableNames(ns)).toContain(name);
    expect(await serverVersions(name)).toEqual([1, 2]);
  });
});
