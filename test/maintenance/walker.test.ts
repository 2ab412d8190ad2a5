import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { forEachTable } from '../../lib/maintenance/walker.js';
import { keys } from '../../lib/registry/keys.js';
import { ensureDefaults } from '../../lib/registry/layout.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { estate, tableWithAppends, type Estate } from './fixtures.js';

let current: Estate | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('walker: every table of every warehouse, from the registry', () => {
  it('finds a project and warehouse created after the services were built, and reports a table whose warehouse is gone', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 't'], 0);
    // A second project with its own warehouse, written to the registry later: no configuration knows it.
    await ensureDefaults(e.services.registry, {
      project: 'p2',
      warehouse: 'w2',
      storage: { kind: 'file', path: path.join(e.dir, 'w2') },
      managedVersioning: false,
      trashGraceDays: 0,
    });
    const p2 = { ...e.services, project: 'p2', defaultWarehouse: 'w2' };
    await tableWithAppends(p2, ['x', 'y'], 0);

    const seen: string[] = [];
    const result = await forEachTable(e.services, {}, async (unit) => {
      seen.push(`${unit.project}:${unit.id.join('.')}@${unit.warehouse.name}`);
    });
    expect(seen).toEqual(['default:a.t@default', 'p2:x.y@w2']);
    expect(result).toMatchObject({ visited: 2, complete: true, problems: [] });

    // A table bound to a warehouse missing from the registry is a problem, not a silent skip.
    const k = keys.table('p2', ['x', 'y']);
    const rec = (await e.services.registry.read<TableRecord>(k))!;
    await e.services.registry.replace(k, { ...rec.value, warehouse: 'gone' }, rec.etag);
    const broken = await forEachTable(e.services, {}, async () => undefined);
    expect(broken.complete).toBe(false);
    expect(broken.problems).toEqual([expect.stringMatching(/\["x","y"\] of project p2 is bound to warehouse "gone"/)]);

    // An unreadable warehouse record is a problem too; the other warehouses' tables are still walked.
    await e.services.registry.store.put(keys.warehouse('p2', 'gone'), '{not json');
    const seen2: string[] = [];
    const unreadable = await forEachTable(e.services, {}, async (unit) => void seen2.push(unit.id.join('.')));
    expect(seen2).toEqual(['a.t']);
    expect(unreadable.problems).toEqual([
      expect.stringMatching(/warehouse record p\/p2\/w\/gone: .*unreadable/),
      expect.stringMatching(/bound to warehouse "gone"/),
    ]);
  });

  it('a unit that fails is reported and the walk goes on', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 'one'], 0);
    await tableWithAppends(e.services, ['a', 'two'], 0);
    const seen: string[] = [];
    const result = await forEachTable(e.services, {}, async (unit) => {
      if (unit.id[1] === 'one') throw new Error('boom');
      seen.push(unit.id.join('.'));
    });
    expect(seen).toEqual(['a.two']);
    expect(result.complete).toBe(false);
    expect(result.problems).toEqual(['table ["a","one"] of project default: boom']);
  });
});
