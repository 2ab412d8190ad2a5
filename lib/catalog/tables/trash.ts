import { keys } from '../../registry/keys.js';
import type { NamespaceTrashRecord, TableRecord, TrashRecord } from '../../registry/records.js';
import type { Versioned } from '../../registry/registry.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { markPurging, releaseClaim, setClaimState } from './claims.js';
import { absoluteLocation } from './location.js';
import { readTable, tableKey, validateTableId } from './lookup.js';
import { purgeComplete, purgeInWarehouse } from './purge.js';
import { sharedRootProblem } from '../storage-claims.js';

/**
 * Recoverable drops (design brief rule 5; docs/lifecycle.md). In a warehouse with trash grace
 * days > 0, DropTable deregisters the table and files a trash record holding the record as it
 * was; the bytes stay, and the location claim moves to `trashed` so nobody else can take the
 * location meanwhile. UndropTable re-registers it unchanged (same uid, location, versions, tags).
 *
 * Protocol, every step idempotent so an interrupted drop or undrop is finished by the next call:
 *   drop:   trash record (put) → claim `trashed` → table record removed (compare-and-swap)
 *   undrop: table record created (put-if-absent) → claim `held` → trash record removed
 * A trash record whose uid is still the live table's at its id is a drop that did not finish:
 * it is not shown, and undrop treats the table as restored.
 */

export interface TrashTask {
  readonly kind: 'trash';
  readonly id: string[];
  readonly uid: string;
  readonly location: string;
  readonly dropped_at: string;
  readonly expires_at: string;
  readonly dropped_by: string;
}

/** When and by whom a table went to trash, and (for a subtree drop) which drop took it. */
export interface TrashStamp {
  readonly droppedAt: string;
  readonly expiresAt: string;
  readonly droppedBy: string;
  readonly subtree?: TrashRecord['subtree'];
}

/** A stamp for a drop now, kept `days` days. */
export function trashStamp(services: CatalogServices, days: number, principal: string): TrashStamp {
  const now = services.now();
  return { droppedAt: now.toISOString(), expiresAt: new Date(now.getTime() + days * 86_400_000).toISOString(), droppedBy: principal };
}

/** Files `table` in trash and removes its record; the caller has done every check. */
export async function trashTable(services: CatalogServices, found: Versioned<TableRecord>, stamp: TrashStamp): Promise<TrashRecord> {
  const table = found.value;
  const record: TrashRecord = {
    kind: 'trash',
    object: 'table',
    table,
    droppedAt: stamp.droppedAt,
    expiresAt: stamp.expiresAt,
    droppedBy: stamp.droppedBy,
    ...(stamp.subtree ? { subtree: { root: [...stamp.subtree.root], dropId: stamp.subtree.dropId } } : {}),
  };
  const key = keys.trash(services.project, table.id, table.uid);
  const existing = await services.registry.read<TrashRecord>(key);
  // A drop of this very table that died part-way left its record: take it over.
  if (existing) await services.registry.replace(key, record, existing.etag);
  else await services.registry.create(key, record);
  await setClaimState(services, table, 'trashed');
  await services.registry.remove(tableKey(services, table.id), found.etag);
  return record;
}

/** Trash records at `id`, newest drop first, without those of a table still live there. */
export async function trashAt(services: CatalogServices, id: readonly string[]): Promise<Versioned<TrashRecord>[]> {
  const page = await services.registry.store.list({ prefix: keys.trashOf(services.project, id), limit: 1000 });
  const live = await readTable(services, id);
  const records: Versioned<TrashRecord>[] = [];
  for (const object of page.objects) {
    const found = await services.registry.read<TrashRecord>(object.key);
    if (found && found.value.table.uid !== live?.value.uid) records.push(found);
  }
  return records.sort((a, b) => b.value.droppedAt.localeCompare(a.value.droppedAt));
}

/** `GET /v1/table/{id}/tasks`: what is pending for the name — trashed tables and their deadlines. */
export async function tableTasks(services: CatalogServices, id: readonly string[]): Promise<{ tasks: TrashTask[] }> {
  validateTableId(id);
  const records = await trashAt(services, id);
  const tasks: TrashTask[] = [];
  for (const { value } of records) {
    const warehouse = await requireWarehouse(services, value.table.warehouse);
    tasks.push({
      kind: 'trash',
      id: [...id],
      uid: value.table.uid,
      location: absoluteLocation(warehouse.storage, value.table.path),
      dropped_at: value.droppedAt,
      expires_at: value.expiresAt,
      dropped_by: value.droppedBy,
    });
  }
  return { tasks };
}

/**
 * Destroys trash whose grace has passed (the explicit maintenance step; off unless its policy
 * flag is set). Strict reads: a record it cannot read stops the run (brief rule 8). Returns what
 * it purged.
 */
export async function purgeExpiredTrash(services: CatalogServices, options: { dryRun?: boolean } = {}): Promise<{ purged: string[]; pending: string[] }> {
  const now = services.now().toISOString();
  const purged: string[] = [];
  const pending: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix: keys.trashPrefix(services.project), startAfter, limit: 1000 });
    for (const object of page.objects) {
      const found = await services.registry.read<TrashRecord | NamespaceTrashRecord>(object.key);
      if (!found) continue;
      if (found.value.object === 'namespace') {
        // A detached namespace holds no bytes: past its deadline its record simply goes.
        const name = `namespace ${found.value.namespace.id.join('.')}#${found.value.subtree.dropId}`;
        if (found.value.expiresAt > now) pending.push(name);
        else {
          if (!options.dryRun) await services.registry.remove(object.key, found.etag);
          purged.push(name);
        }
        continue;
      }
      const { table } = found.value;
      const name = `${table.id.join('.')}#${table.uid}`;
      if (found.value.expiresAt > now) {
        pending.push(name);
        continue;
      }
      const live = await readTable(services, table.id);
      if (live?.value.uid === table.uid) continue; // an unfinished drop, not trash
      if (options.dryRun) {
        purged.push(name);
        continue;
      }
      const warehouse = await requireWarehouse(services, table.warehouse, { strict: true });
      // The deleting doors' backstop (storage-claims.ts): trash in a shared root stays trash.
      if (await sharedRootProblem(services, warehouse)) {
        pending.push(name);
        continue;
      }
      if (await markPurging(services, table)) {
        const result = await purgeInWarehouse(services, warehouse, table.path, { checked: true });
        if (!purgeComplete(result)) {
          pending.push(name);
          continue; // the claim stays `purging`: the next run (or reconcile) sees it
        }
        await releaseClaim(services, table);
      }
      await services.registry.remove(object.key, found.etag);
      purged.push(name);
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return { purged, pending };
    startAfter = last.key;
  }
}
