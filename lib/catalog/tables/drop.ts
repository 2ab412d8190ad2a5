import { TableNotFoundError } from '../../errors.js';
import { sameId } from '../../http/ids.js';
import { LinkRefusedError, type ObjectStore } from '../../ports/object-store.js';
import type { ProtectionRecord, TableRecord, WarehouseRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { markPurging, readClaim, releaseClaim, type KnownClaim } from '../protocols/claims.js';
import { absoluteLocation } from '../dataset/location.js';
import { readTable, tableKey, validateTableId } from '../protocols/lookup.js';
import { readRaw } from '../protocols/move.js';
import { persist } from '../outcome.js';
import { fmtId } from '../ids.js';
import { enqueue } from '../../queue/jobs.js';
import { jobContext } from '../../queue/context.js';
import { purgeComplete, purgeInWarehouse, type PurgeResult } from '../protocols/purge.js';
import { isPlatformWarehouse, refuseSharedRoot } from '../storage-claims.js';
import { trashStamp, trashTable } from '../protocols/trash.js';
import { removeMarkers } from '../protocols/markers.js';
import { protectedError, protectionOf } from '../protection.js';

/**
 * DropTable and DeregisterTable (docs/protocols.md). Both first remove the table record with a
 * conditional delete on the etag of a settled read, so a table renamed, re-created or changed
 * meanwhile is never removed by mistake: the delete loses, re-reads and tries again. Then:
 *
 * Both refuse a protected table (409 / 19) unless `force` (docs/lifecycle.md). In a warehouse
 * with trash grace days, drop files the table in trash instead (trash.ts) unless `purge`.
 *
 * - deregister releases the location claim and keeps the bytes (docs/rules.md rule 11);
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

export async function dropTable(services: CatalogServices, id: readonly string[], options: RetireOptions = {}): Promise<RetireResult> {
  validateTableId(id);
  // The table record and its warehouse's current settings together. Tables live in their
  // namespace's warehouse, which is the default one unless the project binds others; for those
  // the read of the right warehouse follows. The protection record is read only when the table
  // record does not rule protection out (protection.ts, `mayBeProtected`).
  const [found, defaultWarehouse] = await Promise.all([
    readTable(services, id),
    requireWarehouse(services, services.defaultWarehouse, { strict: true }),
  ]);
  if (found) refuseProtected(id, found.value, await protectionOf(services, id, found.value, options.force), 'dropped');
  let warehouse = defaultWarehouse;
  if (found && found.value.warehouse !== defaultWarehouse.name) {
    warehouse = await requireWarehouse(services, found.value.warehouse, { strict: true });
  }
  if (found && warehouse.trashGraceDays > 0 && !options.purge) {
    const trashed = await trashRecord(services, id, found, warehouse, options);
    await removeMarkers(services, id, trashed);
    return answer(services, id, trashed);
  }
  // The deleting doors' backstop, before anything changes: no drop through a warehouse whose
  // root overlaps another's (docs/governance.md, "Storage allotment").
  // (The platform's default warehouse is checked where bytes are deleted, purgeTableData: its
  // drops of declared-only tables then cost no extra read.)
  const upfront = found !== undefined && !isPlatformWarehouse(services, warehouse);
  if (upfront) await refuseSharedRoot(services, warehouse, `drop table ${fmtId(id)}`);
  // The claim is read alongside the record's removal: it cannot change hands while the record
  // lives, and every write on it afterwards is conditional on what was read.
  const { removed, alongside: claim } = await removeRecord(services, id, 'drop', found, options, (r) => readClaim(services, r));
  // Only the warehouse this record names was checked (a record re-created meanwhile may name another).
  const checked = removed.warehouse === warehouse.name ? warehouse : undefined;
  // The record is gone: the drop has happened, so what follows is finished if the store lets it.
  const [purge] = await Promise.all([
    persist(() => purgeTableData(services, removed, { warehouse: checked, claim, rootChecked: checked !== undefined && upfront })),
    persist(() => removeMarkers(services, id, removed)),
  ]);
  return answer(services, id, removed, purge);
}

export async function deregisterTable(services: CatalogServices, id: readonly string[], options: RetireOptions = {}): Promise<RetireResult> {
  validateTableId(id);
  const { removed, alongside: claim } = await removeRecord(services, id, 'deregister', undefined, options, (r) => readClaim(services, r));
  await Promise.all([persist(() => releaseClaim(services, removed, claim)), persist(() => removeMarkers(services, id, removed))]);
  return answer(services, id, removed);
}

function refuseProtected(id: readonly string[], table: TableRecord, protection: ProtectionRecord | undefined, action: string): void {
  if (protection?.uid === table.uid) throw protectedError('table', id, action);
}

/** The settled read a retry starts from, with the protection check (4, then 19; 19 costs a read only for a record that may be protected). */
async function readRetirable(services: CatalogServices, id: readonly string[], what: 'drop' | 'deregister', options: RetireOptions): Promise<Versioned<TableRecord>> {
  const found = await readTable(services, id);
  if (!found) throw new TableNotFoundError(`table ${fmtId(id)} does not exist`);
  const protection = await protectionOf(services, id, found.value, options.force);
  refuseProtected(id, found.value, protection, what === 'drop' ? 'dropped' : 'deregistered');
  return found;
}

/**
 * The conditional delete both doors start with; not found (4) once nothing live is there.
 * `alongside` runs in parallel with the delete of the record it is given (its result is only
 * kept from the attempt whose delete succeeded). `known` is a settled read, already checked, to
 * start from.
 */
async function removeRecord<A>(
  services: CatalogServices,
  id: readonly string[],
  what: 'drop' | 'deregister',
  known: Versioned<TableRecord> | undefined,
  options: RetireOptions,
  alongside: (record: TableRecord) => Promise<A>,
): Promise<{ removed: TableRecord; alongside: A | undefined }> {
  let first = known;
  return services.registry.retrying(`${what} table ${fmtId(id)}`, async () => {
    const found = first ?? (await readRetirable(services, id, what, options));
    first = undefined;
    const [removal, extra] = await Promise.allSettled([services.registry.remove(tableKey(services, id), found.etag), alongside(found.value)]);
    if (removal.status === 'rejected') {
      // A lost race, or an outcome the store could not tell: removed all the same? (One look; a
      // look that fails too answers the original error, and reconcile sees what is left.)
      const removed = await persist(() => removedWithClaimIntact(services, id, found.value)).catch(() => false);
      if (!removed) throw removal.reason;
    }
    // The record is gone: a failed read alongside is made again by whoever needs it (undefined).
    return { removed: found.value, alongside: extra.status === 'fulfilled' ? extra.value : undefined };
  });
}

/**
 * After the record's conditional delete lost or went unanswered: whether the record was removed all the same, by
 * this request's own attempt whose answer was lost (issue #35; or by a drop racing it, which
 * asked for the same). The record is gone and its claim still names this id, unmarked: a rename
 * rewrites the claim to its destination before the source goes, a drop marks or releases it
 * after the record goes, so nothing else leaves that state. Otherwise the race was real: retry.
 */
async function removedWithClaimIntact(services: CatalogServices, id: readonly string[], table: TableRecord): Promise<boolean> {
  const [now, claim] = await Promise.all([readRaw(services, id), readClaim(services, table)]);
  if (now?.value.uid === table.uid) return false;
  const held = claim.claim?.value;
  return held?.uid === table.uid && (held.state === 'held' || held.state === 'pending') && held.ids.some((x) => sameId(x, id));
}

/** DropTable with grace: the table goes to trash with its bytes (trash.ts), retried like a removal. */
async function trashRecord(
  services: CatalogServices,
  id: readonly string[],
  known: Versioned<TableRecord>,
  warehouse: WarehouseRecord,
  options: RetireOptions,
): Promise<TableRecord> {
  let first: Versioned<TableRecord> | undefined = known;
  return services.registry.retrying(`drop table ${fmtId(id)}`, async () => {
    const found = first ?? (await readRetirable(services, id, 'drop', options));
    first = undefined;
    const days = found.value.warehouse === warehouse.name ? warehouse.trashGraceDays : (await requireWarehouse(services, found.value.warehouse, { strict: true })).trashGraceDays;
    await trashTable(services, found, trashStamp(services, Math.max(days, 1), options.principal ?? 'anonymous'));
    return found.value;
  });
}

/**
 * Deletes a removed table's bytes, unless its location has been claimed by another table since
 * the record went (then the bytes are that table's). Runs after the record is gone, for
 * DropTable and for every table a cascading namespace drop removes (callers in a warehouse with
 * trash grace trash the table instead and never get here). `prefetched` saves reads a caller has
 * already made: the warehouse (read strictly) and the claim.
 */
export async function purgeTableData(
  services: CatalogServices,
  removed: TableRecord,
  prefetched: { warehouse?: WarehouseRecord; claim?: KnownClaim; rootChecked?: boolean } = {},
): Promise<(PurgeResult & { jobId?: string }) | undefined> {
  const warehouse = prefetched.warehouse ?? (await requireWarehouse(services, removed.warehouse, { strict: true }));
  const store = services.storageFor(warehouse.storage);
  const claim = prefetched.claim ?? (await readClaim(services, removed));
  // A declared table that never received data has nothing to purge: one LIST proves it, and the
  // claim is released without first being marked `purging` (nothing can be half-deleted). If
  // another table took the location over meanwhile, the release leaves its claim alone.
  // Each step after the record's removal is tried again on its own when the store does not
  // answer (outcome.ts, persist; each is idempotent): a claim left `purging` or `held` is reached
  // by no read of the name (docs/protocols.md, "What is left after a 503 whose look failed too").
  if (claim.claim?.value.uid === removed.uid && claim.claim.value.state !== 'purging' && (await persist(() => isEmpty(store, removed.path)))) {
    let known: KnownClaim | undefined = claim;
    await persist(() => releaseClaim(services, removed, known).finally(() => (known = undefined)));
    return { deleted: 0, failed: [], failedCount: 0 };
  }
  if (!prefetched.rootChecked) await refuseSharedRoot(services, warehouse, `delete the data of table ${fmtId(removed.id)}`);
  let known: KnownClaim | undefined = claim;
  if (!(await persist(() => markPurging(services, removed, known).finally(() => (known = undefined))))) return undefined;
  const result = await purgeInWarehouse(services, warehouse, removed.path, { checked: true });
  if (purgeComplete(result)) {
    await persist(() => releaseClaim(services, removed));
    return result;
  }
  const job = await enqueue(jobContext(services), {
    type: PURGE_TABLE,
    params: { record: removed },
    summary: { table: removed.id.join('.'), path: removed.path },
  });
  return { ...result, jobId: job.id };
}

async function isEmpty(store: ObjectStore, tablePath: string): Promise<boolean> {
  try {
    return (await store.list({ prefix: `${tablePath}/`, limit: 1 })).objects.length === 0;
  } catch (err) {
    // A location replaced by a link is not listed through it: the purge walk removes the link itself.
    if (err instanceof LinkRefusedError) return false;
    throw err;
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
