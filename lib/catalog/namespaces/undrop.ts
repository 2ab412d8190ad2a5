import { ConcurrentModificationError, InvalidInputError, NamespaceAlreadyExistsError, NamespaceNotFoundError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys, validateName } from '../../registry/keys.js';
import type { NamespaceRecord, TrashRecord } from '../../registry/records.js';
import { crashPoint } from '../crash-points.js';
import { settleNamespace } from './drop.js';
import { confirmParentOrWithdraw, requireNamespace } from './lookup.js';
import { readNamespace } from './record.js';
import { namespaceTrashAt, subtreeMembers } from './trash-records.js';
import { sameId } from '../../http/ids.js';
import { fmtId, validateId } from '../ids.js';
import type { CatalogServices } from '../services.js';
import { hasData } from '../protocols/lookup.js';
import { restoreTable } from '../tables/undrop.js';
import { NO_QUOTAS, reserveQuota, type QuotaHold } from '../quotas.js';
import { requireWarehouse } from '../warehouses.js';

/**
 * The namespace undrop door (docs/lifecycle.md, "Namespace subtrees"). A recoverable cascade
 * drop (drop.ts with trash-records.ts) leaves one trash record per namespace and per table of
 * the subtree, all carrying the drop's `dropId` and one deadline (tasks.ts lists them). The
 * undrop rebuilds the namespaces shallowest-first (same uid, properties, warehouse binding),
 * then re-registers every table (tables/undrop.ts, restoreTable), then removes the namespace
 * records, the root's last: as long as the root's record is there the job is not finished, and
 * any number of later calls pick it up where it stopped. Every step is put-if-absent or
 * delete-if-match; an object already back under its uid counts as restored.
 */

export interface NamespaceUndropResult {
  readonly id: string[];
  readonly restored: true;
  /** Namespaces and tables this call found in trash and brought back (an interrupted call's rest). */
  readonly namespaces: number;
  readonly tables: number;
  /** Tables left in trash, and why (declared but never written: nothing to open). */
  readonly warnings?: string[];
}

/**
 * `POST /v1/namespace/{id}/undrop`: rebuilds the subtree most recently dropped at `id` (or under
 * `newName`, a sibling name, when `id` was re-used meanwhile). 404 / 1 when nothing is in trash
 * there; 409 / 2 naming the namespace that now uses the name; 400 / 13 when `id` went with an
 * ancestor's drop (undrop that one).
 */
export async function undropNamespace(services: CatalogServices, input: { id: readonly string[]; newName?: string }): Promise<NamespaceUndropResult> {
  const { id } = input;
  if (id.length === 0) throw new InvalidInputError('the root namespace cannot be undropped');
  validateId('namespace', id);
  if (input.newName !== undefined) validateName('namespace', input.newName);
  const target = input.newName === undefined ? [...id] : [...id.slice(0, -1), input.newName];
  // A detach still under way, or interrupted, is finished first: the undrop starts from a whole subtree.
  await settleNamespace(services, id);
  if (!sameId(target, id)) await settleNamespace(services, target);

  const { records } = await namespaceTrashAt(services, id);
  const roots = records.filter((r) => sameId(r.value.subtree.root, id));
  if (roots.length === 0) {
    const member = records[0];
    if (member) {
      throw new InvalidInputError(
        `namespace ${fmtId(id)} was dropped with namespace ${fmtId(member.value.subtree.root)}; undrop that one (POST /v1/namespace/{id}/undrop on it) to bring this one back`,
      );
    }
    throw new NamespaceNotFoundError(`namespace ${fmtId(id)} has nothing in trash to undrop`);
  }
  const live = await readNamespace(services, target);
  // Resume the undrop that already rebuilt the root here; otherwise the most recent drop.
  const root =
    roots.find((r) => r.value.namespace.uid === live?.value.uid) ?? roots.sort((a, b) => b.value.droppedAt.localeCompare(a.value.droppedAt))[0];
  if (live && live.value.uid !== root.value.namespace.uid) {
    throw new NamespaceAlreadyExistsError(
      `namespace ${fmtId(target)} exists (created after the drop); undrop under another name with new_namespace_name`,
    );
  }
  await requireNamespace(services, target.slice(0, -1), '; create it (or undrop it) before undropping a namespace into it');

  const moved = (old: readonly string[]) => [...target, ...old.slice(id.length)];
  const members = await subtreeMembers(services, id, root.value.subtree.dropId);
  // Shallowest first: each namespace's parent is back before it is.
  const namespaces = [root, ...members.namespaces].sort((a, b) => a.value.namespace.id.length - b.value.namespace.id.length);
  const warnings: string[] = [];
  const restorable: { key: string; to: string[] }[] = [];
  for (const table of members.tables) {
    const record = table.value.table;
    const to = moved(record.id);
    const warehouse = await requireWarehouse(services, record.warehouse);
    if (!(await hasData(services.storageFor(warehouse.storage), record.path))) {
      warnings.push(
        `table ${fmtId(to)} was declared but never written: left in trash (undrop it with POST /v1/table/{id}/undrop${sameId(to, record.id) ? '' : ` naming ${fmtId(record.id)}`})`,
      );
      continue;
    }
    restorable.push({ key: table.key, to });
  }
  // Every namespace and table it brings back is one more of the project's objects: their quota
  // slots are taken, all or none, before anything is restored (lib/catalog/quotas.ts).
  const holds = await reserveSubtree(
    services,
    namespaces.map((ns) => keys.namespace(services.project, moved(ns.value.namespace.id))),
    restorable.map((t) => keys.table(services.project, t.to)),
  );
  // Once one object is back the slots stay taken whatever happens next (a recount settles them):
  // handing them back after a partial restore could let the project pass its quota.
  let restoredOne = false;
  try {
    for (const ns of namespaces) {
      await restoreNamespace(services, ns.value.namespace, moved(ns.value.namespace.id));
      restoredOne = true;
      await crashPoint(services, 'namespace-undrop:namespace-restored');
    }
    for (const table of restorable) {
      await services.registry.retrying(`undrop table ${fmtId(table.to)}`, async () => {
        const fresh = await services.registry.read<TrashRecord>(table.key);
        if (fresh) await restoreTable(services, fresh, table.to);
      });
      await crashPoint(services, 'namespace-undrop:table-restored');
    }
  } catch (err) {
    if (!restoredOne) for (const hold of holds) await hold?.failed(err);
    throw err;
  }
  const tables = restorable.length;
  // Tidy up, the root's record last: until it goes, the job is visibly unfinished and resumable.
  for (const ns of [...namespaces].reverse()) await removeQuietly(services, ns.key, ns.etag);
  return { id: target, restored: true, namespaces: namespaces.length, tables, ...(warnings.length ? { warnings } : {}) };
}

/** Put-if-absent of the record as it was; the same uid already there counts as restored. */
async function restoreNamespace(services: CatalogServices, record: NamespaceRecord, to: string[]): Promise<void> {
  const key = keys.namespace(services.project, to);
  const back: NamespaceRecord = { ...record, id: to, state: 'active' };
  let etag: string;
  try {
    etag = await services.registry.create(key, back);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const existing = await readNamespace(services, to);
    if (!existing) throw new ConcurrentModificationError(`namespace ${fmtId(to)} changed while it was undropped; retry`);
    if (existing.value.uid !== record.uid) {
      throw new NamespaceAlreadyExistsError(`namespace ${fmtId(to)} exists (created meanwhile); drop it, or undrop under another name with new_namespace_name`);
    }
    if (existing.value.state !== 'active') throw new ConcurrentModificationError(`namespace ${fmtId(to)} is being dropped again; retry the undrop after it`);
    return;
  }
  await confirmParentOrWithdraw(services, to.slice(0, -1), key, etag);
}

/** The namespace and table slots of a subtree coming back; the tables' are given back if the namespaces' are refused. */
async function reserveSubtree(services: CatalogServices, namespaceKeys: string[], tableKeys: string[]): Promise<(QuotaHold | undefined)[]> {
  const defaults = services.limits?.quotas ?? NO_QUOTAS;
  const tables = await reserveQuota(services, 'tables', tableKeys, defaults);
  try {
    return [tables, await reserveQuota(services, 'namespaces', namespaceKeys, defaults)];
  } catch (err) {
    // Refused, nothing restored: the table slots are free again (a refusal is a PermissionDenied, wroteNothing).
    await tables?.failed(err);
    throw err;
  }
}

async function removeQuietly(services: CatalogServices, key: string, etag: string): Promise<void> {
  try {
    await services.registry.remove(key, etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
  }
}
