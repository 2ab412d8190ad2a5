import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { ensureDefaults, ensureLayout } from '../../lib/registry/layout.js';
import type { StorageRoot } from '../../lib/ports/storage-root.js';
import { Registry, type RetryPolicy } from '../../lib/registry/registry.js';
import { jittery, turnJittery } from './jittery-store.js';

export interface ServicesFixture {
  readonly services: CatalogServices;
  /**
   * The same catalog without the jitter: for checks between iterations of a race test, which
   * read every record and would otherwise spend most of the test waiting on simulated latency.
   */
  readonly direct: CatalogServices;
  cleanup(): Promise<void>;
}

/**
 * Catalog services over a real store implementation, for tests that call the catalog directly
 * (race tests run many iterations; going through HTTP would only add noise).
 */
export async function servicesOver(
  kind: 'memory' | 'fs',
  options: {
    retry?: RetryPolicy;
    /** Random latency of 0–n ms per store call (tests whose timing is in ms, e.g. leases). */
    jitterMs?: number;
    /** Random latency of 0–n event-loop turns per store call (race tests: same interleavings, faster). */
    jitterTurns?: number;
    /**
     * Put an fs store on tmpfs (/dev/shm) when there is one: the same link/rename/lock semantics
     * without paying a disk fsync per write, for tests that make thousands of writes.
     */
    tmpfs?: boolean;
  } = {},
): Promise<ServicesFixture> {
  const base = options.tmpfs && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = kind === 'fs' ? await mkdtemp(path.join(base, 'rask-svc-')) : undefined;
  const baseStore: ObjectStore = dir ? new FsObjectStore(path.join(dir, 'registry')) : new MemoryObjectStore();
  // Race tests need interleavings a local store never produces on its own.
  const registryStore = options.jitterMs
    ? jittery(baseStore, options.jitterMs)
    : options.jitterTurns
      ? turnJittery(baseStore, options.jitterTurns)
      : baseStore;
  const warehouseRoot: StorageRoot = { kind: 'file', path: dir ? path.join(dir, 'warehouse') : '/nonexistent/warehouse' };
  const warehouseStore: ObjectStore = dir ? new FsObjectStore(warehouseRoot.path) : new MemoryObjectStore();
  const registry = new Registry(registryStore, options.retry);
  await ensureLayout(registry);
  await ensureDefaults(registry, {
    project: 'default',
    warehouse: 'default',
    storage: warehouseRoot,
    managedVersioning: true,
    trashGraceDays: 0,
  });
  const services: CatalogServices = {
    registry,
    project: 'default',
    defaultWarehouse: 'default',
    storageFor: () => warehouseStore,
    // Project P may put warehouses under /w/P (docs/governance.md, "Storage allotment").
    storage: { roots: [{ kind: 'file', path: '/w' }], platformWarehouse: warehouseRoot },
    vendor: noCredentials,
    now: () => new Date(),
    newId: () => randomUUID(),
  };
  const direct: CatalogServices = { ...services, registry: new Registry(baseStore, options.retry) };
  return { services, direct, cleanup: async () => (dir ? rm(dir, { recursive: true, force: true }) : undefined) };
}
