import { ConditionFailedError } from '../../ports/object-store.js';
import { parseTreeKey } from '../../registry/keys.js';
import type { NamespaceRecord, TableRecord } from '../../registry/records.js';
import { crashPoint } from '../crash-points.js';
import type { CatalogServices } from '../services.js';
import { purgeTableData } from '../tables/drop.js';
import { trashStamp, trashTable } from '../protocols/trash.js';
import { requireWarehouse } from '../warehouses.js';
import { isLive, readSettled } from '../protocols/move.js';

/**
 * Removes one table found by a cascading namespace drop: the same as DropTable (record, then
 * bytes), conditional on the etag the cascade listed, so a record that changed since is seen
 * again by the cascade's next listing pass (a lost race is a ConditionFailedError, which the
 * cascade expects).
 *
 * A record caught mid-rename is settled first and then re-listed: a table moving out of the
 * dropped namespace may still get away (its destination is elsewhere and alive), and one moving
 * in is sent back, because the destination namespace is no longer active.
 */
export async function removeTableForCascade(services: CatalogServices, key: string, etag: string, drop?: NamespaceRecord['drop']): Promise<void> {
  const parsed = parseTreeKey(services.project, key);
  const found = await services.registry.read<TableRecord>(key);
  if (!found) return;
  if (found.etag !== etag) throw new ConditionFailedError(key, 'etag-mismatch');
  if (!isLive(found.value)) {
    if (parsed) await readSettled(services, parsed.id);
    throw new ConditionFailedError(key, 'conflict');
  }
  if (drop?.trash) {
    // A recoverable cascade (trash-records.ts): the table goes to trash under the
    // subtree's drop, with its shared deadline; the namespace undrop brings it back.
    const { root, dropId, droppedAt, expiresAt, droppedBy } = drop.trash;
    await trashTable(services, { value: found.value, etag }, { droppedAt, expiresAt, droppedBy, subtree: { root, dropId } });
    return;
  }
  const warehouse = await requireWarehouse(services, found.value.warehouse, { strict: true });
  if (warehouse.trashGraceDays > 0 && !drop?.purge) {
    // A mark written without a subtree context (before it existed) still never destroys bytes
    // in a warehouse with grace: the table goes to trash on its own.
    await trashTable(services, { value: found.value, etag }, trashStamp(services, warehouse.trashGraceDays, 'cascade'));
    return;
  }
  await services.registry.remove(key, etag);
  await crashPoint(services, 'namespace-drop:table-record-removed');
  await purgeTableData(services, found.value);
}
