import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { NamespaceRecord, NamespaceTrashRecord, SubtreeDrop, TrashRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { readNamespace } from './record.js';

/**
 * The namespace half of a recoverable cascade drop (docs/lifecycle.md, "Namespace subtrees"):
 * the decision to detach rather than destroy, the trash record each namespace leaves, and the
 * reads of those records that the undrop and tasks doors share. The drop protocol itself is in
 * drop.ts; the doors are undrop.ts and tasks.ts.
 */

/**
 * The subtree-drop context for a cascade of `namespace`, or undefined when its warehouse keeps
 * nothing (grace 0). Read strictly: whether bytes are destroyed is decided here (docs/rules.md rule 8).
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

export type Found<T> = Versioned<T> & { key: string };

async function readAll<T>(services: CatalogServices, prefix: string): Promise<Found<T>[]> {
  const out: Found<T>[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix, startAfter, limit: 1000 });
    for (const object of page.objects) {
      const found = await services.registry.read<T>(object.key);
      if (found) out.push({ ...found, key: object.key });
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return out;
    startAfter = last.key;
  }
}

/** Namespace trash records at `id` (whatever their drop), without those of the namespace live there. */
export async function namespaceTrashAt(services: CatalogServices, id: readonly string[]): Promise<{ records: Found<NamespaceTrashRecord>[]; live?: Versioned<NamespaceRecord> }> {
  const [records, live] = await Promise.all([
    readAll<NamespaceTrashRecord>(services, keys.namespaceTrashOf(services.project, id)),
    readNamespace(services, id),
  ]);
  return { records: records.filter((r) => r.value.object === 'namespace'), live };
}

/** Everything one drop filed below its root (namespaces and tables), found with one listing. */
export async function subtreeMembers(services: CatalogServices, root: readonly string[], dropId: string) {
  const all = await readAll<TrashRecord | NamespaceTrashRecord>(services, keys.trashSubtree(services.project, root));
  const ours = all.filter((r) => r.value.subtree?.dropId === dropId);
  return {
    namespaces: ours.filter((r): r is Found<NamespaceTrashRecord> => r.value.object === 'namespace'),
    tables: ours.filter((r): r is Found<TrashRecord> => r.value.object === 'table'),
  };
}
