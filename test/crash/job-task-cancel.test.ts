/**
 * A cancel of a task-tier job locally (#34; docs/jobs.md, "Tiers"): a real IVF_PQ build runs in
 * a child process from the container's entry (functions/job-task.ts); AlterTransaction cancels
 * it mid-build. The server's runner sends the child SIGTERM and, if it has not exited after
 * the grace (RASK_JOBS_TASK_STOP_GRACE_MS, lowered here), SIGKILL: the child is gone and reaped
 * within the grace, the job ends Canceled and stays so (no pass reclaims or re-dispatches it),
 * and the server serves on.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ensureNamespace, expectOk, TableApi } from '../support/data-http.js';
import { describeTx, sleep, until } from '../support/job-polling.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { randomVectorsIpc } from '../support/random-vectors.js';

const ROWS = 20_000;
const DIM = 128;
const GRACE_MS = 1000;

/** Whether a process of that pid exists (a zombie counts: an unreaped child still has its pid). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

describe('a task-tier IVF_PQ build canceled mid-build in its child process', () => {
  let s: TestServer;
  afterAll(() => s?.stop());

  it('stops the child (SIGTERM, then SIGKILL after the grace), which is reaped; the job ends Canceled and stays so', async () => {
    s = await startTestServer({
      RASK_JOBS_INTERVAL_MS: '0',
      RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '100',
      RASK_JOBS_TASK_INDEX_COST_ROWS: '1000',
      RASK_JOBS_TASK_TIER: 'child',
      RASK_JOBS_TASK_STOP_GRACE_MS: String(GRACE_MS),
      RASK_JOBS_LEASE_MS: '3000',
      RASK_JOBS_HEARTBEAT_MS: '500',
      RASK_SWEEP_INTERVAL_MS: '0',
      RASK_INDEX_INTERVAL_MS: '0',
      RASK_RECONCILE_INTERVAL_MS: '0',
      RASK_ORPHANS_INTERVAL_MS: '0',
    });
    await ensureNamespace(s, 'c');
    const t = new TableApi(s, ['c', 'big']);
    expectOk(await t.arrow('create', randomVectorsIpc(ROWS / 4, DIM)));
    for (let i = 1; i < 4; i++) expectOk(await t.arrow('insert', randomVectorsIpc(ROWS / 4, DIM)));
    const { transaction_id: id } = expectOk(await t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', name: 'v_pq' }));
    expect((await describeTx(s, id)).properties['rask.tier']).toBe('task');

    await s.jobs.runOnce();
    const running = await until('the child to claim the job', 60_000, async () => {
      const v = await describeTx(s, id);
      return v.status === 'Running' && v.properties['rask.task'] ? v : undefined;
    });
    const pid = Number(/pid:(\d+)/.exec(running.properties['rask.task']!)![1]);
    // Mid-build: the child has heartbeated after its claim.
    await until('a heartbeat', 30_000, async () => ((await describeTx(s, id)).properties['rask.heartbeat_at'] !== running.properties['rask.heartbeat_at'] ? true : undefined));
    expect(alive(pid)).toBe(true);

    const canceled = expectOk(await s.request('POST', `/v1/transaction/${id}/alter`, JSON.stringify({ actions: [{ setStatusAction: { status: 'CANCELED' } }] })));
    expect(canceled.status).toBe('Canceled');
    const stoppedAt = Date.now();
    // Gone and reaped within the grace (and some slack on a loaded machine), whatever the child was doing.
    await until('the child to end', GRACE_MS + 10_000, async () => (alive(pid) ? undefined : true));
    expect(Date.now() - stoppedAt).toBeLessThan(GRACE_MS + 10_000);

    // Past the lease: passes neither reclaim nor re-dispatch it.
    await sleep(3500);
    await s.jobs.runOnce();
    await s.jobs.runOnce();
    const after = await describeTx(s, id);
    expect(after.status, JSON.stringify(after.properties)).toBe('Canceled');
    expect(after.properties['rask.attempts']).toBe('1');
    expect(after.properties['rask.dispatches']).toBe('1');
    // The server serves on and the table is whole.
    expect(await t.count()).toBe(ROWS);
  }, 240_000);
});
