import { fmtId } from '../ids.js';
import { InvalidInputError } from '../../errors.js';
import { sameId } from '../../http/ids.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys, parseLocationClaimKey } from '../../registry/keys.js';
import type { LocationClaimRecord, TableRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';

/**
 * Location claims: the registry-wide index that keeps two live tables off one location.
 *
 * Table records are keyed by name, so nothing in them stops a second table from pointing at the
 * first one's bytes (a RegisterTable of a path already in use), and then dropping either would
 * destroy the other's data. A claim record keyed by the location is created with put-if-absent
 * BEFORE the table record and released only AFTER the table record is gone, so at every moment a
 * live table's location is claimed by it, and of two racing claimants exactly one wins.
 *
 * A request that dies between its steps leaves a stale claim (record gone, claim still there). A
 * claim is live while one of its `ids` holds a table record at this location, checked through
 * `readTable`, which a caller passes in as a settled reader (move.ts), so a rename in flight
 * counts as live: until a rename's commit rewrites the claim, its source id leads there, and
 * whoever settles the committed source rewrites the claim before the source marker goes. A stale claim is taken over by the next claimant with a compare-and-swap.
 * A claim in `purging` state is never taken over: its bytes are being deleted.
 *
 * A new claim is `pending` until its owner's record exists and the owner confirms it (`held`).
 * Between the claim and the record, a pending claim looks exactly like the leftover of a dead
 * request, so a competitor may take it over; the owner then finds a foreign uid when it
 * confirms and withdraws its record. The confirmation is a compare-and-swap too, so of an owner
 * confirming and a competitor taking over exactly one succeeds, and whoever holds the claim
 * last keeps the location.
 */

/** Reads a table record with any in-flight rename settled (lookup.readTable). */
export type TableReader = (id: readonly string[]) => Promise<Versioned<TableRecord> | undefined>;

export function claimKey(services: CatalogServices, table: Pick<TableRecord, 'warehouse' | 'path'>): string {
  return keys.locationClaim(services.project, table.warehouse, table.path);
}

/** The id of a live table using the claimed location, or undefined when the claim is stale. */
export async function liveHolder(claim: LocationClaimRecord, readTable: TableReader): Promise<readonly string[] | undefined> {
  for (const id of claim.ids) {
    const found = await readTable(id);
    if (found && found.value.warehouse === claim.warehouse && found.value.path === claim.path) return id;
  }
  return undefined;
}

/**
 * Claims `table`'s location for it. Refuses (code 13) when a live table already uses the
 * location or it is being purged. With `checkNesting`, also refuses a location inside another
 * table's location or containing one (a drop of the outer table would delete the inner one's
 * bytes); that check reads other claims and is not atomic with the claim itself.
 */
export async function claimLocation(
  services: CatalogServices,
  table: TableRecord,
  options: { readTable: TableReader; checkNesting: boolean; displayLocation: string },
): Promise<PendingClaim> {
  const key = claimKey(services, table);
  const claim = newClaim(services, table, 'pending');
  if (options.checkNesting) await refuseNested(services, table, options);
  return services.registry.retrying(`claim location ${options.displayLocation}`, async () => {
    try {
      return { claim, etag: await services.registry.create(key, claim) };
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
    const existing = await services.registry.read<LocationClaimRecord>(key);
    if (!existing) throw new ConditionFailedError(key, 'missing'); // released meanwhile: claim again
    await refuseIfHeld(existing.value, options);
    // Stale: its owner is gone. Take it over; a concurrent claimant's CAS loses to ours or wins.
    return { claim, etag: await services.registry.replace(key, claim, existing.etag) };
  });
}

/** The `pending` claim claimLocation wrote, with the etag its write answered. */
export interface PendingClaim {
  readonly claim: LocationClaimRecord;
  readonly etag: string;
}

/** A claim of `table`'s location in `state`, naming the table's id (or `ids`) and made now (or at `createdAt`). */
function newClaim(
  services: CatalogServices,
  table: TableRecord,
  state: LocationClaimRecord['state'],
  options: { ids?: readonly (readonly string[])[]; createdAt?: string } = {},
): LocationClaimRecord {
  return {
    kind: 'location-claim',
    warehouse: table.warehouse,
    path: table.path,
    uid: table.uid,
    ids: (options.ids ?? [table.id]).map((id) => [...id]),
    state,
    createdAt: options.createdAt ?? services.now().toISOString(),
  };
}

/**
 * Claims a location allocated a moment ago at random that holds no data yet (DeclareTable):
 * nobody else can know it before the request answers, so nobody can contend for it (CreateTable's
 * location holds data before its record exists, so it claims `pending`), and the claim is written
 * `held` at once (no pending → held confirmation) and may be written together with the table
 * record. Throws ConditionFailedError in the one case a claim is already there: a drop of the
 * just-written record marked it `purging` first (the caller withdraws).
 */
export async function claimFreshLocation(services: CatalogServices, table: TableRecord): Promise<void> {
  const key = claimKey(services, table);
  try {
    await services.registry.create<LocationClaimRecord>(key, newClaim(services, table, 'held'));
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    // Our own claim, written by an attempt whose answer was lost (issue #35), is ours.
    const found = await services.registry.read<LocationClaimRecord>(key);
    if (found?.value.uid === table.uid && found.value.state === 'held') return;
    throw err;
  }
}

async function refuseIfHeld(
  claim: LocationClaimRecord,
  options: { readTable: TableReader; displayLocation: string },
  relation = 'is already the location of',
): Promise<void> {
  if (claim.state === 'purging') {
    throw new InvalidInputError(
      `location ${options.displayLocation} belonged to a dropped table whose data is still being deleted; register other data`,
    );
  }
  if (claim.state === 'trashed') {
    throw new InvalidInputError(
      // Names no table: the caller may have no right to read it (issue 24; docs/governance.md).
      `location ${options.displayLocation} belongs to a dropped table kept in trash; undrop it, or drop it with purge=true, first`,
    );
  }
  const holder = await liveHolder(claim, options.readTable);
  if (holder) {
    throw new InvalidInputError(
      // Names no table: the caller may have no right to read it (issue 24; docs/governance.md).
      `location ${options.displayLocation} ${relation} another table; a location can belong to one table at a time`,
    );
  }
}

/**
 * Confirms `table`'s pending claim once its record is written. False when another claimant took
 * the claim over meanwhile: the caller must withdraw its record, the location is not its own.
 */
export async function confirmClaim(services: CatalogServices, table: TableRecord, written: PendingClaim): Promise<boolean> {
  const key = claimKey(services, table);
  // Usually the claim is still exactly as written: confirm it without reading it first.
  try {
    await services.registry.replace<LocationClaimRecord>(key, { ...written.claim, state: 'held' }, written.etag);
    return true;
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err; // changed meanwhile: read what it is now
  }
  return services.registry.retrying(`confirm location of table ${fmtId(table.id)}`, async () => {
    const found = await services.registry.read<LocationClaimRecord>(key);
    if (!found || found.value.uid !== table.uid) return false;
    if (found.value.state === 'pending') {
      await services.registry.replace<LocationClaimRecord>(key, { ...found.value, state: 'held' }, found.etag);
    }
    return true;
  });
}

/** Refuses a location that lies inside another live table's location, or contains one. */
async function refuseNested(
  services: CatalogServices,
  table: TableRecord,
  options: { readTable: TableReader; displayLocation: string },
): Promise<void> {
  const parts = table.path.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const outer = parts.slice(0, depth).join('/');
    const found = await services.registry.read<LocationClaimRecord>(keys.locationClaim(services.project, table.warehouse, outer));
    if (found) await refuseIfHeld(found.value, options, 'lies inside the location of');
  }
  const own = claimKey(services, table);
  const below = await services.registry.store.list({
    prefix: keys.locationClaimDir(services.project, table.warehouse, table.path),
    limit: 20,
  });
  for (const obj of below.objects) {
    if (obj.key === own || !parseLocationClaimKey(services.project, obj.key)) continue;
    const found = await services.registry.read<LocationClaimRecord>(obj.key);
    if (found) await refuseIfHeld(found.value, options, 'contains the location of');
  }
}

/**
 * A claim read earlier in the same request (e.g. alongside the removal of its table's record,
 * to save a round trip). Used for the first attempt only: every conditional write on it is
 * guarded by its etag, and a lost race re-reads.
 */
export interface KnownClaim {
  readonly claim: Versioned<LocationClaimRecord> | undefined;
}

/** The claim on `table`'s location as stored, if any. */
export async function readClaim(services: CatalogServices, table: TableRecord): Promise<KnownClaim> {
  return { claim: await services.registry.read<LocationClaimRecord>(claimKey(services, table)) };
}

/**
 * Releases `table`'s claim (after its record is gone, or when its creation failed). Only the
 * owner's claim: one taken over by a later table is left alone.
 */
export async function releaseClaim(services: CatalogServices, table: TableRecord, known?: KnownClaim): Promise<void> {
  const key = claimKey(services, table);
  let first: KnownClaim | undefined = known;
  await services.registry.retrying(`release location of table ${fmtId(table.id)}`, async () => {
    const found = first ? first.claim : await services.registry.read<LocationClaimRecord>(key);
    first = undefined;
    if (!found || found.value.uid !== table.uid) return;
    await services.registry.remove(key, found.etag);
  });
}

/**
 * Marks the dropped `table`'s claim `purging` before its bytes are deleted, so nobody registers
 * the half-deleted location meanwhile, and so a purge that fails stays on record. Answers false
 * when the location is no longer this table's (a register took the stale claim over after the
 * record was removed): then the bytes belong to that table and must not be deleted. A table
 * from before location claims has none; one is created in `purging` state for it.
 */
export async function markPurging(services: CatalogServices, table: TableRecord, known?: KnownClaim): Promise<boolean> {
  const key = claimKey(services, table);
  let first: KnownClaim | undefined = known;
  return services.registry.retrying(`purge location of table ${fmtId(table.id)}`, async () => {
    const found = first ? first.claim : await services.registry.read<LocationClaimRecord>(key);
    first = undefined;
    if (!found) {
      await services.registry.create<LocationClaimRecord>(key, newClaim(services, table, 'purging'));
      return true;
    }
    if (found.value.uid !== table.uid) return false;
    if (found.value.state !== 'purging') {
      await services.registry.replace<LocationClaimRecord>(key, { ...found.value, state: 'purging' }, found.etag);
    }
    return true;
  });
}

/**
 * Moves `table`'s claim to `state` (a recoverable drop: `trashed`; its undrop: `held` under the
 * restored id). False when the claim is not this table's any more. A table from before location
 * claims gets one.
 */
export async function setClaimState(
  services: CatalogServices,
  table: TableRecord,
  state: 'held' | 'trashed',
  ids: readonly (readonly string[])[] = [table.id],
): Promise<boolean> {
  const key = claimKey(services, table);
  return services.registry.retrying(`location of table ${fmtId(table.id)} → ${state}`, async () => {
    const found = await services.registry.read<LocationClaimRecord>(key);
    const next = newClaim(services, table, state, { ids, createdAt: found?.value.createdAt });
    if (!found) {
      await services.registry.create(key, next);
      return true;
    }
    if (found.value.uid !== table.uid || found.value.state === 'purging') return false;
    if (found.value.state !== state || !sameIds(found.value.ids, next.ids)) await services.registry.replace(key, next, found.etag);
    return true;
  });
}

const sameIds = (a: readonly (readonly string[])[], b: readonly (readonly string[])[]) => a.length === b.length && a.every((x, i) => sameId(x, b[i]));

/** Adds `id` to the ids under which `table`'s record may be found (a rename's destination). */
export async function addClaimId(services: CatalogServices, table: TableRecord, id: readonly string[]): Promise<void> {
  await updateIds(services, table, (ids) => (ids.some((x) => sameId(x, id)) ? undefined : [...ids, [...id]]));
}

/** Removes `id` from the claim's ids once the record has left it (an undone rename). */
export async function dropClaimId(services: CatalogServices, table: TableRecord, id: readonly string[]): Promise<void> {
  await updateIds(services, table, (ids) =>
    ids.some((x) => sameId(x, id)) && ids.length > 1 ? ids.filter((x) => !sameId(x, id)) : undefined,
  );
}

/**
 * After a committed rename, before the source's `moved` marker is deleted: the claim names the
 * destination where it named the source. Until this lands the marker leads a reader of the
 * source to the destination (move.ts), and every reader that settles the marker makes this
 * write first, so a competitor that judged the claim stale from a read taken before it loses
 * its compare-and-swap. `known` is the claim read alongside the rename's first write.
 */
export async function moveClaimId(
  services: CatalogServices,
  table: TableRecord,
  from: readonly string[],
  to: readonly string[],
  known?: KnownClaim,
): Promise<void> {
  await updateIds(
    services,
    table,
    (ids) => {
      const next: string[][] = [];
      for (const id of ids.map((x) => (sameId(x, from) ? to : x))) if (!next.some((x) => sameId(x, id))) next.push([...id]);
      if (!next.some((x) => sameId(x, to))) next.push([...to]);
      return sameIds(next, ids) ? undefined : next;
    },
    known,
  );
}

async function updateIds(
  services: CatalogServices,
  table: TableRecord,
  change: (ids: readonly (readonly string[])[]) => (readonly string[])[] | undefined,
  known?: KnownClaim,
): Promise<void> {
  const key = claimKey(services, table);
  let first = known;
  await services.registry.retrying(`update location claim of table ${fmtId(table.id)}`, async () => {
    const found = first ? first.claim : await services.registry.read<LocationClaimRecord>(key);
    first = undefined;
    // No claim: a table from before location claims; nothing to keep current.
    if (!found || found.value.uid !== table.uid) return;
    const ids = change(found.value.ids);
    if (ids) await services.registry.replace<LocationClaimRecord>(key, { ...found.value, ids }, found.etag);
  });
}
