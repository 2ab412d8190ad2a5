import { ConcurrentModificationError, TableAlreadyExistsError, TableNotFoundError } from '../../errors.js';
import type { Identity } from '../../operations/types.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { CreateMode } from '../namespaces.js';
import type { CatalogServices } from '../services.js';
import { createTableRecord, type CreatedTableRecord, vendTableAccess, withdrawTableRecord } from './declare.js';
import { fmtId, hasData, readTable, resolveTable, tableKey } from './lookup.js';

export interface CreateTableInput {
  readonly id: readonly string[];
  readonly mode: CreateMode;
  readonly properties: Record<string, string>;
  readonly identity: Identity;
}

export interface CreateTableResult {
  version: number;
  location: string;
  storage_options: Record<string, string> | null;
  properties: Record<string, string>;
}

/**
 * Writes the request's dataset at `location`. `create` must fail with code 5 when a dataset is
 * already there; `exist_ok` must leave an existing one alone and report its version;
 * `overwrite` replaces its data.
 */
export type DatasetWrite = (location: string, mode: CreateMode) => Promise<{ version: number }>;

/**
 * CreateTable: the registry record first (through the same door as DeclareTable), then the data.
 *
 * - No record yet: create one, write with `create` into its fresh location; if the write fails
 *   and left no committed dataset, withdraw the record, so a failed create leaves no table.
 * - A record exists: the write goes to its location with the caller's mode. A declared-only
 *   table therefore gets its data (as the LanceDB client does after a declare), `create` on a
 *   table with data answers 5 (from the dataset itself, so a racing writer cannot slip past a
 *   check), `exist_ok` returns it untouched, `overwrite` replaces its data. Properties are only
 *   set when the record is created.
 *
 * Races: two creates of a new name meet at the record (put-if-absent): one creates it, the other
 * writes into it as into a declared table; the dataset's own create-if-absent commit lets only
 * one of them write with `create`. A writer that loses that race does not withdraw a record
 * someone else's data now lives in. A writer that wrote into an existing record re-reads it
 * afterwards and reports a conflict if it was withdrawn meanwhile.
 */
export async function createTable(
  services: CatalogServices,
  input: CreateTableInput,
  write: DatasetWrite,
): Promise<CreateTableResult> {
  const target = await createOrFind(services, input);
  let version: number;
  try {
    ({ version } = await write(target.location, target.created ? 'create' : input.mode));
  } catch (err) {
    if (target.created) await withdrawUnlessWritten(services, target.created);
    throw err;
  }
  if (!target.created) await confirmStillRegistered(services, input.id, target.uid, target.location);
  return {
    version,
    location: target.location,
    storage_options: await vendTableAccess(services, input, target.warehouse, target.path),
    properties: { ...target.properties },
  };
}

interface Target {
  readonly created?: CreatedTableRecord;
  readonly location: string;
  readonly uid: string;
  readonly path: string;
  readonly warehouse: CreatedTableRecord['warehouse'];
  readonly properties: Readonly<Record<string, string>>;
}

async function createOrFind(services: CatalogServices, input: CreateTableInput): Promise<Target> {
  return services.registry.retrying(`create table ${fmtId(input.id)}`, async () => {
    try {
      const created = await createTableRecord(services, input);
      const { record } = created;
      return {
        created,
        location: created.location,
        uid: record.uid,
        path: record.path,
        warehouse: created.warehouse,
        properties: record.properties,
      };
    } catch (err) {
      if (!(err instanceof TableAlreadyExistsError)) throw err;
    }
    // The record exists. If it vanishes before we read it (a drop), that is a lost race: retry.
    const existing = await resolveTable(services, input.id).catch((err: unknown) => {
      if (err instanceof TableNotFoundError) throw new ConditionFailedError(tableKey(services, input.id), 'missing');
      throw err;
    });
    const { record } = existing;
    return {
      location: existing.location,
      uid: record.uid,
      path: record.path,
      warehouse: existing.warehouse,
      properties: record.properties,
    };
  });
}

async function withdrawUnlessWritten(services: CatalogServices, created: CreatedTableRecord): Promise<void> {
  const store = services.storageFor(created.warehouse.storage);
  // Someone else's create committed a dataset at this location: the table exists, keep it.
  if (await hasData(store, created.record.path)) return;
  await withdrawTableRecord(services, created);
}

async function confirmStillRegistered(
  services: CatalogServices,
  id: readonly string[],
  uid: string,
  location: string,
): Promise<void> {
  const now = await readTable(services, id);
  if (now?.value.uid === uid) return;
  throw new ConcurrentModificationError(
    `table ${fmtId(id)} was dropped or replaced while its data was written; the data at ${location} is not registered`,
  );
}
