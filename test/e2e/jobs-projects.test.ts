// @covers CreateTableIndex, DescribeTransaction
/**
 * Jobs queued through a project's base URI (`/projects/acme/v1/…`) are run by the server's
 * worker like the default project's, and are visible only through that project: the default
 * project answers for acme's transaction exactly as for one that never existed (no existence
 * oracle, docs/governance.md).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcRows } from '../data/fixtures.js';
import { expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('jobs of a non-default project', () => {
  let s: TestServer;
  let acme: TestServer;
  let root: string;

  beforeAll(async () => {
    s = await startTestServer({ RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '100', RASK_JOBS_INTERVAL_MS: '50' });
    root = path.join(s.dataDir, 'projects', 'acme', 'main');
    expectOk(await s.request('POST', '/v1/projects', JSON.stringify({ name: 'acme' })));
    expectOk(await s.request('POST', '/v1/warehouses', JSON.stringify({ name: 'main', project: 'acme', storage_root: root })));
    // The same server, every path under acme's base URI (sendRaw uses `url`).
    acme = { ...s, url: `${s.url}/projects/acme`, request: (m, p, b, h) => s.request(m, `/projects/acme${p}`, b, h) };
    expectOk(await acme.request('POST', '/v1/namespace/j/create', '{}'));
  });
  afterAll(async () => {
    await s?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const describeTx = (server: TestServer, id: string) => server.request('POST', `/v1/transaction/${id}/describe`, '{}', { 'content-type': 'application/json' });

  it('runs an index build queued through /projects/acme to Succeeded; only acme can see it', async () => {
    const t = new TableApi(acme, ['j', 'big']);
    expectOk(await t.arrow('create', ipcRows(300)));
    const { transaction_id: id } = expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', name: 'v_pq', num_partitions: 2, num_sub_vectors: 2 }));
    expect(id).toMatch(/^[0-9a-f]{32}$/);

    let view: { status: string; properties: Record<string, string> };
    const end = Date.now() + 60_000;
    for (;;) {
      view = expectOk(await describeTx(acme, id));
      if (['Succeeded', 'Failed', 'Canceled'].includes(view.status) || Date.now() > end) break;
      await sleep(25);
    }
    expect(view.status).toBe('Succeeded');
    expect(view.properties).toMatchObject({ 'rask.kind': 'create_index', 'rask.table': '["j","big"]', 'rask.worker': expect.stringMatching(/^local:/) });
    expect((expectOk(await t.post('index/list')).indexes as { index_name: string }[]).map((i) => i.index_name)).toEqual(['v_pq']);

    // Through the default project: the same answer as for an id nobody ever queued.
    const ghost = '0'.repeat(12) + 'a'.repeat(20);
    const [theirs, none] = await Promise.all([describeTx(s, id), describeTx(s, ghost)]);
    expect(theirs.status).toBe(404);
    expect(none.status).toBe(404);
    const shape = (body: Record<string, unknown>, tx: string) => JSON.stringify({ ...body, error: String(body.error).replace(tx, '<id>'), instance: undefined });
    expect(shape(theirs.json(), id)).toBe(shape(none.json(), ghost));
    expect(theirs.json().code).toBe(10);
  });
});
