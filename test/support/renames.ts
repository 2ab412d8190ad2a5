import type { CatalogServices } from '../../lib/catalog/services.js';
import { liveRecord } from '../../lib/catalog/protocols/move.js';
import { keys } from '../../lib/registry/keys.js';
import type { TableRecord } from '../../lib/registry/records.js';
import type { Versioned } from '../../lib/ports/object-store.js';

/**
 * The source's mark alone (`moving`, no arrival at the destination): the state a rename leaves
 * when its arrival is lost or it dies with only the mark landed. beginMove writes both at once,
 * so crash states are built here step by step.
 */
export async function markMoving(
  services: CatalogServices,
  sourceId: readonly string[],
  source: Versioned<TableRecord>,
  destination: readonly string[],
): Promise<Versioned<TableRecord>> {
  const moving: TableRecord = { ...liveRecord(source.value), state: 'moving', move: { nonce: services.newId(), to: [...destination] } };
  return { value: moving, etag: await services.registry.replace(keys.table(services.project, sourceId), moving, source.etag) };
}
