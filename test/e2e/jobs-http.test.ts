// @covers CreateTableIndex, DescribeTransaction, AlterTransaction, AlterTableBackfillColumns, AlterTableAddColumns, ListTableIndices
/**
 * Asynchronous jobs over raw HTTP against the local server (docs/jobs.md): vector index builds
 * above RASK_MAX_SYNC_VECTOR_INDEX_ROWS are queued and answered with a transaction id, the
 * server's in-process worker runs them, DescribeTransaction follows them and AlterTransaction
 * edits or cancels them; computed columns are declared all-null and filled by backfill jobs.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ipcRows, vectorOf } from '../data/fixtures.js';
import { ensureNamespace, expectError, expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TX = /^[0-9a-f]{32}$/;

function tx(server: TestServer, id: string, op: 'describe' | 'alter', body: Record<string, unknown> = {}): Promise<RawResponse> {
  return server.request('POST', `/v1/transaction/${id}/${op}`, JSON.stringify(body), { 'content-type': 'application/json' });
}

async function describeTx(server: TestServer, id: string): Promise<{ status: string; properties: Record<string, string> }> {
  return expectOk(await tx(server, id, 'describe'));
}

/** Polls DescribeTransaction until a final status; returns every status seen, in order. */
async function settle(server: TestServer, id: string, timeoutMs = 60_000) {
  const seen: string[] = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const view = await describeTx(server, id);
    if (seen[seen.length - 1] !== view.status) seen.push(view.status);
    if (['Succeeded', 'Failed', 'Canceled'].includes(view.status)) return { view, seen };
    if (Date.now() > end) throw new Error(`transaction ${id} still ${view.status} after ${timeoutMs} ms`);
    await sleep(25);
  }
}

const names = async (t: TableApi) =>
  (expectOk(await t.post('index/list')).indexes as { index_name: string }[]).map((i) => i.index_name).sort();

describe('vector index builds above the synchronous limit run as jobs (worker loop on)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '100', RASK_JOBS_INTERVAL_MS: '50' });
    await ensureNamespace(s, 'j');
  });
  afterAll(() => s?.stop());

  it('answers a transaction id at once; the job goes Queued/Running → Succeeded; the index is listed and used', async () => {
    const t = new TableApi(s, ['j', 'big']);
    expectOk(await t.arrow('create', ipcRows(300)));
    const res = expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', name: 'v_pq', num_partitions: 2, num_sub_vectors: 2 }));
    expect(Object.keys(res)).toEqual(['transaction_id']);
    expect(res.transaction_id).toMatch(TX);

    const { view, seen } = await settle(s, res.transaction_id);
    expect(['Queued', 'Running']).toContain(seen[0]);
    expect(seen[seen.length - 1]).toBe('Succeeded');
    // Never backwards: Queued, then Running, then Succeeded (a fast build may skip a step between polls).
    const order = ['Queued', 'Running', 'Succeeded'];
    expect(seen.map((x) => order.indexOf(x))).toEqual([...new Set(seen.map((x) => order.indexOf(x)))].sort());
    expect(seen.every((x) => order.includes(x))).toBe(true);
    expect(view.properties).toMatchObject({
      'rask.kind': 'create_index',
      'rask.index_name': 'v_pq',
      'rask.column': 'vec',
      'rask.table': '["j","big"]',
      'rask.rows': '300',
      'rask.dimension': '8',
      'rask.cost_rows': '300',
      'rask.max_sync_rows': '100',
      'rask.attempts': '1',
      'rask.worker': expect.stringMatching(/^local:/),
      'rask.finished_at': expect.any(String),
    });
    expect(view.properties['rask.error']).toBeUndefined();

    const listed = expectOk(await t.post('index/list')).indexes;
    expect(listed).toEqual([expect.objectContaining({ index_name: 'v_pq', columns: ['vec'], index_type: 'IVF_PQ', num_indexed_rows: 300 })]);
    const plan = JSON.parse((await t.post('explain_plan', { query: { k: 3, vector: { single_vector: vectorOf(3) }, vector_column: 'vec' } })).text);
    expect(plan).toMatch(/ANN/);
    const hits = await t.rows({ k: 3, vector: { single_vector: vectorOf(7) }, vector_column: 'vec', nprobes: 2 });
    expect(hits).toHaveLength(3);
  });

  it('weighs each type as before: costly types are queued, cheap and scalar ones still build inside the request', async () => {
    const t = new TableApi(s, ['j', 'weights']);
    expectOk(await t.arrow('create', ipcRows(300)));
    const queued: Record<string, string> = {};
    for (const [index_type, name, extra] of [['IVF_HNSW_SQ', 'hsq', {}], ['ivf-hnsw-pq', 'hpq', { num_sub_vectors: 2 }]] as const) {
      queued[name] = expectOk(await t.post('create_index', { column: 'vec', index_type, name, num_partitions: 1, ...extra })).transaction_id;
    }
    // IVF_FLAT and IVF_RQ weigh 1/16 (300 → 19), scalar indices are one pass: `{}` as ever.
    expect(expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_FLAT', name: 'flat', num_partitions: 2 }))).toEqual({});
    expect(expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_RQ', name: 'rq', num_partitions: 2 }))).toEqual({});
    expect(expectOk(await t.post('create_scalar_index', { column: 'id', index_type: 'BTREE', name: 'id_idx' }))).toEqual({});
    const hsq = await settle(s, queued.hsq);
    const hpq = await settle(s, queued.hpq);
    expect(hsq.view.properties['rask.cost_rows']).toBe('300');
    expect(hpq.view.properties['rask.cost_rows']).toBe('900');
    expect([hsq.view.status, hpq.view.status]).toEqual(['Succeeded', 'Succeeded']);
    expect(await names(t)).toEqual(['flat', 'hpq', 'hsq', 'id_idx', 'rq']);
  });

  it('refuses at once, queueing nothing, what the build would refuse: taken name (7), missing column (12), bad parameters (13)', async () => {
    const t = new TableApi(s, ['j', 'refused']);
    expectOk(await t.arrow('create', ipcRows(300)));
    // The name is taken by a (synchronous, scalar) index: a queued vector build of that name is refused.
    expectOk(await t.post('create_scalar_index', { column: 'id', index_type: 'BTREE', name: 'v_pq' }));
    const jobsBefore = await s.settledJobKeys();
    expectError(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', name: 'v_pq', num_partitions: 2 }), 409, 7);
    expectError(await t.post('create_index', { column: 'nope', index_type: 'IVF_PQ', num_partitions: 2 }), 404, 12);
    expectError(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', m: 4 }), 400, 13);
    expectError(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', distance_type: 'hamming' }), 400, 13);
    // Refused before anything was queued: the job records are exactly those from before.
    expect(await s.jobKeys()).toEqual(jobsBefore);
    expect(await names(t)).toEqual(['v_pq']);
  });

  it('an unnamed build gets the name LanceDB would give it, shown in the transaction', async () => {
    const t = new TableApi(s, ['j', 'unnamed']);
    expectOk(await t.arrow('create', ipcRows(200)));
    const id = expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_HNSW_SQ', num_partitions: 1 })).transaction_id;
    const { view } = await settle(s, id);
    expect(view).toMatchObject({ status: 'Succeeded', properties: { 'rask.index_name': 'vec_idx' } });
    expect(await names(t)).toEqual(['vec_idx']);
  });

  it('a build that fails only when it runs ends Failed, with the error and its code, after one attempt', async () => {
    const t = new TableApi(s, ['j', 'few']);
    expectOk(await t.arrow('create', ipcRows(120)));
    // PQ trains 256 centroids per sub-vector: 120 rows are too few, which only the build finds out.
    const id = expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', num_partitions: 1 })).transaction_id;
    const { view } = await settle(s, id);
    expect(view.status).toBe('Failed');
    expect(view.properties['rask.error']).toMatch(/^Not enough rows to train PQ/);
    expect(view.properties).toMatchObject({ 'rask.error_code': '13', 'rask.attempts': '1' });
    expect(await names(t)).toEqual([]);
  });
});

describe('jobs with the worker driven by hand (RASK_JOBS_INTERVAL_MS=0)', () => {
  let s: TestServer;
  // A server per test: a hand-driven worker runs every queued job, including other tests' ones.
  beforeEach(async () => {
    s = await startTestServer({ RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '10', RASK_JOBS_INTERVAL_MS: '0' });
    await ensureNamespace(s, 'm');
  });
  afterEach(() => s?.stop());

  const queueBuild = async (t: TableApi, name = 'v') =>
    expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_HNSW_SQ', name, num_partitions: 1 })).transaction_id as string;

  it('stays Queued until a worker runs, then Succeeded', async () => {
    const t = new TableApi(s, ['m', 'q']);
    expectOk(await t.arrow('create', ipcRows(50)));
    const id = await queueBuild(t);
    // No worker runs until runOnce: it is Queued now, and stays so (nothing else could run it).
    expect(await describeTx(s, id)).toMatchObject({ status: 'Queued', properties: { 'rask.attempts': '0', 'rask.not_before': expect.any(String) } });
    expect(await names(t)).toEqual([]);
    const report = await s.jobs.runOnce();
    expect(report.ran).toEqual([{ id, project: 'default', type: 'create_index', outcome: 'succeeded' }]);
    expect((await describeTx(s, id)).status).toBe('Succeeded');
    expect(await names(t)).toEqual(['v']);
  });

  it('a job whose table was dropped, or dropped and re-created, ends Failed with code 4 and touches nothing', async () => {
    const gone = new TableApi(s, ['m', 'gone']);
    expectOk(await gone.arrow('create', ipcRows(50)));
    const first = await queueBuild(gone);
    expectOk(await gone.post('drop'));

    const again = new TableApi(s, ['m', 'again']);
    expectOk(await again.arrow('create', ipcRows(50)));
    const second = await queueBuild(again);
    expectOk(await again.post('drop'));
    expectOk(await again.arrow('create', ipcRows(50)));

    await s.jobs.runOnce();
    const a = await describeTx(s, first);
    expect(a).toMatchObject({ status: 'Failed', properties: { 'rask.error_code': '4', 'rask.attempts': '1' } });
    expect(a.properties['rask.error']).toMatch(/does not exist/);
    const b = await describeTx(s, second);
    expect(b).toMatchObject({ status: 'Failed', properties: { 'rask.error_code': '4' } });
    expect(b.properties['rask.error']).toMatch(/dropped and re-created after this job was queued/);
    expect(await names(again)).toEqual([]);
  });

  it('AlterTransaction sets and unsets properties, all actions or none, and keeps rask.* to the server', async () => {
    const t = new TableApi(s, ['m', 'props']);
    expectOk(await t.arrow('create', ipcRows(50)));
    const id = await queueBuild(t);
    const set = expectOk(
      await tx(s, id, 'alter', {
        actions: [
          { setPropertyAction: { key: 'owner', value: 'team-a' } },
          { setPropertyAction: { key: 'ticket', value: 'T-1', mode: 'Fail' } },
        ],
      }),
    );
    expect(set).toMatchObject({ status: 'Queued', properties: { owner: 'team-a', ticket: 'T-1', 'rask.kind': 'create_index' } });
    // Skip keeps, Overwrite replaces, Fail refuses the whole request.
    const refused = expectError(
      await tx(s, id, 'alter', {
        actions: [
          { setPropertyAction: { key: 'owner', value: 'team-b' } },
          { setPropertyAction: { key: 'ticket', value: 'T-2', mode: 'fail' } },
        ],
      }),
      400,
      13,
    );
    expect(refused.error).toMatch(/"ticket" is already set/);
    expect((await describeTx(s, id)).properties).toMatchObject({ owner: 'team-a', ticket: 'T-1' });
    const after = expectOk(
      await tx(s, id, 'alter', {
        actions: [
          { setPropertyAction: { key: 'ticket', value: 'T-3', mode: 'skip' } },
          { unsetPropertyAction: { key: 'owner' } },
          { unsetPropertyAction: { key: 'never-set', mode: 'Skip' } },
        ],
      }),
    );
    expect(after.properties.ticket).toBe('T-1');
    expect(after.properties.owner).toBeUndefined();
    expectError(await tx(s, id, 'alter', { actions: [{ unsetPropertyAction: { key: 'never-set', mode: 'fail' } }] }), 400, 13);
    expectError(await tx(s, id, 'alter', { actions: [{ setPropertyAction: { key: 'rask.error', value: 'x' } }] }), 400, 13);
    expectError(await tx(s, id, 'alter', { actions: [] }), 400, 13);
    expectError(await tx(s, id, 'alter', {}), 400, 13);
    expectError(await tx(s, id, 'alter', { actions: [{ setStatusAction: { status: 'Running' } }] }), 400, 13);
    expect((await describeTx(s, id)).status).toBe('Queued');
  });

  it('AlterTransaction cancels a queued job: it never runs; a second cancel is harmless; a finished job cannot be canceled', async () => {
    const t = new TableApi(s, ['m', 'cancel']);
    expectOk(await t.arrow('create', ipcRows(50)));
    const id = await queueBuild(t);
    expect(expectOk(await tx(s, id, 'alter', { actions: [{ setStatusAction: { status: 'canceled' } }] })).status).toBe('Canceled');
    expect(expectOk(await tx(s, id, 'alter', { actions: [{ setStatusAction: { status: 'Canceled' } }] })).status).toBe('Canceled');
    const report = await s.jobs.runOnce();
    expect(report.ran.map((r) => r.id)).not.toContain(id);
    expect(await names(t)).toEqual([]);
    expect((await describeTx(s, id)).properties['rask.finished_at']).toEqual(expect.any(String));

    const done = await queueBuild(t, 'w');
    await s.jobs.runOnce();
    const res = expectError(await tx(s, done, 'alter', { actions: [{ setStatusAction: { status: 'Canceled' } }] }), 400, 13);
    expect(res.error).toMatch(/a Succeeded transaction cannot be set to Canceled/);
  });

  it('unknown or malformed transaction ids are 404 / 10; a body id that contradicts the path is 400 / 13', async () => {
    for (const id of ['0123456789abcdef0123456789abcdef', 'nope', 'a%24b']) {
      expectError(await tx(s, id, 'describe'), 404, 10);
      expectError(await tx(s, id, 'alter', { actions: [{ setStatusAction: { status: 'Canceled' } }] }), 404, 10);
    }
    expectError(await tx(s, '0123456789abcdef0123456789abcdef', 'describe', { id: ['other'] }), 400, 13);
  });
});

describe('computed columns and AlterTableBackfillColumns', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '50' });
    await ensureNamespace(s, 'c');
  });
  afterAll(() => s?.stop());

  const backfill = (t: TableApi, body: Record<string, unknown>) => t.post('backfill_column', body);

  it('declares all-null with the binding in field metadata; backfill fills new rows; 202 with a job id', async () => {
    const t = new TableApi(s, ['c', 'bf']);
    expectOk(await t.arrow('create', ipcRows(10)));
    expect(expectOk(await t.post('add_columns', { new_columns: [{ name: 'twice', computed: 'id * 2' }, { name: 'shout', computed: 'upper(text)' }] }))).toEqual({ version: 2 });
    const fields = (await t.describe()).schema.fields as { name: string; nullable: boolean; type: { type: string }; metadata?: Record<string, string> }[];
    expect(fields.find((f) => f.name === 'twice')).toEqual({ name: 'twice', nullable: true, type: { type: 'int64' }, metadata: { 'rask.computed': 'id * 2' } });
    expect(fields.find((f) => f.name === 'shout')).toMatchObject({ type: { type: 'utf8' }, metadata: { 'rask.computed': 'upper(text)' } });
    // Never filled at declaration.
    expect(await t.count('predicate=twice%20IS%20NULL')).toBe(10);

    const first = backfill(t, { column: 'twice' });
    const res = await first;
    expect(res.status, res.text).toBe(202);
    const jobId = res.json().job_id;
    expect(Object.keys(res.json())).toEqual(['job_id']);
    expect(jobId).toMatch(TX);
    const { view } = await settle(s, jobId);
    expect(view).toMatchObject({
      status: 'Succeeded',
      properties: { 'rask.kind': 'backfill', 'rask.column': 'twice', 'rask.expression': 'id * 2', 'rask.where': 'twice IS NULL', 'rask.updated_rows': '10' },
    });

    // Rows appended later read null until the next backfill, which computes only them.
    expectOk(await t.arrow('insert', ipcRows(5, 10)));
    expect(await t.count('predicate=twice%20IS%20NULL')).toBe(5);
    const second = await settle(s, expectOk(await backfill(t, { column: 'twice' }), 202).job_id);
    expect(second.view.properties['rask.updated_rows']).toBe('5');
    const rows = await t.rows();
    expect(rows).toHaveLength(15);
    for (const r of rows) expect(r.twice).toBe(Number(r.id) * 2);
    expect(rows.every((r) => r.shout === null)).toBe(true);

    // An explicit `where` recomputes exactly those rows, computed or not.
    const third = await settle(s, expectOk(await backfill(t, { column: 'shout', where: 'id < 3' }), 202).job_id);
    expect(third.view.properties).toMatchObject({ 'rask.updated_rows': '3', 'rask.where': 'id < 3' });
    const shouted = (await t.rows()).filter((r) => r.shout !== null);
    expect(shouted.map((r) => r.shout)).toEqual([0, 1, 2].map((i) => String(rows[i].text).toUpperCase()));
  });

  it('refuses what cannot be backfilled before queueing anything', async () => {
    const t = new TableApi(s, ['c', 'bf_refused']);
    expectOk(await t.arrow('create', ipcRows(4)));
    expectOk(await t.post('add_columns', { new_columns: [{ name: 'twice', computed: 'id * 2' }] }));
    await settle(s, expectOk(await backfill(t, { column: 'twice' }), 202).job_id);
    const version = (await t.describe()).version;
    const jobsBefore = await s.settledJobKeys();
    expect(expectError(await backfill(t, { column: 'text' }), 400, 13).error).toMatch(/"text" is not a computed column/);
    expectError(await backfill(t, { column: 'nope' }), 404, 12);
    expectError(await backfill(t, { column: 'twice', where: 'nope > 1' }), 404, 12);
    expectError(await backfill(t, { column: 'twice', where: 'id >' }), 400, 13);
    expectError(await backfill(t, {}), 400, 13);
    expectError(await backfill(t, { column: 'twice', concurrency: 'lots' }), 400, 13);
    expect(expectError(await backfill(t, { column: 'twice', read_version: 1 }), 406, 0).error).toMatch(/read_version/);
    expectError(await new TableApi(s, ['c', 'nope']).post('backfill_column', { column: 'twice' }), 404, 4);
    // Nothing was queued and nothing was written.
    expect(await s.jobKeys()).toEqual(jobsBefore);
    expect((await t.describe()).version).toBe(version);
    // The tuning fields of a distributed executor are accepted and have nothing to tune.
    const ok = await settle(s, expectOk(await backfill(t, { column: 'twice', concurrency: 4, checkpoint_size: 100 }), 202).job_id);
    expect(ok.view.properties['rask.updated_rows']).toBe('0');
  });

  it('refuses a computed expression that does not plan, adding nothing', async () => {
    const t = new TableApi(s, ['c', 'bad']);
    expectOk(await t.arrow('create', ipcRows(3)));
    expectError(await t.post('add_columns', { new_columns: [{ name: 'x', computed: 'nope + 1' }] }), 404, 12);
    expectError(await t.post('add_columns', { new_columns: [{ name: 'x', computed: 'id +' }] }), 400, 13);
    expectError(await t.post('add_columns', { new_columns: [{ name: 'x', computed: 'id', expression: 'id' }] }), 400, 13);
    expectError(await t.post('add_columns', { new_columns: [{ name: 'x', computed: 'id' }, { name: 'y', expression: 'id' }] }), 400, 13);
    expect((await t.describe()).schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'text', 'labels', 'vec']);
  });
});
