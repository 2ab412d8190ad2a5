/**
 * Computed columns and backfill in the data engine (lib/adapters/lance/computed.ts) against real LanceDB
 * 0.31.0: types inferred without writing rows, the binding in field metadata, what a backfill
 * computes by default and on request, and branches.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPUTED_BINDING_KEY } from '../../lib/adapters/lance/computed.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import { ErrorCode } from '../../lib/errors.js';
import { decode, expectCode, ipcRows, plain, tempRoot } from './fixtures.js';

const { root, cleanup } = tempRoot('rask-computed-');
const engine = wireEngine(new LanceDataEngine());
let seq = 0;
afterAll(cleanup);

async function fresh(rows: number): Promise<string> {
  const location = path.join(root, `c${++seq}.lance`);
  await engine.createTable(location, ipcRows(rows), 'create');
  return location;
}

const field = async (location: string, name: string, branch?: string) =>
  (await engine.describe(location, branch ? { branch } : {})).schema.fields.find((f) => f.name === name);

const column = async (location: string, name: string, branch?: string) =>
  plain(decode(await engine.query(location, { k: 1000, columns: { column_names: ['id', name] }, ...(branch ? { branch } : {}) })))
    .sort((a, b) => Number(a.id) - Number(b.id))
    .map((r) => r[name]);

describe('declaring a computed column', () => {
  it("infers the expression's type, adds it nullable and all-null with its binding, in one commit", async () => {
    const location = await fresh(4);
    const before = (await engine.describe(location)).version;
    const out = await engine.addColumns(location, {
      new_columns: [
        { name: 'i', computed: 'id + 1' },
        { name: 'f', computed: 'CAST(id AS DOUBLE) / 2' },
        { name: 's', computed: "concat(text, '!')" },
        { name: 'b', computed: 'id > 1' },
        { name: 'plain', type: { type: 'int32' } },
      ],
    });
    expect(out.version).toBe(before + 1);
    expect(await field(location, 'i')).toEqual({ name: 'i', nullable: true, type: { type: 'int64' }, metadata: { [COMPUTED_BINDING_KEY]: 'id + 1' } });
    expect((await field(location, 'f'))?.type).toEqual({ type: 'float64' });
    expect((await field(location, 's'))?.type).toEqual({ type: 'utf8' });
    expect((await field(location, 'b'))?.type).toEqual({ type: 'bool' });
    expect((await field(location, 'plain'))?.metadata).toBeUndefined();
    for (const c of ['i', 'f', 's', 'b']) expect(await column(location, c)).toEqual([null, null, null, null]);
  });

  it('works on a table with no rows', async () => {
    const location = path.join(root, 'empty.lance');
    await engine.createTable(location, ipcRows(0), 'create');
    await engine.addColumns(location, { new_columns: [{ name: 'i', computed: 'id * 2' }] });
    expect((await field(location, 'i'))?.type).toEqual({ type: 'int64' });
  });

  it('refuses an expression that does not plan, and adds nothing', async () => {
    const location = await fresh(2);
    const version = (await engine.describe(location)).version;
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'x', computed: 'nosuch + 1' }] }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'x', computed: 'id +' }] }), ErrorCode.InvalidInput);
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'x', computed: 'id', expression: 'id' }] }), ErrorCode.InvalidInput);
    await expectCode(engine.addColumns(location, { new_columns: [{ name: 'id', computed: 'id' }] }), ErrorCode.InvalidInput);
    expect((await engine.describe(location)).version).toBe(version);
  });
});

describe('backfill', () => {
  it('computes the rows still null by default, the rows matched by `where` on request', async () => {
    const location = await fresh(3);
    await engine.addColumns(location, { new_columns: [{ name: 'twice', computed: 'id * 2' }] });
    expect(await engine.backfill(location, { column: 'twice' })).toMatchObject({ updated_rows: 3, expression: 'id * 2', where: 'twice IS NULL' });
    await engine.insert(location, ipcRows(2, 3));
    expect(await engine.backfill(location, { column: 'twice' })).toMatchObject({ updated_rows: 2 });
    expect(await column(location, 'twice')).toEqual([0, 2, 4, 6, 8]);
    expect(await engine.backfill(location, { column: 'twice' })).toMatchObject({ updated_rows: 0 });
    // A changed binding is what the next backfill computes; `where` picks the rows to redo.
    await engine.updateFieldMetadata(location, { updates: [{ path: 'twice', metadata: { [COMPUTED_BINDING_KEY]: 'id * 3' } }] });
    expect(await engine.backfill(location, { column: 'twice', where: 'id >= 3' })).toMatchObject({ updated_rows: 2, expression: 'id * 3' });
    expect(await column(location, 'twice')).toEqual([0, 2, 4, 9, 12]);
  });

  it('follows a renamed column, quotes names that need it, and keeps to its branch', async () => {
    const location = await fresh(2);
    await engine.addColumns(location, { new_columns: [{ name: 'x', computed: 'id + 10' }] });
    await engine.alterColumns(location, { alterations: [{ path: 'x', rename: 'odd name' }] });
    expect(await engine.backfill(location, { column: 'odd name' })).toMatchObject({ updated_rows: 2, where: '`odd name` IS NULL' });
    expect(await column(location, 'odd name')).toEqual([10, 11]);

    await engine.createBranch(location, { name: 'dev' });
    await engine.insert(location, ipcRows(1, 2), 'append', { branch: 'dev' });
    expect(await engine.backfill(location, { column: 'odd name', branch: 'dev' })).toMatchObject({ updated_rows: 1 });
    expect(await column(location, 'odd name', 'dev')).toEqual([10, 11, 12]);
    expect(await column(location, 'odd name')).toEqual([10, 11]);
  });

  it('is refused for a missing column (12), a column that is not computed or nested (13), a bad filter', async () => {
    const location = await fresh(2);
    await engine.addColumns(location, { new_columns: [{ name: 'c', computed: 'id' }] });
    await expectCode(engine.checkBackfill(location, { column: 'nope' }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.checkBackfill(location, { column: 'text' }), ErrorCode.InvalidInput);
    await expectCode(engine.checkBackfill(location, { column: 'vec.item' }), ErrorCode.InvalidInput);
    await expectCode(engine.checkBackfill(location, { column: 'c', where: 'nope = 1' }), ErrorCode.TableColumnNotFound);
    await expectCode(engine.checkBackfill(location, { column: 'c', where: 'id >' }), ErrorCode.InvalidInput);
    expect(await engine.checkBackfill(location, { column: 'c', where: 'id > 0' })).toEqual({ column: 'c', expression: 'id' });
    await expectCode(engine.backfill(location, { column: 'text' }), ErrorCode.InvalidInput);
  });
});
