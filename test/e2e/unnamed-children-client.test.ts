// @covers CreateTable, InsertIntoTable, QueryTable
/**
 * Issue 26 item 2 through the official client: a list column as apache-arrow's own
 * `tableFromArrays` builds it gives the list's child field a null name, which once reached
 * `checkFieldName` as `Buffer.byteLength(null)` and answered 500. The child is not a column
 * (nothing addresses it by name), so the table is created, and the official client opens,
 * appends to and reads it.
 * test/e2e/data-plane-create.test.ts sends the same body as raw Arrow IPC, and
 * test/data/arrow.test.ts refuses an unnamed *struct* child (a column without a name: 400 / 13);
 * the official client refuses that one itself, before it sends anything.
 */
import * as lancedb from '@lancedb/lancedb';
import { tableFromArrays, tableFromIPC, tableToIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

describe("apache-arrow's tableFromArrays through the official client", () => {
  let s: TestServer;
  let db: lancedb.Connection;

  beforeAll(async () => {
    s = await startTestServer();
    db = await lancedb.connectNamespace('rest', { uri: s.url });
    await db.createNamespace(['kids']);
  });
  afterAll(() => s?.stop());

  it("the official client cannot send it itself; created over HTTP, the client opens it, appends and reads every list back", async () => {
    const data = tableFromArrays({ id: Int32Array.from([1, 2]), tags: [[1, 2], [3]] });
    const ipc = Buffer.from(tableToIPC(data, 'stream'));
    // What makes this body special: on the wire the list's child has no name (null once decoded).
    expect(tableFromIPC(ipc).schema.fields[1].type.children[0].name).toBeNull();
    // LanceDB 0.31's client refuses the table before sending it (its sanitizer wants a string
    // name), so the body goes as raw Arrow IPC, as another client would send it.
    await expect(db.createTable('refused', tableFromIPC(ipc), ['kids'])).rejects.toThrow(/non-string `name`/);
    const created = await s.request('POST', '/v1/table/kids%24tags/create?delimiter=%24', ipc);
    expect(created.status, created.text).toBe(200);
    const table = await db.openTable('tags', ['kids']);
    await table.add([{ id: 3, tags: [4, 5, 6] }]);
    expect(await table.countRows()).toBe(3);
    const rows = (await table.query().toArray()).sort((a, b) => a.id - b.id);
    expect(rows.map((r) => Array.from(r.tags as Iterable<number>))).toEqual([[1, 2], [3], [4, 5, 6]]);
  });

});
