import { TableNotFoundError, UnsupportedError } from '../../errors.js';
import type { TableRecord } from '../../registry/records.js';
import type { Versioned } from '../../registry/registry.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { markPurging, releaseClaim } from './claims.js';
import { absoluteLocation } from './location.js';
import { fmtId, readTable, tableKey, validateTableId } from './lookup.js';
import { enqueue } from '../../jobs/jobs.js';
import { jobContext } from '../../jobs/context.js';
import { deleteTableObjects, purgeComplete, type PurgeResult } from './purge.js';
import { protectedError, readProtectionRecord } from '../protection.js';
import type { ProtectionRecord } from '../../registry/records.js';

/**
 * DropTable and DeregisterTable (docs/protocols.md). Both first remove the table record with a
 * conditional delete on the etag of a settled read, so a table renamed, re-created or changed
 * meanwhile is never removed by mistake: the delete loses, re-reads and tries again. Then:
 *
 * - deregister releases the location claim and keeps the bytes (rule 11);
 * - drop marks the claim `purging`, deletes every object under the location, then releases the
 *   claim. If deleting fails part-way the table is still dropped (its record is gone and the
 *   name is free), the claim stays in `purging` state as the durable report of what is left, and
 *   a `purge_table` job (docs/jobs.md) is queued to finish the deletion and release the claim;
 *   the response carries its `transaction_id`, as the spec allows when "the data cannot be
 *   deleted immediately", and DescribeTransaction follows it.
 */

/** The job type that finishes an interrupted purge (its runner: lib/jobs/runners/purge.ts, jobs bundle). */
export const PURGE_TABLE = 'purge_table';

export interface RetireResult {
  id: string[];
  location: string;
  properties: Record<string, string>;
  transaction_id?: string;
}

/** `force` overrides protection (docs/lifecycle.md) and nothing else. */
export interface RetireOptions {
  readonly force?: boolean;
}

export async function dropTable(services: CatalogServices, id: readonly string[], options: RetireOptions = {}): Promise<RetireResult> {
  await refuseRecoverableDrop(services, id);
  const removed = await removeRecord(services, id, 'drop', options);
  const purge = await purgeTableData(services, removed);
  return answer(services, id, removed, purge);
}

export async function deregisterTable(services: CatalogServices, id: readonly string[], options: RetireOptions = {}): Promise<RetireResult> {
  const removed = await removeRecord(services, id, 'deregister', options);
  await releaseClaim(services, removed);
  return answer(services, id, removed);
}

/** The conditional delete both doors start with; not found (4) once nothing live is there. */
async function removeRecord(services: CatalogServices, id: readonly string[], what: 'drop' | 'deregister', options: RetireOptions): Promise<TableRecord> {
  validateTableId(id);
  return services.registry.retrying(`${what} table ${fmtId(id)}`, async () => {
    // The protection record is read beside the table record, not after it: no extra round trip.
    const [found, protection]: [Versioned<TableRecord> | undefined, ProtectionRecord | undefined] = await Promise.all([
      readTable(services, id),
      options.force ? undefined : readProtectionRecord(services, 'table', id),
    ]);
    if (!found) throw new TableNotFoundError(`table ${fmtId(id)} does not exist`);
    if (protection?.uid === found.value.uid) throw protectedError('table', id, what === 'drop' ? 'dropped' : 'deregistered');
    await services.registry.remove(tableKey(services, id), found.etag);
    return found.value;
  });
}

/**
 * Deletes a removed table's bytes, unless its location has been claimed by another table since
 * the record went (then the bytes are that table's). Runs after the record is gone, for
 * DropTable and for every table a cascading namespace drop removes.
 */
export async function purgeTableData(
  services: CatalogServices,
  removed: TableRecord,
): Promise<(PurgeResult & { jobId?: string }) | undefined> {
  const warehouse = await requireWarehouse(services, removed.warehouse, { strict: true });
  if (warehouse.trashGraceDays > 0) {
    // Recoverable drops (rule 5) are not built yet; until they are, a cascade in such a
    // warehouse detaches its tables and keeps their bytes rather than destroying what the
    // warehouse promises to keep restorable.
    await releaseClaim(services, removed);
    return undefined;
  }
  if (!(await markPurging(services, removed))) return undefined;
  const result = await deleteTableObjects(services.storageFor(warehouse.storage), removed.path);
  if (purgeComplete(result)) {
    await releaseClaim(services, removed);
    return result;
  }
  const job = await enqueue(jobContext(services), {
    type: PURGE_TABLE,
    params: { record: removed },
    summary: { table: removed.id.join('.'), path: removed.path },
  });
  return { ...result, jobId: job.id };
}

/**
 * A warehouse with trash grace days promises that drops are recoverable (brief rule 5), which
 * needs trash records and undrop, not built yet. Refuse rather than destroy bytes it promised to
 * keep; DeregisterTable keeps them and works everywhere.
 */
async function refuseRecoverableDrop(services: CatalogServices, id: readonly string[]): Promise<void> {
  validateTableId(id);
  const found = await readTable(services, id);
  if (!found) return; // removeRecord answers 4
  const warehouse = await requireWarehouse(services, found.value.warehouse, { strict: true });
  if (warehouse.trashGraceDays > 0) {
    throw new UnsupportedError(
      `warehouse ${JSON.stringify(warehouse.name)} keeps dropped tables for ${warehouse.trashGraceDays} days, and recoverable drops are not implemented yet; deregister the table to detach it and keep its data`,
    );
  }
}

async function answer(
  services: CatalogServices,
  id: readonly string[],
  removed: TableRecord,
  purge?: PurgeResult & { jobId?: string },
): Promise<RetireResult> {
  const warehouse = await requireWarehouse(services, removed.warehouse);
  const out: RetireResult = {
    id: [...id],
    location: absoluteLocation(warehouse.storage, removed.path),
    properties: { ...removed.properties },
  };
  if (purge?.jobId) out.transaction_id = purge.jobId;
  return out;
}
