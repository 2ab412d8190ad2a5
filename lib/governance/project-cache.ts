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
/**
 * Projects remembered per registry at most, least recently read dropped first: a process that
 * serves many projects keeps a bounded map (docs/architecture.md, "Caches and their bounds").
 */
export const MAX_CACHED_PROJECTS = 1024;

const caches = new WeakMap<Registry, Map<string, { record: ProjectRecord; until: number }>>();

function cacheOf(registry: Registry) {
  let cache = caches.get(registry);
  if (!cache) caches.set(registry, (cache = new Map()));
  return cache;
}

export async function cachedProject(registry: Registry, project: string, now = Date.now()): Promise<ProjectRecord | undefined> {
  const cache = cacheOf(registry);
  const hit = cache.get(project);
  if (hit && hit.until > now) {
    // Re-inserted: Map order is insertion order, so the oldest entry is the least recently read.
    cache.delete(project);
    cache.set(project, hit);
    return hit.record;
  }
  const found = (await registry.read<ProjectRecord>(keys.project(project)))?.value;
  cache.delete(project);
  if (found) cache.set(project, { record: found, until: now + CACHE_MS });
  while (cache.size > MAX_CACHED_PROJECTS) cache.delete(cache.keys().next().value!);
  return found;
}

/** After a write to the project record in this process. */
export function forgetProject(registry: Registry, project: string): void {
  cacheOf(registry).delete(project);
}

/** Projects cached now for `registry`, for tests. */
export function cachedProjects(registry: Registry): number {
  return cacheOf(registry).size;
}
