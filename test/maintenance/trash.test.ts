import { afterEach, describe, expect, it } from 'vitest';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { datasetState } from '../../lib/adapters/lance/maintenance.js';
import { indexBuild } from '../../lib/maintenance/index-builder.js';
import { orphanScan } from '../../lib/maintenance/orphans.js';
import { reconcile } from '../../lib/maintenance/reconcile.js';
import { sweep } from '../../lib/maintenance/sweep.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { estate, tableWithAppends, type Estate } from './fixtures.js';

/**
 * Maintenance never touches a table someone can still restore (docs/rules.md rules 5 and 12):
 * a table dropped into trash is not swept or indexed, reconcile does not call its claim stale
 * (and its repair keeps it), and the orphan scan does not offer its bytes for deletion.
 */
describe('maintenance and trashed tables', () => {
  let e: Estate | undefined;
  afterEach(async () => {
    await e?.cleanup();
    e = undefined;
  });

  it('sweep, index build, reconcile (with repair) and the orphan scan (with delete) leave a trashed table intact', async () => {
    // Every file is old enough for the scan's grace period to let it delete: only reachability protects.
    const later = () => new Date(Date.now() + 30 * 86_400_000);
    e = await estate('fs', later);
    const s = e.services;
    const wkey = keys.warehouse('default', 'default');
    const w = (await s.registry.read<WarehouseRecord>(wkey))!;
    await s.registry.replace(wkey, { ...w.value, trashGraceDays: 7 }, w.etag);
    const { location } = await tableWithAppends(s, ['a', 't'], 6);
    const before = await datasetState(location);
    await dropTable(s, ['a', 't']);

    const swept = await sweep(s, { overrides: { olderThanDays: 0 } });
    expect(swept.items.map((i) => (i.table as string[]).join('.'))).not.toContain('a.t');
    await indexBuild(s, {});
    const reconciled = await reconcile(s, { repair: true });
    expect(reconciled.items.filter((i) => i.kind === 'stale-claim')).toEqual([]);
    const scanned = await orphanScan(s, { delete: true });
    expect(scanned.complete).toBe(true);
    expect(JSON.stringify(scanned.items)).not.toContain('/t.lance');

    const after = await datasetState(location);
    expect(after).toEqual(before);
    expect(after.rows).toBe(60);
  });
});
