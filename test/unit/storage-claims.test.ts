// @covers CreateWarehouse, DeleteWarehouse
/**
 * The storage-claims index (docs/protocols.md, "Storage roots never overlap") under real
 * concurrency with random interleavings (a jittery store, memory and filesystem), and its
 * crash states: a claim left without its warehouse keeps the root until it is stale.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { claimStorageRoot, readStorageClaims, refuseSharedRoot, sharedRootProblem, STALE_CLAIM_MS } from '../../lib/catalog/storage-claims.js';
import { requireWarehouse } from '../../lib/catalog/warehouses.js';
import { createProject } from '../../lib/catalog/control/projects.js';
import { createWarehouse, deleteWarehouse } from '../../lib/catalog/control/warehouses.js';
import { parseStorageRoot } from '../../lib/registry/storage-roots.js';
import { keys } from '../../lib/registry/keys.js';
import type { StorageClaimsRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

const admin = { principal: 'root', platformAdmin: true, via: 'api-key' as const };

describe.each(['memory', 'fs'] as const)('storage claims (%s store)', (kind) => {
  let f: ServicesFixture | undefined;
  afterEach(async () => f?.cleanup());

  it('of 8 racing creates with pairwise-overlapping roots exactly one wins, over 15 rounds; disjoint ones all win', async () => {
    f = await servicesOver(kind, { jitterTurns: 3, tmpfs: true });
    const s = f.services;
    await createProject(s, admin, { name: 'acme' });
    for (let round = 0; round < 15; round++) {
      const base = `/w/acme/r${round}`;
      // Pairwise overlapping (a chain): any two of them share storage, so only one may exist.
      const roots = [base, `${base}/a`, `${base}/a/b`, `${base}/`, `${base}/./a/..`, `${base}/a/`, base, `${base}/a/b/c/d`];
      const results = await Promise.allSettled(roots.map((root, i) => createWarehouse(s, 'acme', { name: `w${round}-${i}`, storageRoot: parseStorageRoot(root) })));
      expect(results.filter((r) => r.status === 'fulfilled'), `round ${round}`).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 19 });
    }
    const disjoint = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => createWarehouse(s, 'acme', { name: `d${i}`, storageRoot: parseStorageRoot(`/w/acme/d/${i}`) })));
    expect(disjoint.map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));
    // One claim per warehouse that exists, no more.
    const index = (await f.direct.registry.read<StorageClaimsRecord>(keys.storageClaims()))!.value;
    const acme = index.claims.filter((c) => c.project === 'acme').map((c) => c.warehouse).sort();
    const records = (await f.direct.registry.store.list({ prefix: keys.warehousesPrefix('acme') })).objects.length;
    expect(acme).toHaveLength(records);
  });

  it('the overlap checks read the index without writing it: built in memory when it does not exist (read-only roles run them)', async () => {
    f = await servicesOver(kind);
    const s = f.services;
    await f.direct.registry.store.delete(keys.storageClaims()).catch(() => undefined);
    const main = await requireWarehouse(s, s.defaultWarehouse);
    await refuseSharedRoot(s, main, 'scan for orphans');
    expect(await f.direct.registry.read(keys.storageClaims())).toBeUndefined();
    // The in-memory view still sees an overlap: a second record on the same root (written
    // directly, as a hand-made registry could hold it).
    await f.direct.registry.create(keys.warehouse(main.project, 'alias'), { ...main, name: 'alias' });
    expect(await sharedRootProblem(s, main)).toMatch(/overlaps the storage of another warehouse/);
    await expect(refuseSharedRoot(s, main, 'scan for orphans')).rejects.toMatchObject({ code: 19 });
    expect(await f.direct.registry.read(keys.storageClaims())).toBeUndefined();
    // A door that changes the index still writes it.
    await readStorageClaims(s);
    expect(await f.direct.registry.read(keys.storageClaims())).toBeDefined();
  });

  it('a claim whose create crashed keeps its root until it is stale; a delete frees the root', async () => {
    f = await servicesOver(kind);
    let now = Date.parse('2026-01-01T00:00:00Z');
    const s = { ...f.services, now: () => new Date(now) };
    await createProject(s, admin, { name: 'acme' });
    // The crash: the claim was written, the warehouse record never was.
    await claimStorageRoot(s, { project: 'acme', warehouse: 'ghost', storage: { kind: 'file', path: '/w/acme/x' } }, () => new Error('taken'));
    await expect(createWarehouse(s, 'acme', { name: 'w', storageRoot: parseStorageRoot('/w/acme/x/y') })).rejects.toMatchObject({ code: 19 });
    now += STALE_CLAIM_MS + 1;
    await createWarehouse(s, 'acme', { name: 'w', storageRoot: parseStorageRoot('/w/acme/x/y') });
    expect((await readStorageClaims(s)).value.claims.map((c) => c.warehouse)).not.toContain('ghost');
    // A stale claim of a warehouse that does exist is not dropped: it is still its root.
    now += STALE_CLAIM_MS + 1;
    await expect(createWarehouse(s, 'acme', { name: 'w2', storageRoot: parseStorageRoot('/w/acme/x') })).rejects.toMatchObject({ code: 19 });
    await deleteWarehouse(s, 'acme', 'w');
    await createWarehouse(s, 'acme', { name: 'w2', storageRoot: parseStorageRoot('/w/acme/x') });
  });

  it('the index is built from the warehouse records an older server wrote', async () => {
    f = await servicesOver(kind);
    const s = f.services;
    await createProject(s, admin, { name: 'acme' });
    await s.registry.create(keys.warehouse('acme', 'old'), { kind: 'warehouse', project: 'acme', name: 'old', storage: { kind: 'file', path: '/w/acme/old' }, managedVersioning: true, trashGraceDays: 0, createdAt: new Date().toISOString() });
    await expect(createWarehouse(s, 'acme', { name: 'new', storageRoot: parseStorageRoot('/w/acme/old/inside') })).rejects.toMatchObject({ code: 19 });
    expect((await readStorageClaims(s)).value.claims.map((c) => c.warehouse).sort()).toEqual(['default', 'old']);
  });
});
