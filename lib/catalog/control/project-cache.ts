import { keys } from '../../registry/keys.js';
import type { ProjectRecord } from '../../registry/records.js';
import { RecordCache } from '../../registry/record-cache.js';
import type { Registry } from '../../registry/registry.js';

/**
 * Project records as the guard sees them on every request: cached per process for a short time,
 * like warehouse records (lib/catalog/warehouses.ts), so a request pays no extra registry GET for
 * its project. Writes in this process forget the entry at once; other processes (Lambda
 * containers) see a change — a deactivated warehouse, a new default — within CACHE_MS
 * (docs/governance.md). A missing project is not cached: a create is seen at once.
 */
export const PROJECT_CACHE_MS = 30_000;
const CACHE_MS = PROJECT_CACHE_MS;
/**
 * Projects remembered per registry at most, least recently read dropped first: a process that
 * serves many projects keeps a bounded map (docs/architecture.md, "Caches and their bounds").
 */
export const MAX_CACHED_PROJECTS = 1024;

const cache = new RecordCache<ProjectRecord>(CACHE_MS, MAX_CACHED_PROJECTS);

export async function cachedProject(registry: Registry, project: string, now = Date.now()): Promise<ProjectRecord | undefined> {
  const hit = cache.get(registry, project, now);
  if (hit) return hit;
  const found = (await registry.read<ProjectRecord>(keys.project(project)))?.value;
  if (found) cache.set(registry, project, found, now);
  else cache.delete(registry, project);
  return found;
}

/** A project record this process has just read (start-up: lib/registry/layout.ts, openRegistry), cached as a read here would cache it. */
export function rememberProject(registry: Registry, project: string, record: ProjectRecord, now = Date.now()): void {
  cache.set(registry, project, record, now);
}

/** After a write to the project record in this process. */
export function forgetProject(registry: Registry, project: string): void {
  cache.delete(registry, project);
}

/** Projects cached now for `registry`, for tests. */
export function cachedProjects(registry: Registry): number {
  return cache.size(registry);
}
