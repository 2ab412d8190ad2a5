/**
 * Routing a backfill and a sweep by what they rewrite (#34 item 2; docs/jobs.md, "Routing"): on
 * the local server with the child-process task tier, AlterTableBackfillColumns and SweepTable queue
 * their jobs with a byte estimate read from the table's newest manifest, and the queue holds it to
 * the type's budget (RASK_JOBS_TASK_BACKFILL_BYTES, RASK_JOBS_TASK_SWEEP_BYTES, lowered here so that
 * small tables cross them). The estimates are checked against the data files on disk.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNamespace, expectOk, TableApi } from '../support/data-http.js';
import { randomVectorsIpc } from '../support/random-vectors.js';
import { describeTx as txOf, LOOPS_OFF, settled } from '../support/job-polling.js';
import { startTestServer, type TestServer } from '../support/server.js';

const BUDGET = 20_000;

/** Bytes of the table's data files on disk. */
function dataBytes(location: string): number {
  const dir = path.join(location, 'data');
  return readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
}

describe('a backfill and a sweep are routed by the bytes they rewrite', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...LOOPS_OFF, RASK_JOBS_TASK_TIER: 'child', RASK_JOBS_TASK_BACKFILL_BYTES: String(BUDGET), RASK_JOBS_TASK_SWEEP_BYTES: String(BUDGET) });
    await ensureNamespace(s, 'w');
  });
  afterAll(() => s?.stop());

  const describeTx = (id: string) => txOf(s, id);
  const settle = (id: string) => settled(s, id);

  /** A table of `appends` fragments of `rows` 16-d rows each; answers its location and its data bytes. */
  async function table(name: string, appends: number, rows: number): Promise<{ t: TableApi; location: string; bytes: number }> {
    const t = new TableApi(s, ['w', name]);
    expectOk(await t.arrow('create', randomVectorsIpc(rows, 16)));
    for (let i = 1; i < appends; i++) expectOk(await t.arrow('insert', randomVectorsIpc(rows, 16, i * rows)));
    const location = (await t.describe()).location as string;
    return { t, location, bytes: dataBytes(location) };
  }

  it('a backfill over the budget starts on the task tier and runs there; one under it stays on the function tier', async () => {
    const big = await table('fill-big', 3, 200);
    const small = await table('fill-small', 1, 20);
    expect(big.bytes).toBeGreaterThan(BUDGET);
    expect(small.bytes).toBeLessThan(BUDGET);
    const ids: string[] = [];
    for (const x of [big, small]) {
      expectOk(await x.t.post('add_columns', { new_columns: [{ name: 'twice', computed: 'id * 2' }] }));
      ids.push(expectOk(await x.t.post('backfill_column', { column: 'twice' }), 202).job_id);
    }
    // The estimate is what the fill reads: the table's data files before the column was added
    // (the new column's own files are what it writes).
    expect((await describeTx(ids[0])).properties).toMatchObject({ 'rask.tier': 'task', 'rask.tier_reason': `estimate: ${big.bytes} bytes > ${BUDGET} (backfill)`, 'rask.attempts': '0' });
    expect((await describeTx(ids[1])).properties).toMatchObject({ 'rask.tier': 'function', 'rask.tier_reason': `estimate: ${small.bytes} bytes ≤ ${BUDGET} (backfill)` });

    await s.jobs.runOnce();
    const done = await Promise.all(ids.map(settle));
    expect(done.map((d) => d.status), JSON.stringify(done.map((d) => d.properties))).toEqual(['Succeeded', 'Succeeded']);
    expect(done[0].properties).toMatchObject({ 'rask.attempts': '1', 'rask.dispatches': '1', 'rask.updated_rows': '600' });
    expect(done[0].properties['rask.worker']).toMatch(/^task:/);
    expect(done[1].properties['rask.worker']).toMatch(/^local:/);
    expect(await big.t.count('filter=twice%20%3D%20id%20*%202')).toBe(600);
  }, 180_000);

  it("a sweep's estimate is the bytes of its below-target fragments: many small fragments go to the task tier, one fragment is 0 bytes", async () => {
    const many = await table('sweep-many', 6, 100);
    const one = await table('sweep-one', 1, 600);
    expect(many.bytes).toBeGreaterThan(BUDGET);
    const many_ = expectOk(await many.t.post('maintenance/sweep')) as { transaction_id: string };
    const one_ = expectOk(await one.t.post('maintenance/sweep')) as { transaction_id: string };
    expect((await describeTx(many_.transaction_id)).properties).toMatchObject({ 'rask.tier': 'task', 'rask.tier_reason': `estimate: ${many.bytes} bytes > ${BUDGET} (maintenance_sweep)` });
    // One fragment has nothing to merge with: the sweep only cleans up, whatever the table's size.
    expect(one.bytes).toBeGreaterThan(BUDGET);
    expect((await describeTx(one_.transaction_id)).properties).toMatchObject({ 'rask.tier': 'function', 'rask.tier_reason': `estimate: 0 bytes ≤ ${BUDGET} (maintenance_sweep)` });

    await s.jobs.runOnce();
    const done = await settle(many_.transaction_id);
    expect(done.status, JSON.stringify(done.properties)).toBe('Succeeded');
    expect(done.properties['rask.worker']).toMatch(/^task:/);
    expect(await many.t.count()).toBe(600);
  }, 180_000);
});
