// @covers ListMaintenanceReports, ListJobs
/**
 * The console's two read doors over HTTP (docs/console.md, "The two read doors behind them"):
 * a maintenance run stores one report for the whole estate, and each project reads back only
 * its own tables' items, with totals over those; a principal who holds nothing in a project is
 * refused like any project read; bad parameters are a 400. ListJobs answers the project's live
 * and finished jobs.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rask } from '../support/console-server.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ADMIN = 'operations-reads-admin-key-0123456789';

describe('ListMaintenanceReports and ListJobs', () => {
  let s: TestServer;
  let outsider = '';
  let transaction = '';
  const get = async (p: string, key = ADMIN) => {
    const r = await s.request('GET', p, undefined, { 'x-api-key': key });
    return { status: r.status, body: r.json() };
  };

  beforeAll(async () => {
    s = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN, RASK_JOBS_INTERVAL_MS: '0', RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '1' });
    const admin = { 'x-api-key': ADMIN };
    const post = (p: string, body: unknown) => s.request('POST', p, JSON.stringify(body), admin);
    expect((await post('/v1/projects', { name: 'acme' })).status).toBe(200);
    const root = path.join(await realpath(s.dataDir), 'projects', 'acme', 'main');
    expect((await post('/projects/acme/v1/warehouses', { name: 'main', storage_root: root })).status).toBe(200);
    for (const [uri, ns, name] of [[s.url, 'sales', 'orders'], [`${s.url}/projects/acme`, 'vault', 'plans']] as const) {
      const db = await lancedb.connectNamespace('rest', { uri, headers: admin } as never);
      await db.createNamespace([ns]);
      const t = await db.createTable(name, [{ id: 1 }], [ns]);
      await t.add([{ id: 2 }]);
      await t.add([{ id: 3 }]);
    }
    expect((await post('/v1/principals', { name: 'outsider' })).status).toBe(200);
    outsider = (await post('/v1/principals/outsider/keys', {})).json().api_key;
    expect((await post('/v1/grants', { principal: 'outsider', role: 'reader', project: 'acme' })).status).toBe(200);
    // A vector index build over the synchronous limit is queued, and stays queued (no worker).
    const db = await lancedb.connectNamespace('rest', { uri: s.url, headers: admin } as never);
    await db.createTable('vecs', Array.from({ length: 300 }, (_, i) => ({ id: i, vector: [i, 1, 2, 3] })), ['sales']);
    const queued = await post('/v1/table/sales%24vecs/create_index', { column: 'vector', index_type: 'IVF_PQ', name: 'v_pq', num_partitions: 2, num_sub_vectors: 2 });
    expect(queued.status, queued.text).toBe(200);
    transaction = queued.json().transaction_id;
    const swept = await rask(['maintenance', 'sweep', '--older-than-days', '0', '--json'], { RASK_DATA_DIR: s.dataDir });
    expect(swept.code, swept.stderr).toBe(0);
  }, 120_000);
  afterAll(() => s?.stop());

  it("answers each project only its own tables' items of the one estate-wide report", async () => {
    const own = await get('/v1/maintenance/reports?pass=sweep');
    expect(own.status).toBe(200);
    expect(own.body.reports).toHaveLength(1);
    const [report] = own.body.reports;
    expect(report.items.map((i: any) => [i.project, i.table.join('.')]).sort()).toEqual([['default', 'sales.orders'], ['default', 'sales.vecs']]);
    const orders = report.items.find((i: any) => i.table[1] === 'orders');
    expect([orders.fragments_before, orders.fragments_after]).toEqual([3, 1]);
    expect(report.totals.tables).toBe(2);
    expect(report.totals.fragments_reclaimed).toBe(report.items.reduce((n: number, i: any) => n + i.fragments_before - i.fragments_after, 0));
    expect(report).not.toHaveProperty('summary');
    expect(report).not.toHaveProperty('problems');
    const acme = await get('/projects/acme/v1/maintenance/reports');
    expect(acme.body.reports.map((r: any) => r.items.map((i: any) => i.table))).toEqual([[['vault', 'plans']]]);
    // The same run, seen from both projects.
    expect(acme.body.reports[0].report).toBe(report.report);
    const byTable = await get('/v1/maintenance/reports?table=sales%24other');
    expect(byTable.body.reports).toEqual([]);
    expect((await get('/v1/maintenance/reports?table=sales%24orders')).body.reports).toHaveLength(1);
  });

  it('refuses a principal who holds nothing in the project, and bad parameters', async () => {
    expect((await get('/projects/acme/v1/maintenance/reports', outsider)).body.reports).toHaveLength(1);
    expect((await get('/v1/maintenance/reports', outsider)).status).toBe(403);
    expect((await get('/v1/jobs', outsider)).status).toBe(403);
    expect(await get('/v1/maintenance/reports?pass=nope')).toMatchObject({ status: 400, body: { code: 13 } });
    expect(await get('/v1/maintenance/reports?limit=0')).toMatchObject({ status: 400, body: { code: 13 } });
    expect(await get('/v1/jobs?limit=500')).toMatchObject({ status: 400, body: { code: 13 } });
  });

  it('lists the live and finished jobs of the project', async () => {
    const jobs = await get('/v1/jobs');
    expect(jobs.status).toBe(200);
    expect(Object.keys(jobs.body).sort()).toEqual(['finished', 'live']);
    expect(jobs.body.live.map((j: any) => [j.id, j.type, j.status, j.table])).toEqual([[transaction, 'create_index', 'Queued', ['sales', 'vecs']]]);
    // acme's queue is its own.
    expect((await get('/projects/acme/v1/jobs')).body.live).toEqual([]);
    for (const j of [...jobs.body.live, ...jobs.body.finished]) {
      expect(j).toHaveProperty('status');
      expect(j).not.toHaveProperty('params');
    }
  });
});
