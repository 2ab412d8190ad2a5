// @covers SweepTable
/**
 * "Run a sweep now" over HTTP (docs/console.md): POST /v1/table/{id}/maintenance/sweep queues the
 * table's sweep job and answers it; asking again while it is pending answers the same job; the
 * worker runs it on the real dataset, and DescribeTransaction names the report it wrote. A
 * principal without project:manage, a missing table and a bad id get the JSON error contract and
 * queue nothing (the job listing that follows proves it).
 */
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const ADMIN = 'sweep-table-admin-key-0123456789';

describe('SweepTable', () => {
  let s: TestServer;
  let reader = '';
  const call = async (method: 'GET' | 'POST', p: string, body?: unknown, key = ADMIN) => {
    const r = await s.request(method, p, body === undefined ? undefined : JSON.stringify(body), { 'x-api-key': key });
    return { status: r.status, body: r.json() };
  };
  const liveJobs = async () => (await call('GET', '/v1/jobs')).body.live;

  beforeAll(async () => {
    s = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN, RASK_JOBS_INTERVAL_MS: '0' });
    const admin = { 'x-api-key': ADMIN };
    const db = await lancedb.connectNamespace('rest', { uri: s.url, headers: admin } as never);
    await db.createNamespace(['sales']);
    const t = await db.createTable('orders', [{ id: 1 }], ['sales']);
    await t.add([{ id: 2 }]);
    await t.add([{ id: 3 }]);
    expect((await call('POST', '/v1/principals', { name: 'reader' })).status).toBe(200);
    reader = (await call('POST', '/v1/principals/reader/keys', {})).body.api_key;
    expect((await call('POST', '/v1/grants', { principal: 'reader', role: 'reader', project: 'default' })).status).toBe(200);
  }, 120_000);
  afterAll(() => s?.stop());

  it('refuses bad requests with the JSON error contract and queues nothing', async () => {
    expect(await call('POST', '/v1/table/sales%24orders/maintenance/sweep', {}, reader)).toMatchObject({ status: 403, body: { code: 15 } });
    expect(await call('POST', '/v1/table/sales%24missing/maintenance/sweep', {})).toMatchObject({ status: 404, body: { code: 4 } });
    expect(await call('POST', '/v1/table/sales%24orders/maintenance/sweep', { older_than_days: 0 })).toMatchObject({ status: 400, body: { code: 13 } });
    expect(await liveJobs()).toEqual([]);
  });

  it('queues the sweep job once, runs it, and DescribeTransaction names its report', async () => {
    const first = await call('POST', '/v1/table/sales%24orders/maintenance/sweep', {});
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ transaction_id: expect.any(String), queued: true });
    const again = await call('POST', '/v1/table/sales%24orders/maintenance/sweep', {});
    expect(again.body).toEqual({ transaction_id: first.body.transaction_id, queued: false });
    expect((await liveJobs()).map((j: any) => [j.id, j.type, j.table])).toEqual([[first.body.transaction_id, 'maintenance_sweep', ['sales', 'orders']]]);

    const ran = await s.jobs.runOnce();
    expect(ran.ran.map((r) => [r.id, r.outcome])).toEqual([[first.body.transaction_id, 'succeeded']]);
    const job = await call('POST', `/v1/transaction/${first.body.transaction_id}/describe`, {});
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect(job.body.status).toBe('Succeeded');
    const report = job.body.properties['rask.report'];
    expect(report).toEqual(expect.any(String));
    const reports = (await call('GET', '/v1/maintenance/reports?pass=sweep')).body.reports;
    expect(reports.map((r: any) => r.items.map((i: any) => [i.table.join('.'), i.fragments_before, i.fragments_after]))).toEqual([[['sales.orders', 3, 1]]]);
    // Once the job is done, a new request queues a new job.
    const later = await call('POST', '/v1/table/sales%24orders/maintenance/sweep', {});
    expect(later.body).toMatchObject({ queued: true });
    expect(later.body.transaction_id).not.toBe(first.body.transaction_id);
  });
});
