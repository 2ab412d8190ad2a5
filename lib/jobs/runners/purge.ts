/**
 * `purge_table`: finishes deleting a dropped table's bytes when DropTable (or a cascade) could
 * not delete them all at once. The table record is already gone; the location claim, still in
 * `purging` state, keeps anyone from registering the half-deleted location until this job
 * releases it. Deleting objects is idempotent, so a retry simply lists and deletes again.
 */
import { releaseClaim } from '../../catalog/protocols/claims.js';
import { PURGE_TABLE } from '../../catalog/tables/drop.js';
import { purgeComplete, purgeInWarehouse } from '../../catalog/protocols/purge.js';
import { requireWarehouse } from '../../catalog/warehouses.js';
import { ServiceUnavailableError } from '../../errors.js';
import type { TableRecord } from '../../registry/records.js';
import type { JobRunner } from '../runner.js';

export { PURGE_TABLE };

export const purgeTableRunner: JobRunner = async (job, { services }) => {
  const removed = job.params.record as TableRecord;
  const warehouse = await requireWarehouse(services, removed.warehouse);
  const result = await purgeInWarehouse(services, warehouse, removed.path);
  if (!purgeComplete(result)) {
    // Transient by nature (the store refused some deletes): the queue retries with backoff.
    throw new ServiceUnavailableError(
      `${result.failedCount} object(s) under ${removed.path} could not be deleted${result.listingError ? ` (${result.listingError})` : ''}`,
    );
  }
  await releaseClaim(services, removed);
  return { deleted_objects: String(result.deleted), path: removed.path };
};
