// @covers CreateTableIndex, CreateTableScalarIndex, DropTableIndex, UpdateTable, AlterTableAlterColumns, AlterTableDropColumns, AlterTableAddColumns, ListTableIndices, DescribeTableIndexStats
/**
 * Index definitions in the catalog (issue #33 item 3, docs/index-builds.md "Index definitions"):
 * an index a write dropped is rebuilt by the next index-builder pass from the definition the
 * catalog recorded (built through the catalog, or first seen by the builder when a client built
 * it straight to storage); an index dropped with DropTableIndex, or by a client straight to
 * storage, stays dropped; column renames and drops carry over to the definitions; concurrent
 * writers of definitions all land. Local server, real LanceDB, raw HTTP with real Arrow IPC and
 * the official client over connectNamespace('rest').
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Field, FixedSizeList, Float32, Int64, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { decodeIpc } from '../../lib/data/arrow.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { IndexFinding } from '../../lib/maintenance/index-builder.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { decode, ipcOf, plain } from '../data/fixtures.js';
import { ensureNamespace, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ROWS = 3000;
const DIM = 32;
let s: TestServer;

// Timers off: each test runs the index builder itself, once per step.
beforeAll(async () => {
  // No job loop: the index builder then works in-process (no per-table jobs), so a pass's report has the findings.
  s = await startTestServer({ RASK_INDEX_INTERVAL_MS: '0', RASK_SWEEP_INTERVAL_MS: '0', RASK_JOBS_INTERVAL_MS: '0' });
  await ensureNamespace(s, 'defs');
});
afterAll(() => s?.stop());

function embedding(i: number): number[] {
  return Array.from({ length: DIM }, (_, j) => {
    const x = Math.sin(i * 12.9898 + j * 78.233) * 43758.5453;
    return x - Math.floor(x) - 0.5;
  });
}
const vectorType = () => new FixedSizeList(DIM, new Field('item', new Float32(), true));

function rows(n = ROWS): Table {
  const ids = Array.from({ length: n }, (_, i) => i);
  const schema = new Schema([new Field('id', new Int64(), false), new Field('text', new Utf8(), true), new Field('emb_v1', vectorType(), true)]);
  return new Table(schema, {
    id: vectorFromArray(ids.map(BigInt), new Int64()),
    text: vectorFromArray(ids.map((i) => `w${i} common`), new Utf8()),
    emb_v1: vectorFromArray(ids.map(embedding), vectorType()),
  });
}

const PQ = { column: 'emb_v1', index_type: 'IVF_PQ', name: 'emb_v1_idx', distance_type: 'cosine', num_partitions: 2, num_sub_vectors: 4, max_iterations: 10 };

/** The table of every test: rows, and (unless `bare`) FTS on text and a cosine IVF_PQ on emb_v1 built through the catalog. */
async function scenario(name: string, bare = false): Promise<TableApi> {
  const t = new TableApi(s, ['defs', name]);
  expectOk(await t.arrow('create', ipcOf(rows())));
  if (!bare) {
    expectOk(await t.post('create_scalar_index', { column: 'text', index_type: 'FTS', name: 'text_idx' }));
    expectOk(await t.post('create_index', PQ));
  }
  return t;
}

async function record(t: TableApi): Promise<TableRecord> {
  const store = new FsObjectStore(path.join(s.dataDir, 'registry'));
  const found = await store.get(keys.table('default', t.id));
  return JSON.parse(Buffer.from(found!.body).toString('utf8'));
}
const defined = async (t: TableApi) => Object.fromEntries(((await record(t)).indexDefinitions ?? []).map((d) => [d.name, d]));

async function indices(t: TableApi): Promise<Record<string, { columns: string[]; num_indexed_rows: number; num_unindexed_rows: number; index_uuid: string }>> {
  return Object.fromEntries((expectOk(await t.post('index/list')).indexes as { index_name: string }[]).map((i) => [i.index_name, i])) as never;
}

/** One index-builder pass; this table's findings by index name. */
async function pass(t: TableApi): Promise<Record<string, IndexFinding>> {
  const report = await s.maintenance.runOnce('index');
  const item = report!.items.find((i) => (i.table as string[]).join("/") === t.id.join("/"));
  return Object.fromEntries(((item?.indices as IndexFinding[]) ?? []).map((f) => [f.name, f]));
}

function events(filter: (e: { type: string; data: Record<string, any> }) => boolean) {
  const dir = path.join(s.dataDir, 'events');
  return readdirSync(dir)
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)))
    .filter(filter);
}

async function topId(t: TableApi, i: number): Promise<unknown> {
  const hit = expectOk(await t.post('query', { columns: ['id'], k: 1, vector: { single_vector: embedding(i) }, vector_column: 'emb_v1', nprobes: 2, refine_factor: 50 }));
  return plain(decode(hit as Buffer))[0]?.id;
}

describe('a write that drops an index', () => {
  it('UpdateTable of every row: the answer and its event name the index, and one index-builder pass rebuilds it from its definition', async () => {
    const t = await scenario('update');
    const defs = await defined(t);
    expect(defs.emb_v1_idx).toMatchObject({ column: 'emb_v1', type: 'IVF_PQ', source: 'catalog', params: { distance_type: 'cosine', num_partitions: 2, num_sub_vectors: 4, max_iterations: 10 } });
    expect(defs.text_idx).toMatchObject({ column: 'text', type: 'FTS', source: 'catalog' });

    const answer = expectOk(await t.post('update', { updates: [['emb_v1', 'emb_v1']] }));
    expect(answer.index_effects).toEqual(expect.arrayContaining([expect.objectContaining({ index_name: 'emb_v1_idx', effect: 'dropped' })]));
    expect(events((e) => e.data.operation === 'UpdateTable' && e.data.id.join('/') === 'defs/update')).toHaveLength(1);
    expect(await indices(t)).not.toHaveProperty('emb_v1_idx');
    const stats404 = await t.post('index/emb_v1_idx/stats');
    expect(stats404.status).toBe(404);

    const announced = events((e) => e.data.kind === 'maintenance').length;
    const f = await pass(t);
    expect(f.emb_v1_idx).toMatchObject({ action: 'rebuilt-after-drop' });
    expect(f.emb_v1_idx.reason).toMatch(/dropped by a write at version \d+/);
    const after = await indices(t);
    expect(after.emb_v1_idx).toMatchObject({ columns: ['emb_v1'], num_indexed_rows: ROWS, num_unindexed_rows: 0 });
    expect(after.text_idx).toMatchObject({ num_indexed_rows: ROWS, num_unindexed_rows: 0 });
    // Rebuilt with the recorded parameters, and queries use it.
    expect(expectOk(await t.post('index/emb_v1_idx/stats'))).toMatchObject({ distance_type: 'cosine', num_indexed_rows: ROWS });
    const plan = await t.post('explain_plan', { query: { k: 3, vector: { single_vector: embedding(1) }, vector_column: 'emb_v1' } });
    expect(JSON.parse(plan.text)).toMatch(/ANN/);
    expect(await topId(t, 1234)).toBe(1234);
    // The pass said so in one change event.
    const pending = events((e) => e.data.kind === 'maintenance');
    expect(pending).toHaveLength(announced + 1);
    expect(pending.at(-1)!.data.details.summary).toMatchObject({ indices_rebuilt: 1 });

    // Nothing more to do on the next pass.
    expect((await pass(t)).emb_v1_idx).toMatchObject({ health: 'HEALTHY', action: 'none' });
  }, 120_000);

  it('an index removed with DropTableIndex is not rebuilt, even after a write that would have dropped it', async () => {
    const t = await scenario('dropped');
    expectOk(await t.post('index/emb_v1_idx/drop'));
    const rec = await record(t);
    expect((rec.indexDefinitions ?? []).map((d) => d.name)).toEqual(['text_idx']);
    expect((rec.droppedIndices ?? []).map((d) => d.name)).toEqual(['emb_v1_idx']);
    expectOk(await t.post('update', { updates: [['emb_v1', 'emb_v1']] }));
    const f = await pass(t);
    expect(f.emb_v1_idx).toBeUndefined();
    expect(await indices(t)).not.toHaveProperty('emb_v1_idx');
    // The note did its work and is cleared once the index is gone; the definition stays gone.
    expect((await record(t)).droppedIndices).toEqual([]);
    await pass(t);
    expect(await indices(t)).not.toHaveProperty('emb_v1_idx');
    // Building it again through the catalog records it again.
    expectOk(await t.post('create_index', PQ));
    expect((await defined(t)).emb_v1_idx).toMatchObject({ source: 'catalog' });
  }, 120_000);
});

describe('a client that writes straight to storage (official client over connectNamespace("rest"))', () => {
  it('its own index is recorded on first sight, rebuilt after its merge drops it, and its own drop stays dropped', async () => {
    const t = await scenario('direct', true);
    const db = await lancedb.connectNamespace('rest', { uri: s.url });
    const table = await db.openTable('direct', ['defs']);
    await table.createIndex('emb_v1', { config: lancedb.Index.ivfPq({ distanceType: 'cosine', numPartitions: 2, numSubVectors: 4, maxIterations: 10 }) });
    expect(await defined(t)).toEqual({});

    const first = await pass(t);
    expect(first.emb_v1_idx).toMatchObject({ definition: 'discovered', health: 'HEALTHY' });
    expect((await defined(t)).emb_v1_idx).toMatchObject({ column: 'emb_v1', type: 'IVF_PQ', source: 'discovered', params: { distance_type: 'cosine' } });

    // A full-row merge straight to storage: LanceDB rewrites the rows and the vector index goes.
    await table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(decodeIpc(ipcOf(rows())));
    expect(await indices(t)).not.toHaveProperty('emb_v1_idx');
    const second = await pass(t);
    expect(second.emb_v1_idx).toMatchObject({ action: 'rebuilt-after-drop' });
    expect(await indices(t)).toMatchObject({ emb_v1_idx: { num_indexed_rows: ROWS, num_unindexed_rows: 0 } });
    expect(expectOk(await t.post('index/emb_v1_idx/stats'))).toMatchObject({ distance_type: 'cosine' });

    // The client drops it itself: the history shows an index drop, so the definition goes.
    const fresh = await (await lancedb.connectNamespace('rest', { uri: s.url })).openTable('direct', ['defs']);
    await fresh.dropIndex('emb_v1_idx');
    const third = await pass(t);
    expect(third.emb_v1_idx).toMatchObject({ action: 'definition-removed' });
    expect(await defined(t)).toEqual({});
    const fourth = await pass(t);
    expect(fourth.emb_v1_idx).toBeUndefined();
    expect(await indices(t)).not.toHaveProperty('emb_v1_idx');
    table.close();
    fresh.close();
  }, 120_000);
});

describe('re-embedding end to end (docs/reembedding.md)', () => {
  it('add, fill, index the new column: nothing rebuilt; a later full-row write loses indices and one pass restores every one; dropping the old column ends its definition', async () => {
    const t = await scenario('reembed');
    const uuids = await indices(t);
    expectOk(await t.post('add_columns', { new_columns: [{ name: 'emb_v2', expression: "arrow_cast(NULL, 'FixedSizeList(32, Float32)')" }] }));
    const ids = Array.from({ length: ROWS }, (_, i) => i);
    const schema = new Schema([new Field('id', new Int64(), false), new Field('emb_v2', vectorType(), true)]);
    const fill = ipcOf(new Table(schema, { id: vectorFromArray(ids.map(BigInt), new Int64()), emb_v2: vectorFromArray(ids.map((i) => embedding(i + 1)), vectorType()) }));
    const filled = expectOk(await t.arrow('merge_insert', fill, 'on=id&when_matched_update_all=true'));
    expect(filled.index_effects).toBeUndefined();
    expectOk(await t.post('create_index', { ...PQ, column: 'emb_v2', name: 'emb_v2_idx' }));
    const quiet = await pass(t);
    for (const name of ['text_idx', 'emb_v1_idx', 'emb_v2_idx']) expect(quiet[name], name).toMatchObject({ health: 'HEALTHY', action: 'none' });
    const kept = await indices(t);
    for (const name of ['text_idx', 'emb_v1_idx']) expect(kept[name].index_uuid, name).toBe(uuids[name].index_uuid);
    // The key index the fill built is recorded by the fill, not discovered later.
    expect(Object.keys(await defined(t)).sort()).toEqual(['emb_v1_idx', 'emb_v2_idx', 'id_idx', 'text_idx']);
    expect((await defined(t)).id_idx).toMatchObject({ column: 'id', type: 'BTREE', source: 'catalog' });

    // A full-row write afterwards (an UPDATE rewrites whole rows): both vector indices go, FTS and the key index are uncovered.
    const update = expectOk(await t.post('update', { updates: [['emb_v2', 'emb_v2']] }));
    expect(update.index_effects.filter((e: { effect: string }) => e.effect === 'dropped').map((e: { index_name: string }) => e.index_name).sort()).toEqual(['emb_v1_idx', 'emb_v2_idx']);
    const restored = await pass(t);
    expect(restored.emb_v1_idx).toMatchObject({ action: 'rebuilt-after-drop' });
    expect(restored.emb_v2_idx).toMatchObject({ action: 'rebuilt-after-drop' });
    const after = await indices(t);
    for (const name of ['text_idx', 'emb_v1_idx', 'emb_v2_idx', 'id_idx']) expect(after[name], name).toMatchObject({ num_indexed_rows: ROWS, num_unindexed_rows: 0 });

    // Step 5 of the guide: the old column goes, and its index is not rebuilt.
    expectOk(await t.post('drop_columns', { columns: ['emb_v1'] }));
    expect((await pass(t)).emb_v1_idx).toBeUndefined();
    expect(Object.keys(await indices(t)).sort()).toEqual(['emb_v2_idx', 'id_idx', 'text_idx']);
  }, 120_000);
});

describe('column changes carry over to the definitions', () => {
  it('a rename follows the column, a dropped column takes its definitions, an added one changes none', async () => {
    const t = await scenario('columns');
    expectOk(await t.post('alter_columns', { alterations: [{ path: 'text', rename: 'body' }] }));
    expect((await defined(t)).text_idx).toMatchObject({ column: 'body' });
    expect((await indices(t)).text_idx.columns).toEqual(['body']);

    expectOk(await t.post('add_columns', { new_columns: [{ name: 'extra', expression: 'id * 2' }] }));
    expect(Object.keys(await defined(t)).sort()).toEqual(['emb_v1_idx', 'text_idx']);

    const dropped = expectOk(await t.post('drop_columns', { columns: ['emb_v1'] }));
    expect(dropped.index_effects).toEqual([expect.objectContaining({ index_name: 'emb_v1_idx', effect: 'dropped' })]);
    expect(Object.keys(await defined(t))).toEqual(['text_idx']);
    const f = await pass(t);
    expect(f.emb_v1_idx).toBeUndefined();
    expect(f.text_idx).toMatchObject({ action: 'none' });
  }, 120_000);
});

describe('concurrent writers of definitions', () => {
  it('builds on six columns, a drop and an index-builder pass at once: every definition lands and the dropped index stays dropped', async () => {
    const COLUMNS = 6;
    for (let iteration = 0; iteration < 3; iteration++) {
      const t = new TableApi(s, ['defs', `race${iteration}`]);
      const n = 300;
      const cols = Array.from({ length: COLUMNS }, (_, c) => `c${c}`);
      const schema = new Schema([new Field('id', new Int64(), false), new Field('text', new Utf8(), true), ...cols.map((c) => new Field(c, new Int64(), true))]);
      const ids = Array.from({ length: n }, (_, i) => i);
      const data = Object.fromEntries([
        ['id', vectorFromArray(ids.map(BigInt), new Int64())],
        ['text', vectorFromArray(ids.map((i) => `w${i}`), new Utf8())],
        ...cols.map((c, k) => [c, vectorFromArray(ids.map((i) => BigInt(i % (k + 2))), new Int64())]),
      ]);
      expectOk(await t.arrow('create', ipcOf(new Table(schema, data))));
      expectOk(await t.post('create_scalar_index', { column: 'text', index_type: 'BTREE', name: 'text_idx' }));

      const builds = cols.map((c) => t.post('create_scalar_index', { column: c, index_type: 'BTREE', name: `${c}_idx` }));
      const results = await Promise.all([...builds, t.post('index/text_idx/drop'), s.maintenance.runOnce('index')]);
      for (const r of results.slice(0, COLUMNS + 1)) expectOk(r as Awaited<(typeof builds)[number]>);

      const defs = await defined(t);
      expect(Object.keys(defs).sort(), `iteration ${iteration}`).toEqual(cols.map((c) => `${c}_idx`).sort());
      await pass(t);
      const listed = await indices(t);
      expect(Object.keys(listed).sort()).toEqual(cols.map((c) => `${c}_idx`).sort());
      expect(Object.keys(await defined(t)).sort()).toEqual(cols.map((c) => `${c}_idx`).sort());
    }
  }, 180_000);
});
