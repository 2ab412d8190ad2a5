// @covers ListChanges, CreateTable, InsertIntoTable
/**
 * Commits made straight to a table's storage reach the feed (docs/events.md, "Commits straight
 * to storage"): a writer with the official client's plain `connect(dir)` — no catalog — appends
 * to a table the registry knows; the next relay cycle appends one `dev.rask.table.version.created`
 * event with `via: storage` naming the table and its version. Versions the catalog committed
 * itself (CreateTable, inserts through the REST client) are not announced a second time, a
 * second cycle finds nothing new, and the event's id is the same whenever it is derived.
 */
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterEach, describe, expect, it } from 'vitest';
import { RELAY_STATE_KEY, storageCommitId } from '../../lib/maintenance/change-relay.js';
import { ipcRows } from '../data/fixtures.js';
import { expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

async function feed(s: TestServer): Promise<any[]> {
  const out: any[] = [];
  let since: string | undefined;
  for (;;) {
    const res = await s.request('GET', `/v1/changes?limit=1000${since ? `&since=${encodeURIComponent(since)}` : ''}`);
    expect(res.status, res.text).toBe(200);
    const page = res.json();
    out.push(...page.events);
    if (page.events.length === 0 || page.next_cursor === since) return out;
    since = page.next_cursor;
  }
}

/** A plain LanceDB connection on the table's own directory: no catalog involved. */
async function directTable(location: string) {
  const dir = path.dirname(location);
  const name = path.basename(location).replace(/\.lance$/, '');
  const db = await lancedb.connect(dir);
  return db.openTable(name);
}

const storageEvents = (events: any[]) => events.filter((e) => e.data?.details?.via === 'storage');

describe('commits straight to storage', () => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.stop();
    s = undefined;
  });

  it('a direct connect() writer produces one version event per commit, deduplicated against the catalog’s own commits', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0', RASK_CHANGES_SCAN_INTERVAL_MS: '0', RASK_CHANGES_SETTLE_MS: '100' });
    const settle = () => new Promise((r) => setTimeout(r, 250));
    const client = await lancedb.connectNamespace('rest', { uri: s.url });
    await client.createNamespace(['sales']);
    const before = await client.createTable('orders', [{ id: 1, v: 'a' }], ['sales']);
    await before.add([{ id: 2, v: 'b' }]); // through the catalog: version 2
    // The first cycle only notes where each table stands.
    await settle();
    expect((await s.changeRelay.runOnce()).storageCommits).toBe(0);

    await before.add([{ id: 3, v: 'c' }]); // through the catalog again: version 3, claimed by its event
    const described = (await s.request('POST', '/v1/table/sales%24orders/describe?delimiter=%24', '{}')).json();
    const direct = await directTable(described.location);
    const v3 = await direct.version();
    await direct.add([{ id: 4, v: 'd' }]); // straight to storage
    await direct.add([{ id: 5, v: 'e' }]);
    const v5 = await direct.version();
    expect(v5).toBe(v3 + 2);
    await settle();
    const report = await s.changeRelay.runOnce();
    expect(report.storageCommits).toBe(2);

    const events = await feed(s);
    const found = storageEvents(events);
    expect(found.map((e) => e.data.version)).toEqual([v3 + 1, v3 + 2]);
    for (const e of found) {
      expect(e).toMatchObject({ type: 'dev.rask.table.version.created', subject: 'table:sales.orders' });
      expect(e.data).toMatchObject({ project: 'default', kind: 'table', id: ['sales', 'orders'], details: { via: 'storage' } });
    }
    // The catalog's own versions keep their one event each (no storage twin).
    const catalogVersions = events.filter((e) => e.data.kind === 'table' && e.data.details?.via !== 'storage').map((e) => e.data.version);
    expect(catalogVersions).toContain(v3);
    expect(found.some((e) => catalogVersions.includes(e.data.version))).toBe(false);

    // Nothing new: a second cycle finds nothing; the state names the table's last version.
    await settle();
    expect((await s.changeRelay.runOnce()).storageCommits).toBe(0);
    expect(storageEvents(await feed(s))).toHaveLength(2);
    // The id is derived from what was committed, so a cycle that ran again would derive it again.
    const table = Object.keys(JSON.parse((await import('node:fs')).readFileSync(path.join(s.dataDir, 'registry', RELAY_STATE_KEY), 'utf8')).tables);
    expect(table).toHaveLength(1);
    const [project, warehouse, location] = table[0].split('\n');
    expect(found[0].id).toBe(storageCommitId(project, warehouse, location, v3 + 1));
  }, 60_000);

  it('a table created after the first cycle: its direct commit is news, its catalog-made first version is not', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0', RASK_CHANGES_SCAN_INTERVAL_MS: '0', RASK_CHANGES_SETTLE_MS: '100' });
    const settle = () => new Promise((r) => setTimeout(r, 250));
    await settle();
    await s.changeRelay.runOnce();
    const client = await lancedb.connectNamespace('rest', { uri: s.url });
    await client.createNamespace(['ops']);
    await client.createTable('runs', [{ id: 1 }], ['ops']);
    const described = (await s.request('POST', '/v1/table/ops%24runs/describe?delimiter=%24', '{}')).json();
    const direct = await directTable(described.location);
    await direct.add([{ id: 2 }]);
    await settle();
    expect((await s.changeRelay.runOnce()).storageCommits).toBe(1);
    expect(storageEvents(await feed(s)).map((e) => [e.subject, e.data.version])).toEqual([['table:ops.runs', await direct.version()]]);
  }, 60_000);

  it('within one scan cadence on the timer', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0', RASK_CHANGES_SCAN_INTERVAL_MS: '300', RASK_CHANGES_SETTLE_MS: '100' });
    const client = await lancedb.connectNamespace('rest', { uri: s.url });
    await client.createNamespace(['t']);
    await client.createTable('x', [{ id: 1 }], ['t']);
    const described = (await s.request('POST', '/v1/table/t%24x/describe?delimiter=%24', '{}')).json();
    await new Promise((r) => setTimeout(r, 700)); // the first cycles have noted the table
    const direct = await directTable(described.location);
    await direct.add([{ id: 2 }]);
    const committed = Date.now();
    let seen: any[] = [];
    while (seen.length === 0 && Date.now() - committed < 5_000) {
      await new Promise((r) => setTimeout(r, 50));
      seen = storageEvents(await feed(s));
    }
    // Settle (100 ms) plus one interval (300 ms) plus a cycle's own time, with room for a loaded machine.
    expect(seen.map((e) => e.data.version)).toEqual([await direct.version()]);
    expect(Date.now() - committed).toBeLessThan(3_000);
  }, 60_000);
});

describe('the catalog’s own commits are never announced as storage commits', () => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.stop();
    s = undefined;
  });

  it('inserts, merges, updates, deletes, column changes and index builds through the catalog: no via-storage event', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0', RASK_CHANGES_SCAN_INTERVAL_MS: '0', RASK_CHANGES_SETTLE_MS: '100' });
    const settle = () => new Promise((r) => setTimeout(r, 250));
    await settle();
    await s.changeRelay.runOnce();
    const client = await lancedb.connectNamespace('rest', { uri: s.url });
    await client.createNamespace(['w']);
    const t = await client.createTable('k', Array.from({ length: 300 }, (_, i) => ({ id: i, name: `n${i}` })), ['w']);
    await t.add([{ id: 1000, name: 'x' }]);
    await t.update({ where: 'id = 1000', values: { name: 'y' } });
    await t.delete('id = 1000');
    await t.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute([{ id: 1, name: 'm' }]);
    await t.createIndex('id');
    await t.addColumns([{ name: 'extra', valueSql: "'e'" }]);
    await t.dropColumns(['extra']);
    // The catalog's own maintenance: a sweep compacts the fragments (new versions of the table).
    const before = await t.version();
    const swept = await s.maintenance.runOnce('sweep');
    expect(swept?.complete).toBe(true);
    await settle();
    await s.changeRelay.runOnce();
    const found = storageEvents(await feed(s));
    expect(found.map((e) => [e.subject, e.data.version])).toEqual([]);
    expect(await (await client.openTable('k', ['w'])).version(), 'the sweep committed').toBeGreaterThan(before);
  }, 60_000);
  it('an index the policy declares, built by the index builder: its commit is claimed, not announced as via storage', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0', RASK_INDEX_INTERVAL_MS: '0', RASK_SWEEP_INTERVAL_MS: '0', RASK_CHANGES_SCAN_INTERVAL_MS: '0', RASK_CHANGES_SETTLE_MS: '100' });
    const settle = () => new Promise((r) => setTimeout(r, 250));
    const client = await lancedb.connectNamespace('rest', { uri: s.url });
    await client.createNamespace(['p']);
    const t = await client.createTable('ix', Array.from({ length: 50 }, (_, i) => ({ id: i })), ['p']);
    const policy = await s.request('POST', '/v1/table/p%24ix/maintenance-policy?delimiter=%24', JSON.stringify({ policy: { indices: [{ name: 'id_idx', column: 'id', type: 'BTREE' }] } }));
    expect(policy.status, policy.text).toBe(200);
    await settle();
    await s.changeRelay.runOnce();
    const before = await t.version();

    const report = await s.maintenance.runOnce('index');
    const item = report!.items.find((i) => (i.table as string[]).join('/') === 'p/ix') as Record<string, any>;
    expect(item.indices).toEqual([expect.objectContaining({ name: 'id_idx', action: 'built' })]);
    const after = await (await client.openTable('ix', ['p'])).version();
    expect(after, 'the build committed').toBeGreaterThan(before);
    expect(item).toMatchObject({ version_before: before, version_after: after });

    await settle();
    await s.changeRelay.runOnce();
    expect(storageEvents(await feed(s)).map((e) => [e.subject, e.data.version])).toEqual([]);
  }, 60_000);
});

/** How many events of the feed name each version of table `id` (as `data.version` or inside `details.commits`). */
function namings(events: any[], id: string[]): Map<number, number> {
  const out = new Map<number, number>();
  const add = (v: number) => out.set(v, (out.get(v) ?? 0) + 1);
  for (const e of events) {
    if (e.data.kind === 'table' && JSON.stringify(e.data.id) === JSON.stringify(id) && typeof e.data.version === 'number') add(e.data.version);
    for (const c of e.data.details?.commits ?? []) if (JSON.stringify(c.id) === JSON.stringify(id)) for (let v = c.from + 1; v <= c.to; v++) add(v);
  }
  return out;
}

describe('the commits of asynchronous doors’ jobs are claimed, not announced as storage commits', () => {
  let s: TestServer | undefined;
  afterEach(async () => {
    await s?.stop();
    s = undefined;
  });

  it('a queued create_index and a backfill (and a synchronous index build): exactly one event per version, none via storage', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0', RASK_CHANGES_SCAN_INTERVAL_MS: '0', RASK_CHANGES_SETTLE_MS: '100', RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '5' });
    const server = s;
    const settle = () => new Promise((r) => setTimeout(r, 250));
    await settle();
    await server.changeRelay.runOnce(); // the first cycle only notes where each table stands
    expectOk(await server.request('POST', '/v1/namespace/j/create', '{}'));
    const t = new TableApi(server, ['j', 't']);
    expectOk(await t.arrow('create', ipcRows(150)));
    expectOk(await t.arrow('insert', ipcRows(150, 150))); // a second fragment: the backfill fills slice by slice
    const version = async () => (await t.describe()).version as number;
    const done = async (id: string) => {
      await server.jobs.runOnce();
      const view = expectOk(await server.request('POST', `/v1/transaction/${id}/describe`, '{}'));
      expect(view.status, JSON.stringify(view.properties)).toBe('Succeeded');
    };

    // A vector build above the synchronous limit: queued, built by the worker.
    const before = await version();
    const queued = expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', num_partitions: 2, num_sub_vectors: 2 }));
    expect(queued.transaction_id).toEqual(expect.any(String));
    expect(await version(), 'nothing built in the request').toBe(before);
    await done(queued.transaction_id);
    expect(await version(), 'the job committed').toBeGreaterThan(before);

    // A computed column filled by a backfill job.
    expectOk(await t.post('add_columns', { new_columns: [{ name: 'triple', computed: 'id * 3' }] }));
    const beforeFill = await version();
    const backfill = expectOk(await t.post('backfill_column', { column: 'triple' }), 202);
    await done(backfill.job_id);
    expect(await version(), 'the backfill committed').toBeGreaterThan(beforeFill);

    // A synchronous scalar build answers {} (no version in the answer to claim it with).
    expect(expectOk(await t.post('create_scalar_index', { column: 'text', index_type: 'BTREE', name: 'text_idx' }))).toEqual({});
    const latest = await version();

    await settle();
    await server.changeRelay.runOnce();
    const events = await feed(server);
    expect(storageEvents(events).map((e) => [e.subject, e.data.version])).toEqual([]);
    const named = namings(events, ['j', 't']);
    const expected = new Map(Array.from({ length: latest }, (_, i) => [i + 1, 1]));
    expect(new Map([...named].sort((a, b) => a[0] - b[0])), 'every version of the table named by exactly one event').toEqual(expected);
    // The jobs' own events: one per version they committed, naming the job.
    const jobEvents = events.filter((e) => e.data.details?.via === 'job');
    expect(jobEvents.filter((e) => e.type === 'dev.rask.table.index.built').map((e) => e.data.details.transaction_id)).toEqual([queued.transaction_id]);
    const filled = jobEvents.filter((e) => e.type === 'dev.rask.table.columns.backfilled');
    expect(filled.length).toBe(latest - 1 - beforeFill);
    for (const e of filled) expect(e.data).toMatchObject({ kind: 'table', id: ['j', 't'], operation: 'backfill', details: { transaction_id: backfill.job_id } });
  }, 120_000);
});
