import { InternalError } from '../errors.js';
import { keys } from '../registry/keys.js';
import type { WarehouseRecord } from '../registry/records.js';
import type { CatalogServices } from './services.js';

/** The warehouse a namespace or table is bound to; its absence is a broken registry. */
export async function requireWarehouse(services: CatalogServices, name: string): Promise<WarehouseRecord> {
  const found = await services.registry.read<WarehouseRecord>(keys.warehouse(services.project, name));
  if (!found) throw new InternalError(`warehouse ${JSON.stringify(name)} is missing from the registry`);
  return found.value;
}
