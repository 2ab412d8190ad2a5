import { afterEach, describe, expect, it } from 'vitest';
import { loadLocalConfig } from '../../lib/config.js';
import { startMaintenanceTimers, type MaintenanceTimers } from '../../lib/maintenance/timers.js';
import { estate, tableWithAppends, type Estate } from './fixtures.js';

let current: Estate | undefined;
let timers: MaintenanceTimers | undefined;
afterEach(async () => {
  await timers?.stop();
  await current?.cleanup();
  current = timers = undefined;
});

describe('local maintenance timers', () => {
  it('run each enabled pass on its timer and log its summary; 0 disables a pass', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 't'], 3);
    const logs: Record<string, unknown>[] = [];
    let seen!: () => void;
    const sweptOnce = new Promise<void>((r) => (seen = r));
    timers = startMaintenanceTimers(e.services, { sweep: 1, index: 0, reconcile: 0, orphans: 0 }, (entry) => {
      logs.push(entry);
      if (entry.pass === 'sweep') seen();
    });
    await sweptOnce; // the gate: the timer's first run has logged
    await timers.stop();
    const sweeps = logs.filter((l) => l.pass === 'sweep');
    expect(sweeps.length).toBeGreaterThanOrEqual(1);
    expect(sweeps[0]).toMatchObject({ level: 'info', summary: { tables_visited: 1 } });
    expect(logs.filter((l) => l.pass !== 'sweep')).toEqual([]);
  });

  it('with the job loop on, the sweep and the index build queue per-table jobs; reconcile still runs in-process', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 't'], 3);
    timers = startMaintenanceTimers(e.services, { sweep: 0, index: 0, reconcile: 0, orphans: 0 }, () => undefined, { fanOut: true });
    expect((await timers.runOnce('sweep'))?.summary).toMatchObject({ tables_visited: 1, jobs_queued: 1 });
    expect((await timers.runOnce('index'))?.summary).toMatchObject({ tables_visited: 1, jobs_queued: 1 });
    expect((await timers.runOnce('reconcile'))?.summary).not.toHaveProperty('jobs_queued');
  });

  it('runOnce answers undefined and warns for a pass this build does not include', async () => {
    const e = (current = await estate('fs'));
    const logs: Record<string, unknown>[] = [];
    timers = startMaintenanceTimers(e.services, { sweep: 0, index: 0, reconcile: 0, orphans: 0 }, (l) => logs.push(l));
    const { existsSync } = await import('node:fs');
    if (existsSync(new URL('../../lib/maintenance/reconcile.ts', import.meta.url))) return;
    expect(await timers.runOnce('reconcile')).toBeUndefined();
    expect(logs).toEqual([{ level: 'warn', message: 'maintenance pass reconcile is not available in this build' }]);
  });

  it('validates the interval variables', () => {
    const config = loadLocalConfig({});
    expect(config).toMatchObject({
      RASK_SWEEP_INTERVAL_MS: 3_600_000,
      RASK_INDEX_INTERVAL_MS: 300_000,
      RASK_RECONCILE_INTERVAL_MS: 900_000,
      RASK_ORPHANS_INTERVAL_MS: 86_400_000,
    });
    expect(loadLocalConfig({ RASK_SWEEP_INTERVAL_MS: '0' }).RASK_SWEEP_INTERVAL_MS).toBe(0);
    expect(() => loadLocalConfig({ RASK_SWEEP_INTERVAL_MS: '-5' })).toThrow(/RASK_SWEEP_INTERVAL_MS: must be at least 0/);
    expect(() => loadLocalConfig({ RASK_ORPHANS_INTERVAL_MS: 'daily' })).toThrow(/RASK_ORPHANS_INTERVAL_MS/);
  });
});
