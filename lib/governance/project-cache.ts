import { keys } from '../registry/keys.js';
import type { ProjectRecord } from '../registry/records.js';
import type { Registry } from '../registry/registry.js';

/**
 * Project records as the guard sees them on every request: cached per process for a short time,
 * like warehouse records (lib/catalog/warehouses.ts), so a request pays no extra registry GET for
 * its project. Writes in this process forget the entry at once; other processes (Lambda
 * containers) see a change — a deactivated warehouse, a new default — within CACHE_MS
 * (docs/governance.md). A missing project is not cached: a create is seen at once.
 */
const CACHE_MS = 30_000;

const caches = new WeakMap<Registry, Map<string, { record: ProjectRecord; until: number }>>();

function cacheOf(registry: Registry) {
  let cache = caches.get(registry);
  if (!cache) caches.set(registry, (cache = new Map()));
  return cache;
}

export async function cachedProject(registry: Registry, project: string, now = Date.now()): Promise<ProjectRecord | undefined> {
  const cache = cacheOf(registry);
  const hit = cache.get(project);
  if (hit && hit.until > now) return hit.record;
  const found = (await registry.read<ProjectRecord>(keys.project(project)))?.value;
  if (found) cache.set(project, { record: found, until: now + CACHE_MS });
  else cache.delete(project);
  return found;
}

/** After a write to the project record in this process. */
export function forgetProject(registry: Registry, project: string): void {
  cacheOf(registry).delete(project);
}
