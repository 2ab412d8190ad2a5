import { TableNotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { TableRecord, WarehouseRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import { fmtId, validateId } from '../ids.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { refuseLinks } from '../dataset/links.js';
import { absoluteLocation } from '../dataset/location.js';
import { readSettled } from './move.js';

export function tableKey(services: CatalogServices, id: readonly string[]): string {
  return keys.table(services.project, id);
}

/**
 * The live table record at `id`. A record caught mid-rename is settled first (move.ts), so
 * callers only ever see a live table or none, and an etag they can compare-and-swap on.
 */
export async function readTable(services: CatalogServices, id: readonly string[]): Promise<Versioned<TableRecord> | undefined> {
  return readSettled(services, id);
}

/** A table id names at least a table; its namespace is every part before the last. */
export function validateTableId(id: readonly string[]): void {
  if (id.length === 0) throw new TableNotFoundError('a table id needs at least a table name');
  validateId('table', id);
}

/** Everything an operation on an existing table needs: record, warehouse, storage. */
export interface ResolvedTable {
  readonly record: TableRecord;
  readonly etag: string;
  readonly warehouse: WarehouseRecord;
  /** The warehouse's object store (keys relative to its root). */
  readonly store: ObjectStore;
  /** The absolute location (local path or s3:// URI). */
  readonly location: string;
}

export async function resolveTable(services: CatalogServices, id: readonly string[]): Promise<ResolvedTable> {
  validateTableId(id);
  const found = await readTable(services, id);
  if (!found) throw new TableNotFoundError(`table ${fmtId(id)} does not exist`);
  const warehouse = await requireWarehouse(services, found.value.warehouse);
  const store = services.storageFor(warehouse.storage);
  // A link planted in the table's place would lead LanceDB (and the store) out of the warehouse.
  await refuseLinks(store, found.value.path, `the location of table ${fmtId(id)}`);
  return {
    record: found.value,
    etag: found.etag,
    warehouse,
    store,
    location: absoluteLocation(warehouse.storage, found.value.path),
  };
}

/**
 * True when the dataset has at least one committed manifest (not merely declared). Pages on:
 * staged manifests (`<name>.manifest-<uuid>`) and other files may fill the first page.
 */
export async function hasData(store: ObjectStore, tablePath: string): Promise<boolean> {
  const prefix = `${tablePath}/_versions/`;
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ prefix, startAfter, limit: 100 });
    if (page.objects.some((o) => o.key.endsWith('.manifest') && !o.key.slice(prefix.length).includes('/'))) return true;
    const last = page.objects[page.objects.length - 1];
    if (!page.truncated || !last) return false;
    startAfter = last.key;
  }
}
