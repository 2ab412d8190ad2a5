import { ConcurrentModificationError, InvalidInputError, TableAlreadyExistsError } from '../../errors.js';
import type { Identity } from '../../contract/request.js';
import type { AccessMode } from '../../ports/credential-vendor.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { TableRecord, WarehouseRecord } from '../../registry/records.js';
import { confirmParentOrWithdraw, requireNamespace } from '../namespaces/lookup.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { claimMarkersOf, type MarkerHold } from '../protocols/markers.js';
import { absoluteLocation, allocateTablePath } from '../dataset/location.js';
import { claimFreshLocation, claimLocation, confirmClaim, releaseClaim } from '../protocols/claims.js';
import { readTable, tableKey, validateTableId } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { fileWithdrawal, takeBackClaim } from '../protocols/trash.js';
import { outcomeUnknown, persist } from '../outcome.js';

export interface DeclareInput {
  readonly id: readonly string[];
  readonly location?: string;
  readonly properties: Record<string, string>;
  readonly vendCredentials?: boolean;
  readonly identity: Identity;
}

export interface DeclareResult {
  location: string;
  /** Absent when nothing is vended (never `null`: the spec's object is not nullable). */
  storage_options?: Record<string, string>;
  properties: Record<string, string>;
  managed_versioning: boolean;
}

/** A table record this request just wrote, and what is needed to withdraw it again. */
export interface CreatedTableRecord {
  readonly key: string;
  readonly etag: string;
  readonly record: TableRecord;
  readonly warehouse: WarehouseRecord;
  /** The absolute location allocated for the dataset. */
  readonly location: string;
}

/**
 * Writes a new table record with a freshly allocated location: the one door through which
 * DeclareTable and CreateTable both create tables. Check order: shape → parent exists →
 * conflict (code 5) → write → re-check parent (a namespace drop that began meanwhile makes us
 * withdraw the record, so no table outlives its namespace).
 */
export async function createTableRecord(
  services: CatalogServices,
  input: {
    readonly id: readonly string[];
    readonly properties: Record<string, string>;
    /**
     * A location already allocated with allocateTablePath (CreateTable writes its data there
     * before the record exists). Must be fresh and random like the ones allocated here.
     */
    readonly path?: string;
    /**
     * The warehouse of the parent namespace, as the caller read it just before writing the data
     * at `path`. Given, the parent is not read again up front: the re-check after the record is
     * written is what keeps a table from outliving its namespace, and it still runs.
     */
    readonly warehouse?: WarehouseRecord;
  },
): Promise<CreatedTableRecord> {
  validateTableId(input.id);
  const namespace = input.id.slice(0, -1);
  const warehouse =
    input.warehouse ??
    (await requireWarehouse(
      services,
      (await requireNamespace(services, namespace, '; create the namespace first'))?.value.warehouse ?? services.defaultWarehouse,
    ));
  const key = tableKey(services, input.id);
  const record: TableRecord = {
    kind: 'table',
    id: [...input.id],
    uid: services.newId(),
    warehouse: warehouse.name,
    path: input.path ?? allocateTablePath(input.id[input.id.length - 1], services.newId()),
    managedVersioning: warehouse.managedVersioning,
    properties: input.properties,
    origin: 'declared',
    mayBeProtected: false,
    // CreateTable wrote its data first; a declared table has none until its first commit, which
    // the catalog sees only under managed versioning (markers.ts).
    dataMarker: input.path !== undefined ? 'data' : warehouse.managedVersioning ? 'none' : 'maybe',
    createdAt: services.now().toISOString(),
  };
  const location = absoluteLocation(warehouse.storage, record.path);
  const { etag, markers } =
    input.path === undefined
      ? await writeWithFreshClaim(services, record, key)
      : await writeAfterClaim(services, record, key, location);
  try {
    // The claim goes only once our own withdrawal removed the record: a re-read that failed leaves
    // the table whole (a drop's listing settles it), and a record a cascade removed is the
    // cascade's to purge, claim included (docs/protocols.md, "Faults").
    await confirmParentOrWithdraw(services, namespace, key, etag, () => takeBackClaim(services, record));
  } catch (err) {
    await markers.release();
    throw err;
  }
  return { key, etag, record, warehouse, location };
}

/** Put-if-absent of the table record; code 5 when a live table has the name. */
async function writeRecord(services: CatalogServices, record: TableRecord, key: string): Promise<string> {
  return services.registry.retrying(`declare table ${fmtId(record.id)}`, async () => {
    try {
      return await services.registry.create(key, record);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      // Taken, unless all that is there is the leftover of a rename away (readTable settles it),
      // or our own record: a write that landed but whose answer was lost, retried into its own
      // result (issue #35). The uid is fresh per request, so a record carrying it is ours.
      const found = await readTable(services, record.id);
      if (found?.value.uid === record.uid) return found.etag;
      if (found) throw new TableAlreadyExistsError(`table ${fmtId(record.id)} already exists`);
      throw err;
    }
  });
}

/**
 * DeclareTable: the location was allocated at random in this request and holds no data, so
 * nobody can register it and its claim cannot be contended (claims.ts, claimFreshLocation). The
 * claim and the record are written together: one round trip for both.
 */
async function writeWithFreshClaim(services: CatalogServices, record: TableRecord, key: string): Promise<Written> {
  // The marker before the record that says it exists (markers.ts: never hide data).
  const markers = await claimMarkersOf(services, record.id, record, () => readTable(services, record.id));
  try {
    return { etag: await claimAndWrite(services, record, key), markers };
  } catch (err) {
    await markers.release();
    throw err;
  }
}

/** A record written, and the has-data markers its door holds until the door has done (markers.ts). */
interface Written {
  readonly etag: string;
  readonly markers: MarkerHold;
}

async function claimAndWrite(services: CatalogServices, record: TableRecord, key: string): Promise<string> {
  const [claimed, written] = await Promise.allSettled([claimFreshLocation(services, record), writeRecord(services, record, key)]);
  if (written.status === 'rejected') {
    // A record write whose outcome is unknown may have landed: its claim stays until a look
    // says it did not (a claim without a record on a random path is harmless and reconcile
    // releases it; a record without its claim is not).
    if (claimed.status === 'fulfilled' || outcomeUnknown(claimed.reason)) {
      if (!outcomeUnknown(written.reason)) await takeBackClaim(services, record);
      else {
        // One look decides it: our record there (the write landed) is a success; none there,
        // the claim goes. A look that fails too leaves both to reconcile.
        const found = await persist(() => readTable(services, record.id)).catch(() => 'unreadable' as const);
        if (found !== 'unreadable' && found?.value.uid === record.uid) {
          // Our record landed; a claim write of unknown outcome is written again (its own claim is recognised).
          if (claimed.status === 'fulfilled') return found.etag;
          if (await persist(() => claimFreshLocation(services, record)).then(() => true, () => false)) return found.etag;
        }
        if (found !== 'unreadable' && found?.value.uid !== record.uid) await takeBackClaim(services, record);
        // Undecided (the look failed), or our record without its claim: the name's next trash
        // read decides it by the note (trash.ts, settleWithdrawal): record and claim, or neither.
        else await fileWithdrawal(services, record);
      }
    }
    throw written.reason;
  }
  if (claimed.status === 'rejected') {
    // A drop of the record just written (it claims the location `purging`), or a claim write
    // whose outcome is unknown: the record we know we wrote is withdrawn either way, and a claim
    // that may have landed goes after it (no read of any name reaches a fresh random location).
    await persist(() => services.registry.remove(key, written.value)).catch((e: unknown) => {
      if (!(e instanceof ConditionFailedError)) throw e;
    });
    if (!(claimed.reason instanceof ConditionFailedError)) {
      await takeBackClaim(services, record);
      throw claimed.reason;
    }
    throw new ConcurrentModificationError(`table ${fmtId(record.id)} was dropped while it was being declared; retry`);
  }
  return written.value;
}

/**
 * CreateTable: the data is already at the location, so a RegisterTable of it could race us. The
 * claim goes first as `pending` and is confirmed by compare-and-swap once the record exists.
 */
async function writeAfterClaim(services: CatalogServices, record: TableRecord, key: string, location: string): Promise<Written> {
  // The has-data marker and the claim are independent; both must precede the record (markers.ts:
  // never hide data), so they are written together.
  const [marked, claiming] = await Promise.allSettled([
    claimMarkersOf(services, record.id, record, () => readTable(services, record.id)),
    claimLocation(services, record, {
      readTable: (id) => readTable(services, id),
      checkNesting: false, // a fresh random directory cannot nest with anything
      displayLocation: location,
    }),
  ]);
  if (claiming.status === 'rejected') {
    if (marked.status === 'fulfilled') await marked.value.release();
    throw claiming.reason;
  }
  const claimed = claiming.value;
  try {
    if (marked.status === 'rejected') throw marked.reason;
    const markers = marked.value;
    const etag = await writeRecord(services, record, key);
    if (!(await persist(() => confirmClaim(services, record, claimed)))) {
      await services.registry.remove(key, etag).catch((e: unknown) => {
        if (!(e instanceof ConditionFailedError)) throw e;
      });
      throw new ConcurrentModificationError(`the location allocated for table ${fmtId(record.id)} was taken; retry`);
    }
    return { etag, markers };
  } catch (err) {
    if (marked.status === 'fulfilled') await marked.value.release();
    // Only when the record is known not to have been written: see writeWithFreshClaim.
    if (!outcomeUnknown(err)) await takeBackClaim(services, record);
    throw err;
  }
}

/**
 * Removes a record written by createTableRecord whose dataset could not be written. Conditional
 * on the etag: if anything changed the record since (a cascade removed it, a writer updated it),
 * it is no longer ours to withdraw.
 */
export async function withdrawTableRecord(services: CatalogServices, created: CreatedTableRecord): Promise<void> {
  try {
    await services.registry.remove(created.key, created.etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return; // whoever changed or removed the record now answers for its location claim too
  }
  await releaseClaim(services, created.record);
}

/**
 * Table-scoped credentials unless the caller asked for none (`vend_credentials: false`), as the
 * `storage_options` member of a response: `{}` when nothing is vended, so the key is omitted.
 * `mode` is what the caller is about to do: declare and create write, a plain describe reads.
 */
export async function vendTableAccess(
  services: CatalogServices,
  input: { readonly identity: Identity; readonly vendCredentials?: boolean },
  warehouse: WarehouseRecord,
  tablePath: string,
  mode: AccessMode = 'readwrite',
): Promise<{ storage_options?: Record<string, string> }> {
  if (input.vendCredentials === false) return {};
  const options = await services.vendor.vend({ identity: input.identity, root: warehouse.storage, tablePath, mode });
  return options === undefined ? {} : { storage_options: options };
}

/** Reserves a table name and allocates its location; the client then writes the dataset there. */
export async function declareTable(services: CatalogServices, input: DeclareInput): Promise<DeclareResult> {
  validateTableId(input.id);
  if (input.location !== undefined) {
    throw new InvalidInputError(
      'DeclareTable allocates the table location itself; omit `location` (use RegisterTable to attach existing data)',
    );
  }
  const created = await createTableRecord(services, input);
  return {
    location: created.location,
    ...(await vendTableAccess(services, input, created.warehouse, created.record.path, 'readwrite')),
    properties: { ...created.record.properties },
    managed_versioning: created.record.managedVersioning,
  };
}
