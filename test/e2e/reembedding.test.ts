// @covers MergeInsertIntoTable, AlterTableAddColumns, AlterTableBackfillColumns, CreateTableIndex
/**
 * Re-embedding without reindexing (issue #33, docs/reembedding.md): a new embedding column is
 * added, filled from client-computed vectors with an update-only merge of key + new column, and
 * indexed on its own; the existing columns keep their data files and their indices keep their
 * uuids and cover every row. Local server, real LanceDB, raw HTTP with real Arrow IPC.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Field, FixedSizeList, Float32, Int64, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { parseManifestName } from '../../lib/catalog/dataset/manifests.js';
import { readDataFiles, readSchemaFields } from '../../lib/catalog/dataset/lance-manifest.js';
import { decode, ipcOf, plain } from '../data/fixtures.js';
import { ensureNamespace, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ROWS = 3000;
const DIM = 32;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '50' });
  await ensureNamespace(s, 're');
});
afterAll(() => s?.stop());

/** Polls DescribeTransaction until the job ends. */
async function settle(id: string): Promise<{ status: string; properties: Record<string, string> }> {
  const end = Date.now() + 60_000;
  for (;;) {
    const view = expectOk(await s.request('POST', `/v1/transaction/${id}/describe`, '{}'));
    if (['Succeeded', 'Failed', 'Canceled'].includes(view.status)) return view;
    if (Date.now() > end) throw new Error(`transaction ${id} still ${view.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A deterministic, well-spread vector per (row, model). */
function embedding(i: number, model: number): number[] {
  return Array.from({ length: DIM }, (_, j) => {
    const x = Math.sin(i * 12.9898 + j * 78.233 + model * 37.719) * 43758.5453;
    return x - Math.floor(x) - 0.5;
  });
}

const vectorType = () => new FixedSizeList(DIM, new Field('item', new Float32(), true));
const vectors = (ids: number[], model: number) => vectorFromArray(ids.map((i) => embedding(i, model)), vectorType());

function baseTable(): Table {
  const ids = Array.from({ length: ROWS }, (_, i) => i);
  const schema = new Schema([new Field('id', new Int64(), false), new Field('text', new Utf8(), true), new Field('emb_v1', vectorType(), true)]);
  return new Table(schema, {
    id: vectorFromArray(ids.map(BigInt), new Int64()),
    text: vectorFromArray(ids.map((i) => `w${i} common g${i % 10}`), new Utf8()),
    emb_v1: vectors(ids, 1),
  });
}

/** Key + one embedding column for rows `ids`: what a client sends to fill `column`. */
function fillBatch(ids: number[], column: string, model: number): Buffer {
  const schema = new Schema([new Field('id', new Int64(), false), new Field(column, vectorType(), true)]);
  return ipcOf(new Table(schema, { id: vectorFromArray(ids.map(BigInt), new Int64()), [column]: vectors(ids, model) }));
}

/** The latest manifest of the table: which file serves each named column, per fragment. */
function columnFiles(location: string): Record<string, string[]> {
  const dir = path.join(location, '_versions');
  const latest = readdirSync(dir)
    .map((name) => ({ name, parsed: parseManifestName(name) }))
    .filter((m) => m.parsed)
    .sort((a, b) => b.parsed!.version - a.parsed!.version)[0];
  const bytes = new Uint8Array(readFileSync(path.join(dir, latest.name)));
  const ids = new Map(readSchemaFields(bytes).map((f) => [f.id, f.name]));
  const out: Record<string, string[]> = {};
  for (const file of readDataFiles(bytes)) for (const id of file.fields) (out[ids.get(id) ?? `#${id}`] ??= []).push(`${file.fragment}:${file.path}`);
  for (const list of Object.values(out)) list.sort();
  return out;
}

async function indexMap(t: TableApi): Promise<Record<string, { index_uuid: string; num_indexed_rows: number; num_unindexed_rows: number }>> {
  const listed = expectOk(await t.post('index/list')).indexes as { index_name: string; index_uuid: string; num_indexed_rows: number; num_unindexed_rows: number }[];
  return Object.fromEntries(listed.map((i) => [i.index_name, i]));
}

/** Builds the table of the scenario: FTS on text, IVF_PQ on emb_v1. Answers its location. */
async function scenarioTable(t: TableApi): Promise<string> {
  expectOk(await t.arrow('create', ipcOf(baseTable())));
  expect(expectOk(await t.post('create_scalar_index', { column: 'text', index_type: 'FTS', name: 'text_idx' }))).toEqual({});
  const pq = { column: 'emb_v1', index_type: 'IVF_PQ', name: 'emb_v1_idx', num_partitions: 2, num_sub_vectors: 4, max_iterations: 10 };
  expect(expectOk(await t.post('create_index', pq))).toEqual({});
  return (await t.describe()).location;
}

/** After the fill and the new column's index: everything the acceptance lists. */
async function expectReembedded(t: TableApi, location: string, before: { files: Record<string, string[]>; indices: Awaited<ReturnType<typeof indexMap>> }, column: string, model: number) {
  const files = columnFiles(location);
  expect(files.text).toEqual(before.files.text);
  expect(files.emb_v1).toEqual(before.files.emb_v1);
  const indices = await indexMap(t);
  for (const name of ['text_idx', 'emb_v1_idx']) {
    expect(indices[name], name).toMatchObject({ index_uuid: before.indices[name].index_uuid, num_indexed_rows: ROWS, num_unindexed_rows: 0 });
  }
  expect(indices[`${column}_idx`]).toMatchObject({ num_indexed_rows: ROWS, num_unindexed_rows: 0 });
  const plan = (vector_column: string) => t.post('explain_plan', { query: { k: 3, vector: { single_vector: embedding(1, 1) }, vector_column } });
  expect(JSON.parse((await plan(column)).text)).toMatch(/ANN/);
  expect(JSON.parse((await plan('emb_v1')).text)).toMatch(/ANN/);

  const top = async (q: Record<string, unknown>) => plain(decode(expectOk(await t.post('query', { columns: ['id'], ...q })) as Buffer)).map((r) => r.id);
  for (const i of [7, 1234, ROWS - 1]) {
    expect((await top({ k: 1, vector: { single_vector: embedding(i, 1) }, vector_column: 'emb_v1', nprobes: 2, refine_factor: 50 }))[0]).toBe(i);
    expect((await top({ k: 1, vector: { single_vector: embedding(i, model) }, vector_column: column, nprobes: 2, refine_factor: 50 }))[0]).toBe(i);
    expect(await top({ k: 5, full_text_query: { string_query: { query: `w${i}`, columns: ['text'] } } })).toEqual([i]);
    const hybrid = await top({ k: 3, vector: { single_vector: embedding(i, model) }, vector_column: column, full_text_query: { string_query: { query: `w${i}`, columns: ['text'] } } });
    expect(hybrid[0]).toBe(i);
  }
  expect(await t.count()).toBe(ROWS);
}

describe('re-embedding: a client fills a new column with update-only merges', () => {
  it('writes only key + new column, keeps every index and its coverage, and the new column gets its own index', async () => {
    const t = new TableApi(s, ['re', 'merge']);
    const location = await scenarioTable(t);
    const before = { files: columnFiles(location), indices: await indexMap(t) };
    expectOk(await t.post('add_columns', { new_columns: [{ name: 'emb_v2', expression: "arrow_cast(NULL, 'FixedSizeList(32, Float32)')" }] }));

    const all = Array.from({ length: ROWS }, (_, i) => i);
    const merge = (ids: number[]) => t.arrow('merge_insert', fillBatch(ids, 'emb_v2', 2), 'on=id&when_matched_update_all=true');
    const first = expectOk(await merge(all));
    expect(first).toMatchObject({ num_updated_rows: ROWS, num_inserted_rows: 0, key_index: { index_name: 'id_idx', column: 'id', action: 'built' } });
    expect(first.index_effects).toBeUndefined();
    // Key + a 32-d float column: 3,000 × (8 + 128) bytes of values, within 1.5× of the column's own data.
    expect(first.bytes_written).toBeGreaterThan(ROWS * DIM * 4);
    expect(first.bytes_written).toBeLessThanOrEqual(1.5 * ROWS * DIM * 4);
    // A second fill finds the key index covering every row again, and is column-only too.
    const again = expectOk(await merge(all.slice(0, 500)));
    expect(again).toMatchObject({ num_updated_rows: 500, key_index: { index_name: 'id_idx', action: 'kept' } });
    expect(again.index_effects).toBeUndefined();

    expect(expectOk(await t.post('create_index', { column: 'emb_v2', index_type: 'IVF_PQ', name: 'emb_v2_idx', num_partitions: 2, num_sub_vectors: 4, max_iterations: 10 }))).toEqual({});
    await expectReembedded(t, location, before, 'emb_v2', 2);
    expect((await indexMap(t)).id_idx).toMatchObject({ num_indexed_rows: ROWS, num_unindexed_rows: 0 });
  }, 60_000);

  it('a merge that cannot be column-only (it inserts rows) still succeeds and names the indices that lost coverage', async () => {
    const t = new TableApi(s, ['re', 'upsert']);
    await scenarioTable(t);
    const upsert = await t.arrow('merge_insert', ipcOf(baseTable()), 'on=id&when_matched_update_all=true&when_not_matched_insert_all=true');
    const answer = expectOk(upsert);
    expect(answer.key_index).toBeUndefined();
    const effects = Object.fromEntries((answer.index_effects as { index_name: string; effect: string }[]).map((e) => [e.index_name, e.effect]));
    expect(effects).toEqual({ text_idx: 'uncovered', emb_v1_idx: 'dropped' });
  }, 60_000);
});

describe('a write that does cost an index says so', () => {
  it('an UpdateTable of every row answers the indices it dropped and uncovered, and its change event carries them', async () => {
    const t = new TableApi(s, ['re', 'update']);
    await scenarioTable(t);
    const answer = expectOk(await t.post('update', { updates: [['emb_v1', 'emb_v1']] }));
    expect(answer.updated_rows).toBe(ROWS);
    const effects = Object.fromEntries((answer.index_effects as { index_name: string; effect: string }[]).map((e) => [e.index_name, e.effect]));
    expect(effects).toEqual({ text_idx: 'uncovered', emb_v1_idx: 'dropped' });
    expect(answer.bytes_written).toBeGreaterThan(ROWS * DIM * 4);
    // Exactly one change event for the update, and it names the same effects.
    const dir = path.join(s.dataDir, 'events');
    const events = readdirSync(dir)
      .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)))
      .filter((e) => e.data.operation === 'UpdateTable' && e.data.id.join('/') === 're/update');
    expect(events).toHaveLength(1);
    expect(events[0].data.details.index_effects).toEqual(answer.index_effects);
  }, 60_000);
});

describe('re-embedding: a computed column filled by AlterTableBackfillColumns', () => {
  it('the backfill job writes only key + the computed column, fragment by fragment, and reports its bytes', async () => {
    const t = new TableApi(s, ['re', 'backfill']);
    const location = await scenarioTable(t);
    const before = { files: columnFiles(location), indices: await indexMap(t) };
    // A "new model" the table computes itself: here a copy of emb_v1 (same vectors, model 1).
    expectOk(await t.post('add_columns', { new_columns: [{ name: 'emb_v3', computed: 'emb_v1' }] }));
    const job = await settle(expectOk(await t.post('backfill_column', { column: 'emb_v3' }), 202).job_id);
    expect(job.status, JSON.stringify(job.properties)).toBe('Succeeded');
    expect(job.properties).toMatchObject({ 'rask.updated_rows': String(ROWS), 'rask.write_path': 'column-only', 'rask.key': 'id', 'rask.slices': '1' });
    expect(job.properties['rask.index_effects']).toBeUndefined();
    const bytes = Number(job.properties['rask.bytes_written']);
    expect(bytes).toBeGreaterThan(ROWS * DIM * 4);
    expect(bytes).toBeLessThanOrEqual(1.5 * ROWS * DIM * 4);
    expect(expectOk(await t.post('create_index', { column: 'emb_v3', index_type: 'IVF_PQ', name: 'emb_v3_idx', num_partitions: 2, num_sub_vectors: 4, max_iterations: 10 }))).toEqual({});
    await expectReembedded(t, location, before, 'emb_v3', 1);
  }, 60_000);
});
