import { TableNotFoundError } from '../../errors.js';
import type { TableRecord } from '../../registry/records.js';
import type { Versioned } from '../../registry/registry.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { markPurging, releaseClaim, setClaimState } from './claims.js';
import { trashTable } from './trash.js';
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

export interface RetireOptions {
  /** Overrides protection (docs/lifecycle.md) and nothing else. */
  readonly force?: boolean;
  /** DropTable in a warehouse with trash grace: destroy now instead of keeping it restorable. */
  readonly purge?: boolean;
  /** Who drops it, for the trash record. */
  readonly principal?: string;
}

/**
 * DropTable. In a warehouse with trash grace days the table goes to trash (trash.ts) and its
 * bytes stay until undrop or expiry, unless `purge` says destroy now; otherwise record, then
 * bytes, as below.
 */
export async function dropTable(services: CatalogServices, id: readonly string[], options: RetireOptions = {}): Promise<RetireResult> {
  validateTableId(id);
  const outcome = await services.registry.retrying(`drop table ${fmtId(id)}`, async () => {
    const found = await readRetirable(services, id, 'drop', options);
    const warehouse = await requireWarehouse(services, found.value.warehouse, { strict: true });
    if (warehouse.trashGraceDays > 0 && !options.purge) {
      await trashTable(services, found, { days: warehouse.trashGraceDays, principal: options.principal ?? 'anonymous' });
      return { removed: found.value, trashed: true };
    }
    await services.registry.remove(tableKey(services, id), found.etag);
    return { removed: found.value, trashed: false };
  });
  const purge = outcome.trashed ? undefined : await purgeTableData(services, outcome.removed, { force: true });
  return answer(services, id, outcome.removed, purge);
}

export async function deregisterTable(services: CatalogServices, id: readonly string[], options: RetireOptions = {}): Promise<RetireResult> {
  validateTableId(id);
  const removed = await services.registry.retrying(`deregister table ${fmtId(id)}`, async () => {
    const found = await readRetirable(services, id, 'deregister', options);
    await services.registry.remove(tableKey(services, id), found.etag);
    return found.value;
  });
  await releaseClaim(services, removed);
  return answer(services, id, removed);
}

/**
 * The settled read both doors start with, and their checks: not found (4) once nothing live is
 * there, protected (19) unless forced. The removal that follows is a conditional delete on this
 * read's etag, so a table renamed, re-created or changed meanwhile is never removed by mistake.
 */
async function readRetirable(services: CatalogServices, id: readonly string[], what: 'drop' | 'deregister', options: RetireOptions): Promise<Versioned<TableRecord>> {
  // The protection record is read beside the table record, not after it: no extra round trip.
  const [found, protection]: [Versioned<TableRecord> | undefined, ProtectionRecord | undefined] = await Promise.all([
    readTable(services, id),
    options.force ? undefined : readProtectionRecord(services, 'table', id),
  ]);
  if (!found) throw new TableNotFoundError(`table ${fmtId(id)} does not exist`);
  if (protection?.uid === found.value.uid) throw protectedError('table', id, what === 'drop' ? 'dropped' : 'deregistered');
  return found;
}

/**
 * Deletes a removed table's bytes, unless its location has been claimed by another table since
 * the record went (then the bytes are that table's). Runs after the record is gone, for
 * DropTable and for every table a cascading namespace drop removes.
 */
export async function purgeTableData(
  services: CatalogServices,
  removed: TableRecord,
  options: { force?: boolean } = {},
): Promise<(PurgeResult & { jobId?: string }) | undefined> {
  const warehouse = await requireWarehouse(services, removed.warehouse, { strict: true });
  if (warehouse.trashGraceDays > 0 && !options.force) {
    // Only reached by callers that did not trash the table first (none today): keep the bytes
    // owned rather than destroy what the warehouse promises to keep restorable.
    await setClaimState(services, removed, 'trashed');
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
