// @covers CountTableRows, QueryTable, InsertIntoTable
/**
 * Kept table handles (lib/adapters/lance/table-handles.ts) on s3://, through LanceDB's own object store
 * talking to the loopback S3 fake: a call on the latest version after the first reuses the open
 * handle instead of reading the manifest again (counted in S3 requests, not timed), and still
 * sees everything other writers did, since each call first brings the kept handle to the latest
 * version (one LIST). Two engines with different credentials stand for two processes: their connections, and so
 * their handles, are separate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import { loadLanceDb } from '../../lib/adapters/lance/lancedb.js';
import { ErrorCode } from '../../lib/errors.js';
import { startAwsHttpFake, type AwsHttpFake } from '../support/aws-http-fake.js';
import { fakeS3StorageOptions, s3Requests, totalRequests } from '../support/s3-data.js';
import { MAX_QUERY_LIMIT } from '../../lib/adapters/lance/query.js';
import { decode, expectCode, ipcRows, ipcWrongSchema, vectorOf } from './fixtures.js';

let s3: AwsHttpFake;
let seq = 0;

beforeAll(async () => {
  s3 = await startAwsHttpFake();
});
afterAll(async () => {
  await s3?.close();
});

const storageOptions = (principal: string) => fakeS3StorageOptions(s3, principal);
const requests = (f: () => Promise<unknown>) => s3Requests(s3, f);
const total = totalRequests;

describe('kept table handles on s3://', () => {
  it('a warm call on the latest version reads no manifest: it reuses the handle the first call opened', async () => {
    const engine = wireEngine(new LanceDataEngine({ storageOptions: storageOptions(`warm${++seq}`) }));
    const location = `s3://wh/tables/${seq}/t.lance`;
    await engine.createTable(location, ipcRows(10), 'create');
    const cold = await requests(() => engine.countRows(location));
    const warm = await requests(() => engine.countRows(location));
    // The first call opens the table (lists the versions, reads the latest manifest); later
    // calls only check for a newer version.
    expect(cold['s3:GetObject']).toBeGreaterThan(0);
    expect(warm['s3:GetObject']).toBeUndefined();
    expect(total(warm)).toBeLessThan(total(cold));
    // A query and an insert on the latest version ride on the same handle, and each checks for a
    // newer version once (a LIST), not before every step: the insert's one other LIST is
    // LanceDB's commit finding the next version number.
    const queried = await requests(() => engine.query(location, { k: 5 }));
    const inserted = await requests(() => engine.insert(location, ipcRows(5, 10)));
    expect(queried['s3:PutObject']).toBeUndefined();
    expect(queried['s3:ListBucket']).toBe(1);
    expect(inserted['s3:PutObject']).toBeGreaterThan(0);
    expect(inserted['s3:ListBucket']).toBe(2);
    expect(warm).toEqual({ 's3:ListBucket': 1 });
    expect(await engine.countRows(location)).toBe(15);
  });

  it('sees what another process committed, and a dataset deleted and written anew at the same location', async () => {
    const mine = wireEngine(new LanceDataEngine({ storageOptions: storageOptions(`mine${++seq}`) }));
    const theirs = wireEngine(new LanceDataEngine({ storageOptions: storageOptions(`theirs${seq}`) }));
    const location = `s3://wh/tables/${seq}/t.lance`;
    await mine.createTable(location, ipcRows(10), 'create');
    expect(await mine.countRows(location)).toBe(10);
    await theirs.insert(location, ipcRows(5, 10));
    expect(await mine.countRows(location)).toBe(15);
    expect(await mine.countRows(location, { predicate: 'id >= 10' })).toBe(5);

    // Dropped by someone else: the kept handle fails the call (and is dropped with it) …
    const other = await loadLanceDb().connect(`s3://wh/tables/${seq}`, { storageOptions: storageOptions(`theirs${seq}`) });
    await other.dropTable('t');
    await expectCode(mine.countRows(location), ErrorCode.TableNotFound);
    // … and a new dataset there is read afresh: its one version, its rows.
    await theirs.createTable(location, ipcRows(3, 100), 'create');
    expect(await mine.countRows(location)).toBe(3);
    expect(await mine.countRows(location, { predicate: 'id >= 100' })).toBe(3);
  });

  it('a request refused for its own input keeps the handle; a call LanceDB fails drops it', async () => {
    const engine = wireEngine(new LanceDataEngine({ storageOptions: storageOptions(`bad${++seq}`) }));
    const location = `s3://wh/tables/${seq}/t.lance`;
    await engine.createTable(location, ipcRows(10), 'create');
    await engine.countRows(location); // the kept handle is open
    const refused = await requests(() =>
      Promise.all([
        expectCode(engine.query(location, { k: -1 }), ErrorCode.InvalidInput),
        expectCode(engine.insert(location, ipcWrongSchema()), ErrorCode.TableSchemaValidationError),
      ]),
    );
    expect(refused['s3:PutObject']).toBeUndefined();
    // Still the kept handle: a warm count, one LIST, no manifest read.
    expect(await requests(() => engine.countRows(location))).toEqual({ 's3:ListBucket': 1 });
    // A filter LanceDB itself refuses fails inside LanceDB: that handle is dropped and reopened.
    await expect(engine.countRows(location, { predicate: 'no_such_column > 1' })).rejects.toThrow();
    const reopened = await requests(() => engine.countRows(location));
    expect(reopened['s3:GetObject']).toBeGreaterThan(0);
    expect(await engine.countRows(location)).toBe(10);
  });

  it('a read of an older version opens a handle of its own: the kept one stays on the latest', async () => {
    const engine = wireEngine(new LanceDataEngine({ storageOptions: storageOptions(`tt${++seq}`) }));
    const location = `s3://wh/tables/${seq}/t.lance`;
    await engine.createTable(location, ipcRows(10), 'create');
    expect(await engine.countRows(location)).toBe(10);
    await engine.insert(location, ipcRows(5, 10));
    expect(await engine.countRows(location, { version: 1 })).toBe(10);
    expect(await engine.countRows(location)).toBe(15);
    await engine.insert(location, ipcRows(5, 15));
    expect(await engine.countRows(location)).toBe(20);
  });
});

describe('vector searches on s3://', () => {
  it('a search clamped to the row count costs no request more than a small one, and both answer the same rows', async () => {
    const engine = wireEngine(new LanceDataEngine({ storageOptions: storageOptions(`search${++seq}`) }));
    const location = `s3://wh/tables/${seq}/t.lance`;
    await engine.createTable(location, ipcRows(20), 'create');
    const search = (k: number) => engine.query(location, { vector: vectorOf(3), k });
    await search(5); // warm: the kept handle is open
    let small: Buffer | undefined;
    let large: Buffer | undefined;
    const few = await requests(async () => (small = await search(5)));
    // k = 2^31 - 1 would allocate its top-k buffer up front; the clamp's row count is read from
    // the manifest the handle holds.
    const many = await requests(async () => (large = await search(MAX_QUERY_LIMIT)));
    expect(many).toEqual(few);
    // One check for a newer version per call.
    expect(few['s3:ListBucket']).toBe(1);
    const ids = (b: Buffer) => decode(b).toArray().map((r) => Number(r.id));
    expect(ids(small!)).toHaveLength(5);
    expect(ids(large!)).toHaveLength(20);
    expect(ids(large!).slice(0, 5)).toEqual(ids(small!));
  });
});
