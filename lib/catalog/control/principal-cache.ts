import { readPrincipal } from '../../auth/credentials.js';
import type { PrincipalRecord } from '../../registry/principal-records.js';
import { RecordCache } from '../../registry/record-cache.js';
import type { Registry } from '../../registry/registry.js';
import { PROJECT_CACHE_MS } from './project-cache.js';

/**
 * Principal records as the rate limiter and the key quota see them (their own limits): cached
 * per process like project records (lib/catalog/control/project-cache.ts), so a request pays no
 * registry GET for its principal's rate. A change in this process is seen at once; other
 * processes see it within the same 30 s. A missing principal is cached as missing too (the
 * bootstrap key's `admin` may have no record, and auth-off's `anonymous` never has): all it
 * means here is "no limits of its own".
 */
export const PRINCIPAL_CACHE_MS = PROJECT_CACHE_MS;
/** Principals remembered per registry at most (docs/architecture.md, "Caches and their bounds"). */
export const MAX_CACHED_PRINCIPALS = 1024;

const cache = new RecordCache<{ readonly record?: PrincipalRecord }>(PRINCIPAL_CACHE_MS, MAX_CACHED_PRINCIPALS);

export async function cachedPrincipal(registry: Registry, name: string, now = Date.now()): Promise<PrincipalRecord | undefined> {
  const hit = cache.get(registry, name, now);
  if (hit) return hit.record;
  const found = await readPrincipal(registry, name);
  cache.set(registry, name, found ? { record: found } : {}, now);
  return found;
}

/** After a write to the principal record in this process. */
export function forgetPrincipal(registry: Registry, name: string): void {
  cache.delete(registry, name);
}

/** Principals cached now for `registry`, for tests. */
export function cachedPrincipals(registry: Registry): number {
  return cache.size(registry);
}
