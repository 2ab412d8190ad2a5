/**
 * Re-embedding bytes (issue #33, docs/reembedding.md): what each step writes on a 100,000-row
 * table (`id`, `text`, a 128-d `emb_v1`; ten fragments of 10,000 rows), through rask's local
 * server over raw HTTP with Arrow IPC bodies:
 * - add `emb_v2` all-null (typed null), fill it with ten update-only merges of `id` + `emb_v2`,
 *   one fragment's rows each (a 6 MiB body holds ~12,000 such rows): the column-only fill;
 * - the same fill sent as a filtered update (`when_matched_update_all_filt=true`, which rask does
 *   not run column-only) on a second copy: the full-row rewrite every fill cost before issue #33;
 * - a computed `emb_v3` (a copy of `emb_v1`) filled by AlterTableBackfillColumns' job.
 * Bytes are what each answer or transaction reports (`bytes_written`: the data files the
 * commits added, read from the manifests), checked here against the files on disk.
 *
 *   npx tsx bench/reembedding.ts [--rows 100000] [--dim 128]
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Field, FixedSizeList, Float32, Int64, Schema, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, dim: { type: 'string', default: '128' } } });
const ROWS = Number(values.rows);
const DIM = Number(values.dim);
const FRAGMENT = 10_000;
const vtype = () => new FixedSizeList(DIM, new Field('item', new Float32(), true));
const vec = (i: number, m: number) => Float32Array.from({ length: DIM }, (_, j) => Math.sin(i * 0.37 + j * m));
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

function base(ids: number[]): Buffer {
  const schema = new Schema([new Field('id', new Int64(), false), new Field('text', new Utf8(), true), new Field('emb_v1', vtype(), true)]);
  return Buffer.from(tableToIPC(new Table(schema, {
    id: vectorFromArray(ids.map(BigInt), new Int64()),
    text: vectorFromArray(ids.map((i) => `document ${i} about topic ${i % 97}`), new Utf8()),
    emb_v1: vectorFromArray(ids.map((i) => [...vec(i, 1)]), vtype()),
  })));
}
function fill(ids: number[]): Buffer {
  const schema = new Schema([new Field('id', new Int64(), false), new Field('emb_v2', vtype(), true)]);
  return Buffer.from(tableToIPC(new Table(schema, { id: vectorFromArray(ids.map(BigInt), new Int64()), emb_v2: vectorFromArray(ids.map((i) => [...vec(i, 2)]), vtype()) })));
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'rask-reembed-'));
const server = await startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dataDir, RASK_HOST: '127.0.0.1', RASK_LOG_LEVEL: 'warn', RASK_JOBS_INTERVAL_MS: '100' }));
const call = async (method: string, p: string, body?: Buffer | string) => {
  const res = await fetch(server.url + p, { method, body, headers: typeof body === 'string' ? { 'content-type': 'application/json' } : {} });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : {};
};
const t = (name: string, op: string, q = '') => `/v1/table/bench%24${name}/${op}?delimiter=%24${q ? `&${q}` : ''}`;
const dirBytes = async (loc: string) => {
  let n = 0;
  for (const f of await readdir(path.join(loc, 'data'))) n += (await stat(path.join(loc, 'data', f))).size;
  return n;
};
const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

try {
  await call('POST', '/v1/namespace/bench/create?delimiter=%24', '{}');
  const column = ROWS * DIM * 4;
  const out: string[] = [`${ROWS} rows × ${DIM}-d; the new column's values: ${mb(column)}`];
  for (const name of ['fill', 'rewrite']) {
    await call('POST', t(name, 'create'), base(range(0, FRAGMENT)));
    for (let f = FRAGMENT; f < ROWS; f += FRAGMENT) await call('POST', t(name, 'insert'), base(range(f, FRAGMENT)));
    await call('POST', t(name, 'add_columns'), JSON.stringify({ new_columns: [{ name: 'emb_v2', expression: `arrow_cast(NULL, 'FixedSizeList(${DIM}, Float32)')` }] }));
    const loc = (await call('POST', t(name, 'describe'), JSON.stringify({ load_detailed_metadata: true }))).location;
    const before = await dirBytes(loc);
    const q = name === 'fill' ? 'on=id&when_matched_update_all=true' : 'on=id&when_matched_update_all_filt=true';
    let reported = 0;
    const started = Date.now();
    for (let f = 0; f < ROWS; f += FRAGMENT) reported += (await call('POST', t(name, 'merge_insert', q), fill(range(f, FRAGMENT)))).bytes_written;
    const onDisk = (await dirBytes(loc)) - before;
    out.push(`${name === 'fill' ? 'column-only fill' : 'full-row rewrite (filtered update)'}: ${mb(reported)} reported, ${mb(onDisk)} new on disk (${(reported / column).toFixed(2)}× the column), ${Date.now() - started} ms`);
  }
  await call('POST', t('fill', 'add_columns'), JSON.stringify({ new_columns: [{ name: 'emb_v3', computed: 'emb_v1' }] }));
  const job = (await call('POST', t('fill', 'backfill_column'), JSON.stringify({ column: 'emb_v3' }))).job_id;
  let view: { status: string; properties: Record<string, string> };
  for (;;) {
    view = await call('POST', `/v1/transaction/${job}/describe`, '{}');
    if (['Succeeded', 'Failed', 'Canceled'].includes(view.status)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const b = Number(view.properties['rask.bytes_written']);
  out.push(`backfill job: ${view.status}, ${view.properties['rask.slices']} slices, ${mb(b)} (${(b / column).toFixed(2)}× the column), path ${view.properties['rask.write_path']}`);
  console.log(out.join('\n'));
} finally {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
