import { sameId } from '../../http/ids.js';
import { keys } from '../../registry/keys.js';
import type { LocationClaimRecord, NamespaceTrashRecord, TableRecord, TrashRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { claimFreshLocation, claimKey, markPurging, readClaim, releaseClaim, setClaimState } from './claims.js';
import { readRaw } from './move.js';
import { persist } from '../outcome.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { absoluteLocation } from '../dataset/location.js';
import { readTable, tableKey, validateTableId } from './lookup.js';
import { purgeComplete, purgeInWarehouse } from './purge.js';
import { sharedRootProblem } from '../storage-claims.js';

/**
 * Recoverable drops (docs/rules.md rule 5; docs/lifecycle.md). In a warehouse with trash grace
 * days > 0, DropTable deregisters the table and files a trash record holding the record as it
 * was; the bytes stay, and the location claim moves to `trashed` so nobody else can take the
 * location meanwhile. UndropTable re-registers it unchanged (same uid, location, versions, tags).
 *
 * Protocol, every step idempotent so an interrupted drop or undrop is finished by the next call:
 *   drop:   trash record (put) → claim `trashed` → table record removed (compare-and-swap)
 *   undrop: claim names the target too (still `trashed`) → table record created (put-if-absent)
 *           → claim `held` → trash record removed
 * A drop whose record removal loses a race undoes its trash bookkeeping before it looks again.
 * A trash record whose table is live (under its id, or the target an interrupted undrop named in
 * the claim) is a drop or an undrop that did not finish: whoever reads the trash finishes it
 * (settleTrashEntry), and it is never shown nor undropped again.
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
  const trashEtag = existing ? await services.registry.replace(key, record, existing.etag) : await services.registry.create(key, record);
  try {
    await setClaimState(services, table, 'trashed');
  } catch (err) {
    // The table is still live (its record not yet removed): the trash record goes again, so it
    // cannot outlive the table as a trash entry of bytes a later purge deletes.
    await untrash(services, { value: record, etag: trashEtag }).catch(() => {});
    throw err;
  }
  try {
    await services.registry.remove(tableKey(services, table.id), found.etag);
  } catch (err) {
    // A lost race, or an outcome the store could not tell (docs/protocols.md, "Faults"): look.
    const now = await persist(() => readRaw(services, table.id)).catch(() => 'unreadable' as const);
    if (now === 'unreadable') throw err; // left to whoever reads the trash next, and to reconcile
    if (now?.value.uid !== table.uid) {
      // Gone, and the claim still trashed under this id (a rename would have moved it to its
      // destination first): our own removal, whose answer was lost. The drop happened.
      const claim = (await readClaim(services, table)).claim?.value;
      if (claim?.uid === table.uid && claim.state === 'trashed' && claim.ids.some((x) => sameId(x, table.id))) return record;
    }
    // Not removed (a rename or an update got there first, or the write never landed): the table
    // is still live, so the trash bookkeeping is undone before the caller looks again (issue #35:
    // left in place it showed a trash entry of a live table, whose undrop made a second record
    // of it, and later a trash record without a claim).
    await untrash(services, { value: record, etag: trashEtag });
    throw err;
  }
  return record;
}

/** Undoes a drop's trash bookkeeping for a table that is still live: its claim `held` again (under the ids it has now), its trash record gone. */
async function untrash(services: CatalogServices, trash: Versioned<TrashRecord>): Promise<void> {
  const { table } = trash.value;
  const claimKeyOf = claimKey(services, table);
  await persist(() => services.registry.retrying(`location of table ${table.id.join('.')} → held`, async () => {
    const found = await services.registry.read<LocationClaimRecord>(claimKeyOf);
    if (!found || found.value.uid !== table.uid || found.value.state !== 'trashed') return;
    await services.registry.replace<LocationClaimRecord>(claimKeyOf, { ...found.value, state: 'held' }, found.etag);
  }));
  await persist(() => services.registry.remove(keys.trash(services.project, table.id, table.uid), trash.etag).catch(ignoreLostRace));
}

/**
 * A trash record whose table is live (issue #35, finding 4): a drop that stopped before its
 * record removal, or an undrop that stopped after re-registering it (under the same name or a
 * new one; an undrop adds its target to the claim's ids first, so the claim leads to it). Both
 * are finished the same way, since the table is live: its record is rewritten first (a fence:
 * the conditional removal of a drop still in flight can then never land, and that drop starts
 * over), then its claim is `held` under the live id and the trash record goes. True when the
 * table was found live (the entry is no trash); false when it is in trash. The rewritten record
 * remembers the trash id (`trashSettled`), so a retried undrop answers the table it brought
 * back. Read-only mode and `lookOnly` only look.
 */
export async function settleTrashEntry(
  services: CatalogServices,
  trash: Versioned<TrashRecord>,
  options: { lookOnly?: boolean } = {},
): Promise<Versioned<TableRecord> | 'stale' | undefined> {
  if (trash.value.withdrawn) return settleWithdrawal(services, trash, options);
  const { table } = trash.value;
  const claim = (await readClaim(services, table)).claim?.value;
  if (claim?.state === 'purging' && claim.uid === table.uid) return undefined;
  const candidates = [...(claim?.ids ?? []), table.id].filter((id, i, all) => all.findIndex((x) => sameId(x, id)) === i);
  for (const id of candidates) {
    const live = await readTable(services, id);
    if (!live || live.value.uid !== table.uid) continue;
    if (services.readOnly || options.lookOnly) return live;
    const settled: TableRecord = { ...live.value, trashSettled: { from: [...table.id] } };
    const fenced = await services.registry.replace(tableKey(services, id), settled, live.etag);
    await persist(() => setClaimState(services, live.value, 'held', [id]));
    await persist(() => services.registry.remove(keys.trash(services.project, table.id, table.uid), trash.etag).catch(ignoreLostRace));
    return { value: settled, etag: fenced };
  }
  // A drop to trash claims the location `trashed` before the record goes, and the claim stays
  // while the trash does: a trash record whose location is unclaimed, or claimed by another
  // table, is a leftover (its table was live when a fault stopped its drop, and has since been
  // purged or deregistered; or a purge of the trash stopped before removing it). Undropping it
  // would restore bytes that are not its own: it is no trash, and is removed. So is one whose
  // claim is `trashed` by its table under other names only: a drop names its own id in the claim
  // (an undrop adds its target), and only a rename of the live table rewrites the ids — an
  // interrupted undrop's entry whose table was renamed and dropped again, whose newer entry is
  // the one the claim names (issue #35: one table in trash twice).
  const elsewhere = claim?.state === 'trashed' && !claim.ids.some((x) => sameId(x, table.id));
  if (!claim || claim.uid !== table.uid || elsewhere) {
    if (!services.readOnly && !options.lookOnly) {
      await services.registry.remove(keys.trash(services.project, table.id, table.uid), trash.etag).catch(ignoreLostRace);
    }
    return 'stale';
  }
  return undefined;
}

/**
 * Releases the claim this request wrote for a record that does not exist (the name was taken, the
 * record was withdrawn, or never landed): DeclareTable's on a fresh random location, or
 * RegisterTable's whose claim write went unanswered. No read of a table record reaches such a
 * claim afterwards, so the door
 * itself tries it again when the store does not answer (outcome.ts, persist), and answers what it
 * knows either way. A release that fails all its attempts files a withdrawal note under the name,
 * which the name's next trash read settles (fileWithdrawal below); a note that fails too leaves
 * the claim on record for reconcile (`stale-claim`; docs/protocols.md, "What is left after a 503
 * whose look failed too").
 */
export async function takeBackClaim(services: CatalogServices, record: TableRecord): Promise<void> {
  if (await persist(() => releaseClaim(services, record)).then(() => true, () => false)) return;
  // Only the name leads here: a note in the name's trash, which its next read settles (trash.ts).
  await fileWithdrawal(services, record);
}

/**
 * Files a withdrawal note (TrashRecord.withdrawn) for a DeclareTable or RegisterTable that gave
 * `record` up but could not release its claim (takeBackClaim above), or a DeclareTable that could
 * not tell whether its record landed: no record names the claim, so only the name leads to it,
 * and only through this note (docs/protocols.md, "What is left after a 503 whose
 * look failed too"). One more write on the failing path only; when it fails too, the claim is on
 * record for reconcile (`stale-claim`) as before.
 */
export async function fileWithdrawal(services: CatalogServices, record: TableRecord): Promise<void> {
  const now = services.now().toISOString();
  const note: TrashRecord = { kind: 'trash', object: 'table', table: record, droppedAt: now, expiresAt: now, droppedBy: record.origin === 'registered' ? 'register' : 'declare', withdrawn: true };
  await persist(() => services.registry.create(keys.trash(services.project, record.id, record.uid), note)).catch(() => undefined);
}

/**
 * The next read of the name's trash settles a withdrawal note: the declared table is whole if
 * its record did land after all (under the name, or wherever a rename took it: the claim's ids),
 * so its claim is written if missing; otherwise its fresh claim is released (`held`, or CreateTable's
 * `pending`; a `purging` one is the purge's of a record that landed and was dropped since). The
 * note goes either way and is never shown: 'stale'. Read-only mode and `lookOnly` only hide it.
 */
async function settleWithdrawal(services: CatalogServices, trash: Versioned<TrashRecord>, options: { lookOnly?: boolean }): Promise<'stale'> {
  if (services.readOnly || options.lookOnly) return 'stale';
  const { table } = trash.value;
  const claim = await readClaim(services, table);
  const held = claim.claim?.value.uid === table.uid ? claim.claim.value : undefined;
  const candidates = [...(held?.ids ?? []), table.id].filter((id, i, all) => all.findIndex((x) => sameId(x, id)) === i);
  let live: Versioned<TableRecord> | undefined;
  for (const id of candidates) {
    const found = await readTable(services, id);
    if (found?.value.uid === table.uid) live = found;
  }
  if (live && !claim.claim) await claimFreshLocation(services, live.value);
  if (!live && held && (held.state === 'held' || held.state === 'pending')) await releaseClaim(services, table, claim);
  await services.registry.remove(keys.trash(services.project, table.id, table.uid), trash.etag).catch(ignoreLostRace);
  return 'stale';
}

function ignoreLostRace(err: unknown): void {
  if (!(err instanceof ConditionFailedError)) throw err;
}

/**
 * Trash records at `id`, newest drop first, without those of a table that is live (there or
 * under the name an interrupted undrop gave it): those are settled on the way (settleTrashEntry)
 * and reported in `live`.
 */
export async function trashAt(
  services: CatalogServices,
  id: readonly string[],
  options: { lookOnly?: boolean } = {},
): Promise<Versioned<TrashRecord>[] & { live?: Versioned<TableRecord>[] }> {
  const page = await services.registry.store.list({ prefix: keys.trashOf(services.project, id), limit: 1000 });
  const records: Versioned<TrashRecord>[] & { live?: Versioned<TableRecord>[] } = [];
  const live: Versioned<TableRecord>[] = [];
  for (const object of page.objects) {
    const found = await services.registry.read<TrashRecord>(object.key);
    if (!found) continue;
    const settled = await settleTrashEntry(services, found, options);
    if (settled === 'stale') continue;
    if (settled) live.push(settled);
    else records.push(found);
  }
  records.sort((a, b) => b.value.droppedAt.localeCompare(a.value.droppedAt));
  records.live = live;
  return records;
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
 * flag is set). Strict reads: a record it cannot read stops the run (docs/rules.md rule 8). Returns what
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
      // A declare's withdrawal note is no trash: settled (its claim taken back), never purged.
      if (found.value.withdrawn) {
        if (!options.dryRun) await settleTrashEntry(services, found as Versioned<TrashRecord>);
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
      // A reader of the trash may have removed it first, once the claim was released (settleTrashEntry).
      await services.registry.remove(object.key, found.etag).catch(ignoreLostRace);
      purged.push(name);
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return { purged, pending };
    startAfter = last.key;
  }
}
