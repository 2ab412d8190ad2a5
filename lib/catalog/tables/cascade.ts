import { ConditionFailedError } from '../../ports/object-store.js';
import { parseTreeKey } from '../../registry/keys.js';
import type { TableRecord } from '../../registry/records.js';
import { crashPoint } from '../crash-points.js';
import type { CatalogServices } from '../services.js';
import { purgeTableData } from './drop.js';
import { trashTable } from './trash.js';
import { requireWarehouse } from '../warehouses.js';
import { isLive, readSettled } from './move.js';

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
export async function removeTableForCascade(services: CatalogServices, key: string, etag: string): Promise<void> {
  const parsed = parseTreeKey(services.project, key);
  const found = await services.registry.read<TableRecord>(key);
  if (!found) return;
  if (found.etag !== etag) throw new ConditionFailedError(key, 'etag-mismatch');
  if (!isLive(found.value)) {
    if (parsed) await readSettled(services, parsed.id);
    throw new ConditionFailedError(key, 'conflict');
  }
  const warehouse = await requireWarehouse(services, found.value.warehouse, { strict: true });
  if (warehouse.trashGraceDays > 0) {
    // With grace a cascade never destroys bytes: each table goes to trash, undroppable once its
    // namespace exists again (docs/lifecycle.md).
    await trashTable(services, { value: found.value, etag }, { days: warehouse.trashGraceDays, principal: 'cascade' });
    return;
  }
  await services.registry.remove(key, etag);
  await crashPoint(services, 'namespace-drop:table-record-removed');
  await purgeTableData(services, found.value);
}
