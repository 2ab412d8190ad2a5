/**
 * Undoing a table drop: the UndropTable door and the re-registration a namespace undrop runs for
 * each of its tables (namespaces/undrop.ts). Apart from trash.ts because it needs the namespace
 * doors' reads and re-check, while dropping (trash.ts) is what a namespace's cascade drop runs:
 * kept together they made the namespace doors and tables/* import each other.
 */
import { TableAlreadyExistsError, TableNotFoundError, UnsupportedError } from '../../errors.js';
import { sameId } from '../../http/ids.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys, validateName } from '../../registry/keys.js';
import type { TableRecord, TrashRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import { confirmParentOrWithdraw, requireNamespace } from '../namespaces/lookup.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { setClaimState } from '../protocols/claims.js';
import { absoluteLocation } from '../dataset/location.js';
import { readTable, tableKey, validateTableId } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { persist } from '../outcome.js';
import { claimMarkersOf } from '../protocols/markers.js';
import { settleTrashEntry, trashAt } from '../protocols/trash.js';

export interface UndropInput {
  readonly id: readonly string[];
  /** Restore under another name (when the old one was re-used meanwhile). */
  readonly newName?: string;
  readonly newNamespace?: readonly string[];
}

/**
 * `POST /v1/table/{id}/undrop`: re-registers the most recently dropped table at `id` (or under a
 * new name). 404 / 4 when nothing is in trash there; 409 / 5 naming the table that now uses the
 * target name; 404 / 1 when the target namespace is gone.
 */
export async function undropTable(services: CatalogServices, input: UndropInput): Promise<{ id: string[]; location: string; restored: boolean }> {
  validateTableId(input.id);
  if (input.newName !== undefined) validateName('table', input.newName);
  const namespace = input.newNamespace ?? input.id.slice(0, -1);
  const target = [...namespace, input.newName ?? input.id[input.id.length - 1]];
  validateTableId(target);

  return services.registry.retrying(`undrop table ${fmtId(input.id)}`, async () => {
    const trash = await trashAt(services, input.id);
    const [latest] = trash;
    if (!latest) {
      // Restored already: an undrop interrupted after re-registering it, which reading the trash
      // has just finished (trash.ts, settleTrashEntry). Its retry is answered as the success it was.
      const live = trash.live?.[0] ?? (await readTable(services, target));
      if (live && (trash.live?.length || sameId(live.value.trashSettled?.from ?? [], input.id))) return restored(services, live.value);
      throw new TableNotFoundError(`table ${fmtId(input.id)} has nothing in trash to undrop`);
    }
    const live = await readTable(services, target);
    const parent = await requireNamespace(services, namespace, '; create it (or undrop it) before undropping a table into it');
    // Like a rename, an undrop never moves bytes: the namespace must be bound to the warehouse
    // the table's data lives in (else its quarantine and vending would be another warehouse's).
    const bound = parent?.value.warehouse ?? services.defaultWarehouse;
    if (bound !== latest.value.table.warehouse) {
      throw new UnsupportedError(
        `cannot undrop table ${fmtId(input.id)} into namespace ${fmtId(namespace)}: it is bound to warehouse ${JSON.stringify(bound)}, ` +
          `the table's data lives in ${JSON.stringify(latest.value.table.warehouse)}, and an undrop never moves bytes`,
      );
    }
    return restored(services, await restoreTable(services, latest, target, live));
  });
}

/**
 * Re-registers one trashed table at `target` (the table undrop, and each table of a namespace
 * undrop): put-if-absent of its record as it was, then claim `held`, then the trash record goes.
 * A table already back under that uid is finished (claim, trash record), not an error; another
 * table at `target` is 409 / 5 naming it. The caller has checked the namespace exists.
 */
export async function restoreTable(
  services: CatalogServices,
  trash: Versioned<TrashRecord>,
  target: readonly string[],
  known?: Versioned<TableRecord>,
): Promise<TableRecord> {
  const { table } = trash.value;
  const live = known ?? (await readTable(services, target));
  if (live) {
    if (live.value.uid === table.uid) {
      await finishUndrop(services, live.value, trash);
      return live.value;
    }
    throw takenError(target);
  }
  // Already back under another name (an interrupted undrop the caller did not see finish): never a second record of it.
  const elsewhere = await settleTrashEntry(services, trash);
  if (elsewhere === 'stale') throw new TableNotFoundError(`table ${fmtId(trash.value.table.id)} has nothing in trash to undrop`);
  if (elsewhere) return elsewhere.value;
  const back: TableRecord = { ...table, id: [...target], state: undefined, move: undefined, trashSettled: undefined };
  const key = tableKey(services, target);
  // The claim names the target before the record exists, so whoever reads the trash after an
  // interruption finds the table there (settleTrashEntry); it stays `trashed` until the record is.
  if (!sameId(target, table.id)) await setClaimState(services, table, 'trashed', [table.id, target]);
  // The has-data marker before the record that says it exists (markers.ts: never hide data),
  // never over the marker of a table that took the name meanwhile.
  const markers = await claimMarkersOf(services, target, back, () => readTable(services, target), () => takenError(target));
  try {
    // Put-if-absent: if someone takes the name meanwhile, the retry looks again and answers 5.
    const etag = await services.registry.create(key, back);
    await confirmParentOrWithdraw(services, target.slice(0, -1), key, etag);
  } catch (err) {
    await markers.release();
    throw err;
  }
  await finishUndrop(services, back, trash);
  return back;
}

const takenError = (target: readonly string[]) =>
  new TableAlreadyExistsError(`table ${fmtId(target)} exists (created after the drop); undrop under another name with new_table_name`);

async function finishUndrop(services: CatalogServices, table: TableRecord, trash: Versioned<TrashRecord>): Promise<void> {
  // The record is back: the undrop has happened, so its bookkeeping is finished if the store
  // lets it (outcome.ts, persist). A trash record left behind would outlive a later rename and
  // drop of the table as a second trash entry of it.
  await persist(() => setClaimState(services, table, 'held', [table.id]));
  await persist(async () => {
    try {
      await services.registry.remove(keys.trash(services.project, trash.value.table.id, trash.value.table.uid), trash.etag);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err; // another undrop finished it
    }
  });
}

async function restored(services: CatalogServices, table: TableRecord) {
  const warehouse = await requireWarehouse(services, table.warehouse);
  return { id: [...table.id], location: absoluteLocation(warehouse.storage, table.path), restored: true };
}
