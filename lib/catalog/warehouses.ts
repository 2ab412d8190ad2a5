import path from 'node:path';
import { InternalError } from '../errors.js';
import { keys } from '../registry/keys.js';
import type { WarehouseRecord } from '../registry/records.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { RecordCache } from '../registry/record-cache.js';
import type { Registry } from '../registry/registry.js';
import type { CatalogServices } from './services.js';

/**
 * How long a warehouse record read by one request may serve the next ones in this process.
 * Every table operation needs its warehouse (the storage root, which never changes), so caching
 * saves a registry GET on each client open and commit. Settings that can change (trash grace
 * days) decide destructive things, and those callers read strictly (docs/rules.md rule 8).
 */
const CACHE_MS = 30_000;

/**
 * Warehouse records remembered per registry at most, least recently read dropped first
 * (docs/architecture.md, "Caches and their bounds").
 */
export const MAX_CACHED_WAREHOUSES = 1024;

const cache = new RecordCache<WarehouseRecord>(CACHE_MS, MAX_CACHED_WAREHOUSES);

/** Warehouse records cached now for `registry`, for tests. */
export function cachedWarehouses(registry: Registry): number {
  return cache.size(registry);
}

/** Start-up read the warehouse record already (lib/registry/layout.ts openRegistry): keep it. */
export function rememberWarehouse(registry: Registry, project: string, record: WarehouseRecord, fileRootBase: string | undefined): void {
  // Cached as requireWarehouse would cache it: with a relative file root resolved.
  const resolved = { ...record, storage: resolveStorageRoot(record.storage, fileRootBase) };
  cache.set(registry, `${project}\u0000${record.name}`, resolved);
}

/**
 * The warehouse a namespace or table is bound to; its absence is a broken registry. `strict`
 * bypasses the cache: use it wherever the answer decides whether bytes are destroyed.
 */
export async function requireWarehouse(
  services: CatalogServices,
  name: string,
  options: { strict?: boolean } = {},
): Promise<WarehouseRecord> {
  const key = `${services.project}\u0000${name}`;
  const hit = options.strict ? undefined : cache.get(services.registry, key);
  if (hit) return hit;
  const found = await services.registry.read<WarehouseRecord>(keys.warehouse(services.project, name));
  if (!found) {
    cache.delete(services.registry, key);
    throw new InternalError(`warehouse ${JSON.stringify(name)} is missing from the registry`);
  }
  const record = { ...found.value, storage: resolveStorageRoot(found.value.storage, services.fileRootBase) };
  cache.set(services.registry, key, record);
  return record;
}

/**
 * A warehouse's storage root as the process uses it: a relative file root (the local default
 * warehouse, stored relative to the data directory) joined to `base`; anything else as stored.
 */
export function resolveStorageRoot(root: StorageRoot, base: string | undefined): StorageRoot {
  if (root.kind !== 'file' || path.isAbsolute(root.path)) return root;
  if (base === undefined) throw new InternalError('a warehouse has a relative file storage root, and this process has no data directory');
  return { kind: 'file', path: path.join(base, root.path) };
}
