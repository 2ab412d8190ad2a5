import type { CatalogServices } from '../services.js';

/**
 * Removes one table found by a cascading namespace drop. The namespace cascade calls this for
 * every table record under the dropped subtree; table lifecycle rules (bytes, trash) live here.
 */
export async function removeTableForCascade(
  services: CatalogServices,
  key: string,
  etag: string,
): Promise<void> {
  await services.registry.remove(key, etag);
}
