/**
 * The estate as the registry knows it: every project, every warehouse of each, and page-wise
 * walks of a registry prefix. Reconcile and the orphan scan enumerate from here, never from a
 * configured list (docs/rules.md rule 12), and read strictly: a listing or record that cannot be read
 * throws, so a pass reports itself incomplete instead of silently covering less.
 */
import { resolveStorageRoot } from '../catalog/warehouses.js';
import type { CatalogServices } from '../catalog/services.js';
import type { ObjectInfo } from '../ports/object-store.js';
import { decodeSegment, keys } from '../registry/keys.js';
import type { WarehouseRecord } from '../registry/records.js';

/** Every project name in the registry, in byte order. */
export async function listProjects(services: CatalogServices): Promise<string[]> {
  const names: string[] = [];
  for await (const obj of walk(services, keys.projectsPrefix())) {
    const rest = obj.key.slice(keys.projectsPrefix().length);
    if (!rest.includes('/')) names.push(decodeSegment(rest));
  }
  return names;
}

/** Every warehouse record of `project`. An unreadable record throws. */
export async function listWarehouses(services: CatalogServices, project: string): Promise<WarehouseRecord[]> {
  const out: WarehouseRecord[] = [];
  const prefix = keys.warehousesPrefix(project);
  for await (const obj of walk(services, prefix)) {
    if (obj.key.slice(prefix.length).includes('/')) continue;
    const found = await services.registry.read<WarehouseRecord>(obj.key);
    if (found) out.push({ ...found.value, storage: resolveStorageRoot(found.value.storage, services.fileRootBase) });
  }
  return out;
}

/**
 * The same services, addressing another project of the registry. Job settings carry a queue
 * per project (lib/queue/context.ts), so that project's jobs are the ones reached.
 */
export function forProject(services: CatalogServices, project: string): CatalogServices {
  return project === services.project ? services : { ...services, project };
}

/** Every object under `prefix`, one LIST per page, starting after `startAfter` (a full key). */
export async function* walk(services: CatalogServices, prefix: string, startAfter?: string, pageSize = 1000): AsyncGenerator<ObjectInfo> {
  let after = startAfter;
  for (;;) {
    const page = await services.registry.store.list({ prefix, startAfter: after, limit: pageSize });
    yield* page.objects;
    const last = page.objects[page.objects.length - 1];
    if (!page.truncated || !last) return;
    after = last.key;
  }
}

/** A pass's resumable position: which project, which phase, and the last key done. */
export interface Cursor {
  readonly project: string;
  readonly phase: string;
  readonly after?: string;
}

export const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify(c)).toString('base64url');

export function decodeCursor(cursor: string | undefined): Cursor | undefined {
  if (!cursor) return undefined;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    return typeof c.project === 'string' && typeof c.phase === 'string' ? c : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `id` lies in the scope (a namespace and its descendants, or one table). */
export function inScope(id: readonly string[], scope: { namespace?: readonly string[]; table?: readonly string[] } | undefined): boolean {
  if (!scope) return true;
  if (scope.table) return id.length === scope.table.length && id.every((p, i) => p === scope.table![i]);
  if (scope.namespace) return id.length >= scope.namespace.length && scope.namespace.every((p, i) => p === id[i]);
  return true;
}
