/**
 * mapLanceError against errors really thrown by LanceDB 0.31.0: each case provokes the failure
 * with the library and checks the spec code it maps to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadArrow } from '../../lib/data/arrow.js';
import { cleanLanceMessage, mapLanceError, type MapContext } from '../../lib/adapters/lance/errors.js';
import { type Connection, loadLanceDb, type Table } from '../../lib/adapters/lance/lancedb.js';
import { CatalogError, ErrorCode, InternalError, TableTagNotFoundError } from '../../lib/errors.js';
import { ipcRows, ipcWrongSchema, tempRoot } from './fixtures.js';

const lancedb = loadLanceDb();
const arrow = loadArrow();
const { root, cleanup } = tempRoot('rask-errors-');
let db: Connection;
let table: Table;

beforeAll(async () => {
  db = await lancedb.connect(root, { readConsistencyInterval: 0 });
  // Decoded with the CJS copy, as the engine does.
  table = await db.createTable('t', arrow.tableFromIPC(ipcRows(50)));
  await table.createIndex('id', { config: lancedb.Index.btree(), name: 'id_idx' });
  await (await table.tags()).create('v1', 1);
  await (await table.branches()).create('dev');
});

afterAll(() => {
  table?.close();
  cleanup();
});

/** Runs `provoke`, which must fail, and returns the mapped error. */
async function mapped(provoke: () => Promise<unknown>, context?: MapContext): Promise<CatalogError> {
  try {
    await provoke();
  } catch (err) {
    expect(err).not.toBeInstanceOf(CatalogError);
    return mapLanceError(err, context);
  }
  throw new Error('expected LanceDB to fail');
}

describe('mapLanceError on real LanceDB 0.31.0 failures', () => {
  it.each<[string, number, () => Promise<unknown>]>([
    ['missing table', ErrorCode.TableNotFound, () => db.openTable('nope')],
    ['existing table', ErrorCode.TableAlreadyExists, () => db.createTable('t', arrow.tableFromIPC(ipcRows(1)))],
    ['dropping a missing index', ErrorCode.TableIndexNotFound, () => table.dropIndex('nope')],
    [
      'an index name in use',
      ErrorCode.TableIndexAlreadyExists,
      () => table.createIndex('id', { config: lancedb.Index.btree(), name: 'id_idx', replace: false }),
    ],
    ['a missing tag', ErrorCode.TableTagNotFound, async () => (await table.tags()).getVersion('nope')],
    ['checking out a missing tag', ErrorCode.TableTagNotFound, () => table.checkout('nope')],
    ['a duplicate tag', ErrorCode.TableTagAlreadyExists, async () => (await table.tags()).create('v1', 1)],
    ['opening a missing version', ErrorCode.TableVersionNotFound, () => db.openTable('t', undefined, { version: 99 })],
    ['tagging a missing version', ErrorCode.TableVersionNotFound, async () => (await table.tags()).create('x', 99)],
    ['a missing column in a filter', ErrorCode.TableColumnNotFound, () => table.countRows('zzz > 1')],
    ['dropping a missing column', ErrorCode.TableColumnNotFound, () => table.dropColumns(['zzz'])],
    ['altering a missing column', ErrorCode.TableColumnNotFound, () => table.alterColumns([{ path: 'zzz', rename: 'y' }])],
    [
      'field metadata of a missing column',
      ErrorCode.TableColumnNotFound,
      () => table.updateFieldMetadata([{ path: 'zzz', metadata: { a: 'b' } }]),
    ],
    ['indexing a missing column', ErrorCode.TableColumnNotFound, () => table.createIndex('zzz')],
    ['updating a missing column', ErrorCode.TableColumnNotFound, () => table.update({ valuesSql: { zzz: '1' } })],
    [
      'a missing merge key',
      ErrorCode.TableColumnNotFound,
      () => table.mergeInsert('zzz').whenMatchedUpdateAll().execute(arrow.tableFromIPC(ipcRows(1))),
    ],
    ['bad SQL', ErrorCode.InvalidInput, () => table.countRows('id >>> (')],
    ['a bad distance type', ErrorCode.InvalidInput, () => table.query().nearestTo([1, 2, 3, 4, 5, 6, 7, 8]).distanceType('manhattan' as 'l2').toArrow()],
    ['a vector of the wrong dimension', ErrorCode.InvalidInput, () => table.query().nearestTo([1, 2, 3]).toArrow()],
    ['a merge insert that does nothing', ErrorCode.InvalidInput, () => table.mergeInsert('id').execute(arrow.tableFromIPC(ipcRows(1)))],
    ['adding an existing column', ErrorCode.InvalidInput, () => table.addColumns([{ name: 'text', valueSql: "'x'" }])],
    ['full-text search without an index', ErrorCode.InvalidInput, () => table.query().fullTextSearch('x').toArrow()],
    ['an impossible cast', ErrorCode.InvalidInput, () => table.alterColumns([{ path: 'text', dataType: new arrow.Int32() }])],
    // 50 rows cannot train 256 PQ centroids: the caller's input, not a server fault.
    ['a PQ index on too few rows', ErrorCode.InvalidInput, () => table.createIndex('vec', { config: lancedb.Index.ivfPq({ numPartitions: 1 }) })],
    ['two columns of one name', ErrorCode.InvalidInput, () => db.createTable('dupcol', new arrow.Table(new arrow.Schema([new arrow.Field('x', new arrow.Int32()), new arrow.Field('x', new arrow.Utf8())]), []))],
    ['appending an unknown column', ErrorCode.TableSchemaValidationError, () => table.add(arrow.tableFromIPC(ipcWrongSchema()))],
    [
      'appending values of the wrong type',
      ErrorCode.TableSchemaValidationError,
      () => table.add(arrow.tableFromArrays({ id: ['a', 'b'] })),
    ],
    ['an invalid tag name', ErrorCode.InvalidInput, async () => (await table.tags()).create('../x', 1)],
    ['opening a missing branch', ErrorCode.TableBranchNotFound, () => db.openTable('t', undefined, { branch: 'nope' })],
    ['deleting a missing branch', ErrorCode.TableBranchNotFound, async () => (await table.branches()).delete('nope')],
    ['branching from a missing branch', ErrorCode.TableBranchNotFound, async () => (await table.branches()).create('b2', 'nope')],
  ])('%s ⇒ code %i', async (_label, code, provoke) => {
    const err = await mapped(provoke);
    expect(err.code).toBe(code);
    // The client sees the readable part only: no Rust source locations, no repeated chain.
    expect(err.message).not.toMatch(/\.rs:\d+|Caused by/);
  });

  it('a duplicate branch (reported by Lance as an internal error) is 23 only when creating a branch', async () => {
    // Its own table: the message changes once the source version moves past the branch point.
    const own = await db.createTable('dup_branch', arrow.tableFromIPC(ipcRows(3)));
    await (await own.branches()).create('dev');
    const provoke = async () => (await own.branches()).create('dev');
    expect((await mapped(provoke, { creatingBranch: true })).code).toBe(ErrorCode.TableBranchAlreadyExists);
    expect((await mapped(provoke)).code).toBe(ErrorCode.Internal);
    own.close();
  });

  it('a merge insert past its timeout ⇒ 17', async () => {
    // Its own table: if the merge were to commit anyway, no other case would see the new version.
    const own = await db.createTable('timeout', arrow.tableFromIPC(ipcRows(3)));
    const err = await mapped(() =>
      own.mergeInsert('id').whenMatchedUpdateAll().execute(arrow.tableFromIPC(ipcRows(1)), { timeoutMs: 0 }),
    );
    expect(err.code).toBe(ErrorCode.ServiceUnavailable);
    own.close();
  });

  it('namespace errors map to 1 and 2', async () => {
    expect((await mapped(() => db.describeNamespace(['nope']))).code).toBe(ErrorCode.NamespaceNotFound);
    await db.createNamespace(['ns1']);
    expect((await mapped(() => db.createNamespace(['ns1']))).code).toBe(ErrorCode.NamespaceAlreadyExists);
  });

  it('an unknown failure is Internal (18); the original message stays on cause (for the log), out of the body', () => {
    const original = new Error('lance error: something odd happened, /usr/local/cargo/x.rs:1:2');
    const err = mapLanceError(original);
    expect(err).toBeInstanceOf(InternalError);
    expect(err.code).toBe(ErrorCode.Internal);
    expect(err.message).toBe('LanceDB error: something odd happened');
    expect(err.detail).toBeUndefined();
    expect(err.cause).toBe(original);
    expect(mapLanceError('not even an Error').code).toBe(ErrorCode.Internal);
  });

  it('passes CatalogErrors through unchanged', () => {
    const err = new TableTagNotFoundError('x');
    expect(mapLanceError(err)).toBe(err);
  });

  it('cleanLanceMessage keeps the first link of the chain without source locations', () => {
    const raw =
      'lance error: Invalid user input: Column zzz does not exist in the dataset, /usr/local/cargo/registry/src/a/lance-8.0.0/src/dataset/schema_evolution.rs:889:24  Caused by: Invalid user input: Column zzz does not exist';
    expect(cleanLanceMessage(raw)).toBe('Column zzz does not exist in the dataset');
  });
});
