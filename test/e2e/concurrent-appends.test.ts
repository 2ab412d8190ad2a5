// @covers CreateTableVersion, ListTableVersions
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The guarantee managed versioning exists for: writers on separate connections append to one
 * table at once, the catalog's put-if-absent admits one commit per version, and Lance's retry
 * loop (409 / code 14 → version/describe → reload → retry at v+1) does the rest. No commit is
 * lost and the version numbers have no gaps.
 */
describe('eight official-client connections appending to one managed table', () => {
  let server: TestServer;
  const WRITERS = 8;
  const ROWS_EACH = 5;
  const ns = ['race'];

  beforeAll(async () => {
    server = await startTestServer();
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    await db.createNamespace(ns);
    await db.createTable('events', [{ id: -1, writer: -1 }], ns);
  });
  afterAll(() => server.stop());

  it('lands every row and commits contiguous versions', async () => {
    // Separate connectNamespace calls: nothing is shared between the writers but the catalog.
    const tables = await Promise.all(
      Array.from({ length: WRITERS }, async () =>
        (await lancedb.connectNamespace('rest', { uri: server.url })).openTable('events', ns),
      ),
    );
    await Promise.all(
      tables.map((t, w) => t.add(Array.from({ length: ROWS_EACH }, (_, i) => ({ id: w * 100 + i, writer: w })))),
    );

    const reader = await (await lancedb.connectNamespace('rest', { uri: server.url })).openTable('events', ns);
    expect(await reader.countRows()).toBe(1 + WRITERS * ROWS_EACH);
    const all = await reader.query().select(['id', 'writer']).toArray();
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length); // nothing committed twice
    for (let w = 0; w < WRITERS; w++) expect(all.filter((r) => r.writer === w)).toHaveLength(ROWS_EACH);

    const res = await server.request('POST', '/v1/table/race%24events/version/list?delimiter=%24', 'null');
    const versions = res.json().versions.map((v: { version: number }) => v.version);
    expect(versions).toEqual(Array.from({ length: WRITERS + 1 }, (_, i) => i + 1));
    expect((await reader.listVersions()).map((v) => v.version)).toEqual(versions);
  });
});
