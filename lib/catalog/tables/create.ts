import { ConcurrentModificationError, TableAlreadyExistsError, TableNotFoundError } from '../../errors.js';
import type { Identity } from '../../contract/request.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { WarehouseRecord } from '../../registry/records.js';
import type { CreateMode } from '../namespaces/record.js';
import { requireNamespace } from '../namespaces/lookup.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { claimKey } from '../protocols/claims.js';
import { createTableRecord, vendTableAccess } from './declare.js';
import { absoluteLocation, allocateTablePath } from '../dataset/location.js';
import { writeFirstVersion } from '../protocols/first-version.js';
import { ensureHasData } from '../protocols/markers.js';
import { hasData, readTable, type ResolvedTable, resolveTable, validateTableId } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { deleteTableObjects } from '../protocols/purge.js';

export interface CreateTableInput {
  readonly id: readonly string[];
  readonly mode: CreateMode;
  readonly properties: Record<string, string>;
  readonly identity: Identity;
}

export interface CreateTableResult {
  version: number;
  location: string;
  /** Absent when nothing is vended. */
  storage_options?: Record<string, string>;
  properties: Record<string, string>;
}

/**
 * Writes the request's dataset at `location`. `create` must fail with code 5 when a dataset is
 * already there; `exist_ok` must leave an existing one alone and report its version;
 * `overwrite` replaces its data.
 */
export type DatasetWrite = (location: string, mode: CreateMode) => Promise<{ version: number }>;

/**
 * CreateTable. A new table is written **data first**: the dataset goes to a freshly allocated
 * location that nothing else knows about, then the registry record is created through the same
 * door as DeclareTable (createTableRecord: parent check, put-if-absent, location claim,
 * create-under-drop protocol). The table appears with its data or not at all.
 *
 * Why not record first: the loser of the record race would write into the winner's location
 * and rely on the dataset's create-if-absent check; under concurrent HTTP requests both were
 * seen answering 200 (docs/data-plane.md). With a fresh location per request the only
 * contended step is the record's put-if-absent: one request wins; a loser deletes the data it
 * wrote (no one can have seen it) and then treats the table as existing.
 *
 * An existing record (a declared table, or one with data) gets the write at its own location
 * with the caller's mode: `create` answers 5 from the dataset itself when data is there, a
 * declared table receives its data, `exist_ok` returns it untouched, `overwrite` replaces its
 * data. Properties are only set when the record is created. Writers racing into one *declared*
 * (dataless) table are serialized by the first-version protocol (first-version.ts), not by
 * LanceDB's create-if-absent check, which lets two creators both commit.
 *
 * A failed write leaves no table: no record was created, and the fresh location is emptied
 * unless another table has claimed it meanwhile (discard).
 */
export async function createTable(
  services: CatalogServices,
  input: CreateTableInput,
  write: DatasetWrite,
): Promise<CreateTableResult> {
  validateTableId(input.id);
  // A record that vanishes between looking and writing (a concurrent drop): look again.
  for (let attempt = 1; ; attempt++) {
    try {
      if (await readTable(services, input.id)) return await writeIntoExisting(services, input, write);
      return await createNew(services, input, write);
    } catch (err) {
      if (!(err instanceof TableNotFoundError) || attempt >= 3) throw err;
    }
  }
}

async function createNew(services: CatalogServices, input: CreateTableInput, write: DatasetWrite): Promise<CreateTableResult> {
  // Checked before writing data, so a missing namespace costs no write (createTableRecord
  // checks again, under its create-under-drop protocol).
  const parent = await requireNamespace(services, input.id.slice(0, -1), '; create the namespace first');
  const warehouse = await requireWarehouse(services, parent?.value.warehouse ?? services.defaultWarehouse);
  const path = allocateTablePath(input.id[input.id.length - 1], services.newId());
  const location = absoluteLocation(warehouse.storage, path);
  const store = services.storageFor(warehouse.storage);

  let version: number;
  try {
    ({ version } = await write(location, 'create'));
  } catch (err) {
    await discard(services, warehouse, store, path);
    throw err;
  }
  try {
    // The warehouse read before the data was written: the record's own parent re-check covers a
    // drop that began since, so the parent is not read again before the record.
    const created = await createTableRecord(services, { id: input.id, properties: input.properties, path, warehouse });
    return answer(services, input, { version, location, warehouse, path, properties: created.record.properties });
  } catch (err) {
    await discard(services, warehouse, store, path);
    // Another request created the table meanwhile: from here on it is an existing table.
    if (err instanceof TableAlreadyExistsError) return writeIntoExisting(services, input, write);
    throw err;
  }
}

async function writeIntoExisting(services: CatalogServices, input: CreateTableInput, write: DatasetWrite): Promise<CreateTableResult> {
  const table = await resolveTable(services, input.id);
  const { version } = await writeAt(services, table, input.mode, write);
  // The record we wrote under must still be the same table (not dropped, not re-created).
  const now = await readTable(services, input.id);
  if (now?.value.uid !== table.record.uid) {
    throw new ConcurrentModificationError(
      `table ${fmtId(input.id)} was dropped or replaced while its data was written; the data at ${table.location} is not registered`,
    );
  }
  return answer(services, input, {
    version,
    location: table.location,
    warehouse: table.warehouse,
    path: table.record.path,
    properties: table.record.properties,
  });
}

/**
 * A declared table's first version is arbitrated (first-version.ts): of several CreateTables
 * (and inserts) racing into one dataless table exactly one publishes version 1; a loser writes
 * with its own mode on top of it, so `create` answers 5 from the dataset, `exist_ok` returns it
 * and `overwrite` replaces it.
 */
async function writeAt(services: CatalogServices, table: ResolvedTable, mode: CreateMode, write: DatasetWrite) {
  await markBeforeFirstWrite(services, table);
  if (!(await hasData(table.store, table.record.path))) {
    const target = { store: table.store, path: table.record.path, location: table.location };
    const first = await writeFirstVersion(target, services.newId(), (staging) => write(staging, 'create'));
    if (first.won) return first.value;
  }
  return write(table.location, mode);
}

async function answer(
  services: CatalogServices,
  input: CreateTableInput,
  t: { version: number; location: string; warehouse: WarehouseRecord; path: string; properties: Readonly<Record<string, string>> },
): Promise<CreateTableResult> {
  return {
    version: t.version,
    location: t.location,
    ...(await vendTableAccess(services, input, t.warehouse, t.path, 'readwrite')),
    properties: { ...t.properties },
  };
}

/**
 * Empties the location this request wrote, unless another table claims it now: the directory
 * was visible in storage once the data landed, and a RegisterTable of it that got there before
 * our claim made those bytes that table's (a failed create has released its own claim by now,
 * so any claim is another's). Best effort: whatever stays behind is an unreferenced directory
 * under a random name, which the orphan scan reports.
 */
async function discard(services: CatalogServices, warehouse: WarehouseRecord, store: ObjectStore, path: string): Promise<void> {
  const claim = await services.registry.read(claimKey(services, { warehouse: warehouse.name, path })).catch(() => undefined);
  if (claim) return;
  await deleteTableObjects(store, path).catch(() => undefined);
}

/** A declared managed table about to get data: its has-data marker first (markers.ts). */
export async function markBeforeFirstWrite(services: CatalogServices, table: ResolvedTable): Promise<void> {
  if (table.record.dataMarker !== 'none') return;
  const id = table.record.id;
  await ensureHasData(services, id, table, () => readTable(services, id), () =>
    new ConcurrentModificationError(`table ${fmtId(id)} was dropped, renamed or re-created while its data was written; retry`),
  );
}
