import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { NamespaceRecord, NamespaceTrashRecord, SubtreeDrop } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';

/**
 * The namespace half of a recoverable cascade drop (docs/lifecycle.md, "Namespace subtrees"):
 * the decision to detach rather than destroy, and the trash record each namespace leaves. The
 * drop protocol itself stays in namespaces.ts; the undrop and tasks doors are in
 * namespace-undrop.ts.
 */

/**
 * The subtree-drop context for a cascade of `namespace`, or undefined when its warehouse keeps
 * nothing (grace 0). Read strictly: whether bytes are destroyed is decided here (brief rule 8).
 */
export async function subtreeDropFor(services: CatalogServices, namespace: NamespaceRecord, principal: string | undefined): Promise<SubtreeDrop | undefined> {
  const warehouse = await requireWarehouse(services, namespace.warehouse, { strict: true });
  if (!(warehouse.trashGraceDays > 0)) return undefined;
  const now = services.now();
  return {
    root: [...namespace.id],
    dropId: services.newId(),
    droppedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + warehouse.trashGraceDays * 86_400_000).toISOString(),
    droppedBy: principal ?? 'anonymous',
  };
}

/**
 * Files a namespace that a recoverable cascade has emptied, before its record is removed. Keyed
 * by the drop, so a repeat (whoever finishes an interrupted drop) finds it there and moves on.
 */
export async function fileNamespace(services: CatalogServices, marked: NamespaceRecord, trash: SubtreeDrop): Promise<void> {
  const { drop: _drop, ...rest } = marked;
  const record: NamespaceTrashRecord = {
    kind: 'trash',
    object: 'namespace',
    namespace: { ...rest, state: 'active' },
    droppedAt: trash.droppedAt,
    expiresAt: trash.expiresAt,
    droppedBy: trash.droppedBy,
    subtree: { root: [...trash.root], dropId: trash.dropId },
  };
  try {
    await services.registry.create(keys.namespaceTrash(services.project, marked.id, trash.dropId), record);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err; // filed already by an earlier attempt
  }
}
