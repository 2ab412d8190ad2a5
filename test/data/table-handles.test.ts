// @covers CountTableRows, QueryTable, InsertIntoTable
/**
 * Kept table handles (lib/data/table-handles.ts) on s3://, through LanceDB's own object store
 * talking to the loopback S3 fake: a call on the latest version after the first reuses the open
 * handle instead of reading the manifest again (counted in S3 requests, not timed), and still
 * sees everything other writers did, since the connection checks for a newer version on every
 * call. Two engines with different credentials stand for two processes: their connections, and so
 * their handles, are separate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LanceDataEngine } from '../../lib/data/engine.js';
import { loadLanceDb } from '../../lib/data/lancedb.js';
import { ErrorCode } from '../../lib/errors.js';
import { startAwsHttpFake, type AwsHttpFake } from '../support/aws-http-fake.js';
import { expectCode, ipcRows } from './fixtures.js';

let s3: AwsHttpFake;
let seq = 0;

beforeAll(async () => {
  s3 = await startAwsHttpFake();
});
afterAll(async () => {
  await s3?.close();
});

function storageOptions(principal: string): Record<string, string> {
  const key = s3.principal(principal);
  return {
    aws_access_key_id: key.accessKeyId,
    aws_secret_access_key: key.secretAccessKey,
    aws_region: 'us-east-1',
    aws_endpoint: s3.endpoint,
    allow_http: 'true',
    aws_virtual_hosted_style_request: 'false',
  };
}

/** The S3 requests `f` makes, by action. */
async function requests(f: () => Promise<unknown>): Promise<Record<string, number>> {
  const from = s3.calls.length;
  await f();
  const by: Record<string, number> = {};
  for (const c of s3.calls.slice(from)) by[c.action] = (by[c.action] ?? 0) + 1;
  return by;
}
const total = (by: Record<string, number>) => Object.values(by).reduce((a, b) => a + b, 0);

describe('kept table handles on s3://', () => {
  it('a warm call on the latest version reads no manifest: it reuses the handle the first call opened', async () => {
    const engine = new LanceDataEngine({ storageOptions: storageOptions(`warm${++seq}`) });
    const location = `s3://wh/tables/${seq}/t.lance`;
    await engine.createTable(location, ipcRows(10), 'create');
    const cold = await requests(() => engine.countRows(location));
    const warm = await requests(() => engine.countRows(location));
    // The first call opens the table (lists the versions, reads the latest manifest); later
    // calls only check for a newer version.
    expect(cold['s3:GetObject']).toBeGreaterThan(0);
    expect(warm['s3:GetObject']).toBeUndefined();
    expect(total(warm)).toBeLessThan(total(cold));
    // A query and an insert on the latest version ride on the same handle.
    const queried = await requests(() => engine.query(location, { k: 5 }));
    const inserted = await requests(() => engine.insert(location, ipcRows(5, 10)));
    expect(queried['s3:PutObject']).toBeUndefined();
    expect(inserted['s3:PutObject']).toBeGreaterThan(0);
    expect(await engine.countRows(location)).toBe(15);
  });

  it('sees what another process committed, and a dataset deleted and written anew at the same location', async () => {
    const mine = new LanceDataEngine({ storageOptions: storageOptions(`mine${++seq}`) });
    const theirs = new LanceDataEngine({ storageOptions: storageOptions(`theirs${seq}`) });
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

  it('a read of an older version opens a handle of its own: the kept one stays on the latest', async () => {
    const engine = new LanceDataEngine({ storageOptions: storageOptions(`tt${++seq}`) });
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
