import { InternalError } from '../errors.js';
import { keys } from '../registry/keys.js';
import type { WarehouseRecord } from '../registry/records.js';
import type { Registry } from '../registry/registry.js';
import type { CatalogServices } from './services.js';

/**
 * How long a warehouse record read by one request may serve the next ones in this process.
 * Every table operation needs its warehouse (the storage root, which never changes), so caching
 * saves a registry GET on each client open and commit. Settings that can change (trash grace
 * days) decide destructive things, and those callers read strictly (design brief rule 8).
 */
const CACHE_MS = 30_000;

const caches = new WeakMap<Registry, Map<string, { record: WarehouseRecord; until: number }>>();

function cacheOf(registry: Registry) {
  let cache = caches.get(registry);
  if (!cache) caches.set(registry, (cache = new Map()));
  return cache;
}

/** Start-up read the warehouse record already (lib/registry/layout.ts openRegistry): keep it. */
export function rememberWarehouse(registry: Registry, project: string, record: WarehouseRecord): void {
  cacheOf(registry).set(`${project}\u0000${record.name}`, { record, until: Date.now() + CACHE_MS });
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
  const cache = cacheOf(services.registry);
  const key = `${services.project}\u0000${name}`;
  const hit = cache.get(key);
  const now = Date.now();
  if (!options.strict && hit && hit.until > now) return hit.record;
  const found = await services.registry.read<WarehouseRecord>(keys.warehouse(services.project, name));
  if (!found) {
    cache.delete(key);
    throw new InternalError(`warehouse ${JSON.stringify(name)} is missing from the registry`);
  }
  cache.set(key, { record: found.value, until: now + CACHE_MS });
  return found.value;
}
