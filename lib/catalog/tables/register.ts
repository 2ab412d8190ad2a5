import { InvalidInputError, NamespaceNotFoundError, TableAlreadyExistsError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { LocationClaimRecord, TableRecord } from '../../registry/records.js';
import { readNamespace } from '../namespaces/record.js';
import { requireNamespace } from '../namespaces/lookup.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { claimMarkersOf, type MarkerHold } from '../protocols/markers.js';
import { claimKey, claimLocation, confirmClaim, liveHolder, type PendingClaim, releaseClaim } from '../protocols/claims.js';
import { refuseLinks } from '../dataset/links.js';
import { absoluteLocation, relativeToRoot } from '../dataset/location.js';
import { hasData, readTable, tableKey, validateTableId } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { protectedError, protectionOf } from '../protection.js';
import { refuseSharedRoot } from '../storage-claims.js';
import { outcomeUnknown, persist } from '../outcome.js';
import { takeBackClaim } from '../protocols/trash.js';

export interface RegisterInput {
  readonly id: readonly string[];
  readonly location?: string;
  readonly mode: 'create' | 'overwrite';
  readonly properties: Record<string, string>;
  /** `overwrite` of a protected table: override its protection (docs/lifecycle.md). */
  readonly force?: boolean;
}

/**
 * RegisterTable: attaches an existing Lance dataset to a name. Check order: shape (13) →
 * parent namespace exists (1) → location inside the warehouse root and really a dataset (13)
 * → name free (5, unless `overwrite`) → location free (13) → claim → record → re-check parent.
 *
 * The location claim (claims.ts) is taken before the record is written, so two registrations
 * of one location cannot both win, nor can a registration take a declared table's location.
 * `overwrite` replaces an existing registration of the name: it deregisters that table (keeping
 * its bytes, docs/rules.md rule 11) and then registers as `create` would. That is two steps, not one: a
 * crash between them leaves the name free and both datasets on disk, and a create racing in
 * between wins the name (the overwrite then answers 5, or replaces it on a retry).
 */
export async function registerTable(
  services: CatalogServices,
  input: RegisterInput,
): Promise<{ location: string; properties: Record<string, string> }> {
  validateTableId(input.id);
  if (input.location === undefined || input.location.trim() === '') {
    throw new InvalidInputError(
      'RegisterTable needs `location`: the path of an existing Lance dataset inside the warehouse storage root (absolute, or relative to the root)',
    );
  }
  const namespace = input.id.slice(0, -1);
  const parent = await requireNamespace(services, namespace, '; create the namespace first');
  const warehouse = await requireWarehouse(services, parent?.value.warehouse ?? services.defaultWarehouse);
  const path = relativeToRoot(warehouse.storage, input.location);
  // Inside the namespace's own warehouse (above), and that warehouse's root its own: a warehouse
  // overlapping another's (created before allotments) cannot adopt the other's datasets.
  await refuseSharedRoot(services, warehouse, `register ${JSON.stringify(input.location)}`);
  const location = absoluteLocation(warehouse.storage, path);
  claimKey(services, { warehouse: warehouse.name, path }); // refuses paths the registry cannot index (13)
  const store = services.storageFor(warehouse.storage);
  await refuseLinks(store, path, `location ${JSON.stringify(input.location)}`);
  if (!(await hasData(store, path))) {
    throw new InvalidInputError(
      `${location} is not a Lance dataset: it has no committed manifest (${location}/_versions/*.manifest); register the dataset's root directory`,
    );
  }
  const key = tableKey(services, input.id);

  return services.registry.retrying(`register table ${fmtId(input.id)}`, async () => {
    const existing = await readTable(services, input.id);
    if (existing && input.mode === 'create') throw new TableAlreadyExistsError(`table ${fmtId(input.id)} already exists`);
    const record: TableRecord = {
      kind: 'table',
      id: [...input.id],
      uid: services.newId(),
      warehouse: warehouse.name,
      path,
      managedVersioning: warehouse.managedVersioning,
      properties: input.properties,
      origin: 'registered',
      mayBeProtected: false,
      dataMarker: 'data',
      createdAt: services.now().toISOString(),
    };
    if (existing) {
      // Overwrite deregisters the table it replaces: a protected one refuses, as DeregisterTable does.
      const protection = await protectionOf(services, input.id, existing.value, input.force);
      if (protection?.uid === existing.value.uid) throw protectedError('table', input.id, 'replaced by a registration');
      // Refuse before deregistering anything if the location belongs to a third table.
      await refuseIfUsedByOther(services, record, existing.value, location);
      await services.registry.remove(key, existing.etag); // lost race: retry from the top
      await releaseClaim(services, existing.value);
    }
    const claimed = await claimLocation(services, record, {
      readTable: (id) => readTable(services, id),
      checkNesting: true,
      displayLocation: location,
    }).catch(async (err: unknown) => {
      // A claim write whose answer was lost may have landed under this request's fresh uid, and no
      // record names it yet: ours to take back (trash.ts, takeBackClaim), or the name's next trash
      // read does (docs/protocols.md, "What is left after a 503 whose look failed too").
      if (outcomeUnknown(err)) await takeBackClaim(services, record);
      throw err;
    });
    let markers: MarkerHold;
    try {
      // The marker before the record that says it exists (markers.ts: never hide data), never
      // over the marker of a table that holds the name.
      markers = await claimMarkersOf(services, input.id, record, () => readTable(services, input.id));
    } catch (err) {
      // Nothing names the claim yet: taken back here or by nobody but the next claimant (persisted).
      await persist(() => releaseClaim(services, record)).catch(() => undefined);
      throw err;
    }
    try {
      return await writeRegistration(services, { record, key, namespace, location, claimed });
    } catch (err) {
      // Refused after the marker: it goes (or back to the table that holds the name).
      await markers.release();
      throw err;
    }
  });
}

/** RegisterTable from the record write on, the claim and the markers written. */
async function writeRegistration(
  services: CatalogServices,
  r: { record: TableRecord; key: string; namespace: readonly string[]; location: string; claimed: PendingClaim },
): Promise<{ location: string; properties: Record<string, string> }> {
  const { record, key, namespace, location, claimed } = r;
  let etag: string;
  try {
    etag = await services.registry.create(key, record);
  } catch (err) {
    // Our own record, written by an attempt whose answer was lost (issue #35): the uid is
    // fresh per request, so a record carrying it is ours and the registration went ahead. A
    // write whose outcome is unknown is decided by one look as DeclareTable's is: ours there,
    // it goes on; none there, the claim goes (the next read of the name would never reach a
    // `pending` claim); a look that fails too leaves the claim, stale, to the next claimant of
    // the location and to reconcile.
    const unknown = outcomeUnknown(err);
    const found = unknown ? await persist(() => readTable(services, record.id)).catch(() => 'unreadable' as const) : await readTable(services, record.id);
    if (found === 'unreadable') throw err;
    if (found?.value.uid !== record.uid) {
      if (unknown) await persist(() => releaseClaim(services, record)).catch(() => undefined);
      else await releaseClaim(services, record);
      throw err; // a create of the name won meanwhile: the retry answers 5 (or overwrites it)
    }
    etag = found.etag;
  }
  // The record exists: the confirmation follows a step done (outcome.ts, persist; it is
  // idempotent), so a 503 on it does not leave a `pending` claim under a live table.
  if (!(await persist(() => confirmClaim(services, record, claimed)))) {
    // The claim is gone or another table's. If our record is gone too, a drop removed it (and
    // answers for its claim and bytes): the registration happened, as in the cascade case below.
    if (!(await withdrawOwnRecord(services, record, key, etag))) return { location, properties: { ...record.properties } };
    throw new InvalidInputError(`location ${location} was registered by a concurrent request; a location can belong to one table at a time`);
  }
  await confirmParentOrWithdrawRegistration(services, namespace, record, key, etag);
  return { location, properties: { ...record.properties } };
}

/**
 * The create-under-drop check (namespaces/lookup.ts, confirmParentOrWithdraw), told apart by outcome:
 * if we withdraw our own record, nothing happened and the answer is 1. If the cascade removed it
 * first, the registration did happen and the cascade then dropped the table (bytes included,
 * as a cascade does), so the honest answer is success: failing here would report "nothing
 * happened" about data that is gone.
 */
async function confirmParentOrWithdrawRegistration(
  services: CatalogServices,
  namespace: readonly string[],
  record: TableRecord,
  key: string,
  etag: string,
): Promise<void> {
  if (namespace.length === 0) return;
  const parent = await readNamespace(services, namespace);
  if (parent?.value.state === 'active') return;
  if (!(await withdrawOwnRecord(services, record, key, etag))) return; // the cascade took it: see above
  throw new NamespaceNotFoundError(`namespace ${fmtId(namespace)} was dropped while the request ran`);
}

/**
 * Removes the record this request wrote and releases its claim. False when it was already
 * gone (someone else removed it, and answers for it); an update meanwhile is retried.
 */
async function withdrawOwnRecord(services: CatalogServices, record: TableRecord, key: string, etag: string): Promise<boolean> {
  let current = etag;
  for (;;) {
    try {
      await services.registry.remove(key, current);
      break;
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
    const now = await readTable(services, record.id);
    if (now?.value.uid !== record.uid) return false;
    current = now.etag;
  }
  await releaseClaim(services, record);
  return true;
}

async function refuseIfUsedByOther(
  services: CatalogServices,
  record: TableRecord,
  replaced: TableRecord,
  location: string,
): Promise<void> {
  if (replaced.warehouse === record.warehouse && replaced.path === record.path) return;
  const claim = await services.registry.read<LocationClaimRecord>(claimKey(services, record));
  if (!claim || claim.value.state === 'purging') return; // claimLocation gives the precise answer
  const holder = await liveHolder(claim.value, (id) => readTable(services, id));
  if (holder) {
    throw new InvalidInputError(
      // Names no table: the caller may have no right to read it (issue 24; docs/governance.md).
      `location ${location} is already the location of another table; a location can belong to one table at a time`,
    );
  }
}
