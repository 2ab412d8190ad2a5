import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { s3RegistryHistory } from '../../lib/adapters/aws/s3-registry-history.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { journaled, RegistryJournal } from '../../lib/adapters/local/registry-journal.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import type { RegistryHistory } from '../../lib/ports/registry-history.js';
import { ensureDefaults, ensureLayout } from '../../lib/registry/layout.js';
import { Registry } from '../../lib/registry/registry.js';
import { createS3Fake, type S3Fake } from './s3-fake.js';

export type HistoryKind = 'memory' | 'fs' | 's3';

export interface HistoriedFixture {
  readonly services: CatalogServices;
  readonly history: RegistryHistory;
  /** The registry's store (journaled where the history is a journal). */
  readonly store: ObjectStore;
  /** The warehouse's store (memory), behind `services.storageFor`. */
  readonly warehouse: ObjectStore;
  readonly fake?: S3Fake;
  /** Services of another project on the same registry. */
  forProject(project: string): Promise<CatalogServices>;
  cleanup(): Promise<void>;
}

/**
 * Catalog services over a registry that keeps history (issue #30): the memory and fs stores with
 * the registry journal, or an S3 registry (the fake, whose every bucket is versioned) with its
 * object versions. The warehouse is in memory; `wrapWarehouse` may put something around it.
 */
export async function historied(
  kind: HistoryKind,
  options: { retry?: { attempts: number; baseDelayMs: number; maxDelayMs: number }; s3LatencyMs?: number; wrapWarehouse?: (s: ObjectStore) => ObjectStore; retentionMs?: number } = {},
): Promise<HistoriedFixture> {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = kind === 'fs' ? await mkdtemp(path.join(base, 'rask-hist-')) : undefined;
  let store: ObjectStore;
  let history: RegistryHistory;
  let fake: S3Fake | undefined;
  const retentionMs = options.retentionMs ?? 7 * 86_400_000;
  if (kind === 's3') {
    fake = createS3Fake(options.s3LatencyMs ? { latency: () => options.s3LatencyMs! } : {});
    store = new S3ObjectStore({ client: fake.client, bucket: 'reg', prefix: 'registry/' });
    history = s3RegistryHistory({ client: fake.client, bucket: 'reg', prefix: 'registry/', retainedDays: retentionMs / 86_400_000 });
  } else {
    const inner = dir ? new FsObjectStore(path.join(dir, 'registry')) : new MemoryObjectStore();
    const journal = await RegistryJournal.open(inner, { ...(dir ? { dir: path.join(dir, 'registry-journal') } : {}), retentionMs });
    store = journaled(inner, journal);
    history = journal;
  }
  const warehouseRoot = { kind: 'file' as const, path: '/nonexistent/warehouse' };
  const memoryWarehouse = new MemoryObjectStore();
  const warehouse = options.wrapWarehouse ? options.wrapWarehouse(memoryWarehouse) : memoryWarehouse;
  const registry = new Registry(store, options.retry);
  const forProject = async (project: string): Promise<CatalogServices> => {
    await ensureDefaults(registry, { project, warehouse: 'default', storage: warehouseRoot, managedVersioning: true, trashGraceDays: 0 });
    return {
      registry,
      project,
      defaultWarehouse: 'default',
      storageFor: () => warehouse,
      storage: { roots: [{ kind: 'file', path: '/w' }], platformWarehouse: warehouseRoot },
      vendor: noCredentials,
      now: () => new Date(),
      newId: () => randomUUID(),
    };
  };
  await ensureLayout(registry);
  const services = await forProject('default');
  return {
    services,
    history,
    store,
    warehouse,
    ...(fake ? { fake } : {}),
    forProject,
    cleanup: async () => {
      if (history instanceof RegistryJournal) history.close();
      fake?.mock.restore();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
