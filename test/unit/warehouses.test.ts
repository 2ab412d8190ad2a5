import { afterEach, describe, expect, it, vi } from 'vitest';
import { requireWarehouse } from '../../lib/catalog/warehouses.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

describe('warehouse lookups', () => {
  let f: ServicesFixture;
  afterEach(() => f?.cleanup());

  it('serve repeated reads from a short-lived cache, but strict reads always go to the registry', async () => {
    f = await servicesOver('memory');
    const s = f.services;
    const read = vi.spyOn(s.registry, 'read');
    const first = await requireWarehouse(s, 'default');
    await requireWarehouse(s, 'default');
    expect(read).toHaveBeenCalledTimes(1);

    // A setting that decides destruction changes: a strict read sees it at once.
    const key = keys.warehouse(s.project, 'default');
    const current = (await s.registry.read<WarehouseRecord>(key))!;
    await s.registry.replace(key, { ...current.value, trashGraceDays: 7 }, current.etag);
    read.mockClear();
    expect((await requireWarehouse(s, 'default', { strict: true })).trashGraceDays).toBe(7);
    expect(read).toHaveBeenCalledTimes(1);
    expect(first.trashGraceDays).toBe(0);
  });

  it('fail loudly for a warehouse missing from the registry', async () => {
    f = await servicesOver('memory');
    await expect(requireWarehouse(f.services, 'nope')).rejects.toMatchObject({ code: 18 });
  });
});
