import { InvalidInputError, TableAlreadyExistsError } from '../../errors.js';
import type { Identity } from '../../operations/types.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { TableRecord } from '../../registry/records.js';
import { confirmParentOrWithdraw, requireNamespace } from '../namespaces.js';
import type { CatalogServices } from '../services.js';
import { requireWarehouse } from '../warehouses.js';
import { absoluteLocation, allocateTablePath } from './location.js';
import { fmtId, tableKey, validateTableId } from './lookup.js';

export interface DeclareInput {
  readonly id: readonly string[];
  readonly location?: string;
  readonly properties: Record<string, string>;
  readonly vendCredentials?: boolean;
  readonly identity: Identity;
}

export interface DeclareResult {
  location: string;
  storage_options: Record<string, string> | null;
  properties: Record<string, string>;
  managed_versioning: boolean;
}

/**
 * Reserves a table name and allocates its location; the client then writes the dataset there.
 * Check order: shape → parent exists → conflict → write → re-check parent (a drop that began
 * meanwhile makes us withdraw the record, so no table outlives its namespace).
 */
export async function declareTable(services: CatalogServices, input: DeclareInput): Promise<DeclareResult> {
  validateTableId(input.id);
  if (input.location !== undefined) {
    throw new InvalidInputError(
      'DeclareTable allocates the table location itself; omit `location` (use RegisterTable to attach existing data)',
    );
  }
  const namespace = input.id.slice(0, -1);
  const parent = await requireNamespace(services, namespace, '; create the namespace first');
  const warehouse = await requireWarehouse(services, parent?.value.warehouse ?? services.defaultWarehouse);
  const key = tableKey(services, input.id);
  const record: TableRecord = {
    kind: 'table',
    id: [...input.id],
    uid: services.newId(),
    warehouse: warehouse.name,
    path: allocateTablePath(input.id[input.id.length - 1], services.newId()),
    managedVersioning: warehouse.managedVersioning,
    properties: input.properties,
    origin: 'declared',
    createdAt: services.now().toISOString(),
  };
  let etag: string;
  try {
    etag = await services.registry.create(key, record);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new TableAlreadyExistsError(`table ${fmtId(input.id)} already exists`);
    throw err;
  }
  await confirmParentOrWithdraw(services, namespace, key, etag);
  const storageOptions =
    input.vendCredentials === false
      ? undefined
      : await services.vendor.vend({ identity: input.identity, root: warehouse.storage, tablePath: record.path, mode: 'readwrite' });
  return {
    location: absoluteLocation(warehouse.storage, record.path),
    storage_options: storageOptions ?? null,
    properties: { ...record.properties },
    managed_versioning: record.managedVersioning,
  };
}
