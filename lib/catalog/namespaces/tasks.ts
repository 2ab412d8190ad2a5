import type { CatalogServices } from '../services.js';
import { sameId } from '../../http/ids.js';
import { validateId } from '../ids.js';
import { namespaceTrashAt, subtreeMembers } from './trash-records.js';

/** The namespace tasks door (docs/lifecycle.md, "Namespace subtrees"): what a recoverable cascade drop left in trash. */

export interface NamespaceTrashTask {
  readonly kind: 'trash';
  readonly object: 'namespace';
  readonly id: string[];
  readonly uid: string;
  /** The namespace the drop was asked for; undrop names it (a descendant comes back with it). */
  readonly root: string[];
  readonly dropped_at: string;
  readonly expires_at: string;
  readonly dropped_by: string;
  /** For a root: how much of the subtree is still in trash. */
  readonly namespaces?: number;
  readonly tables?: number;
}

/** `GET /v1/namespace/{id}/tasks`: the pending deadlines of subtree drops that took the namespace at `id`. */
export async function namespaceTasks(services: CatalogServices, id: readonly string[]): Promise<{ tasks: NamespaceTrashTask[] }> {
  if (id.length === 0) return { tasks: [] };
  validateId('namespace', id);
  const { records, live } = await namespaceTrashAt(services, id);
  const tasks: NamespaceTrashTask[] = [];
  for (const { value } of records.sort((a, b) => b.value.droppedAt.localeCompare(a.value.droppedAt))) {
    // A record of the namespace live here is an undrop that has not finished tidying up.
    if (live?.value.uid === value.namespace.uid) continue;
    const isRoot = sameId(value.subtree.root, id);
    const counts = isRoot ? await subtreeMembers(services, id, value.subtree.dropId) : undefined;
    tasks.push({
      kind: 'trash',
      object: 'namespace',
      id: [...id],
      uid: value.namespace.uid,
      root: [...value.subtree.root],
      dropped_at: value.droppedAt,
      expires_at: value.expiresAt,
      dropped_by: value.droppedBy,
      ...(counts ? { namespaces: counts.namespaces.length + 1, tables: counts.tables.length } : {}),
    });
  }
  return { tasks };
}
