/**
 * Routing by estimate through the data door (#34 item 2; docs/jobs.md, "Routing"): on the local
 * server, a CreateTableIndex whose estimated cost is over the task tier's limit is queued on the
 * task tier and runs there first, in a child process (no function-tier attempt); one over the
 * synchronous limit but under the task tier's is queued on the function tier and runs in the
 * server's own loop. Both limits are lowered so that small tables cross them
 * (RASK_MAX_SYNC_VECTOR_INDEX_ROWS, RASK_JOBS_TASK_INDEX_COST_ROWS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNamespace, expectOk, TableApi } from '../support/data-http.js';
import { randomVectorsIpc } from '../support/random-vectors.js';
import { describeTx as txOf, LOOPS_OFF, settled } from '../support/job-polling.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('a data-door index build is routed by its estimate', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...LOOPS_OFF, RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '100', RASK_JOBS_TASK_INDEX_COST_ROWS: '1000', RASK_JOBS_TASK_TIER: 'child' });
    await ensureNamespace(s, 'r');
  });
  afterAll(() => s?.stop());

  const describeTx = (id: string) => txOf(s, id);

  it('above the task limit it starts on the task tier (a child claims it first); below it stays on the function tier', async () => {
    const big = new TableApi(s, ['r', 'big']);
    const small = new TableApi(s, ['r', 'small']);
    expectOk(await big.arrow('create', randomVectorsIpc(1500, 16)));
    expectOk(await small.arrow('create', randomVectorsIpc(500, 16)));
    const request = { column: 'vec', index_type: 'IVF_PQ', num_partitions: 2, num_sub_vectors: 2 };
    const { transaction_id: bigId } = expectOk(await big.post('create_index', { ...request, name: 'v' }));
    const { transaction_id: smallId } = expectOk(await small.post('create_index', { ...request, name: 'v' }));

    expect((await describeTx(bigId)).properties).toMatchObject({ 'rask.tier': 'task', 'rask.tier_reason': 'estimate: 1500 cost-rows > 1000 (create_index)', 'rask.attempts': '0' });
    expect((await describeTx(smallId)).properties).toMatchObject({ 'rask.tier': 'function', 'rask.tier_reason': 'estimate: 500 cost-rows ≤ 1000 (create_index)' });

    // One pass of the server's loop: it dispatches the big build to a child and runs the small one itself.
    await s.jobs.runOnce();
    const smallDone = await describeTx(smallId);
    expect(smallDone.status).toBe('Succeeded');
    expect(smallDone.properties['rask.worker']).toMatch(/^local:/);
    expect(smallDone.properties['rask.dispatches']).toBeUndefined();

    const bigDone = await settled(s, bigId);
    expect(bigDone.status, JSON.stringify(bigDone.properties)).toBe('Succeeded');
    // Straight to the task: one attempt, a task's, from the first dispatch.
    expect(bigDone.properties).toMatchObject({ 'rask.tier': 'task', 'rask.attempts': '1', 'rask.dispatches': '1' });
    expect(bigDone.properties['rask.worker']).toMatch(/^task:/);
    expect(bigDone.properties['rask.task']).toMatch(/^child:pid:\d+$/);
    for (const t of [big, small]) expect((expectOk(await t.post('index/list')).indexes as { index_name: string }[]).map((i) => i.index_name)).toEqual(['v']);
  }, 180_000);
});
