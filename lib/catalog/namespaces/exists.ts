import type { CatalogServices } from '../services.js';
import { validateId } from '../ids.js';
import { requireNamespace } from './lookup.js';

/** NamespaceExists. */

export async function namespaceExists(services: CatalogServices, id: readonly string[]): Promise<void> {
  validateId('namespace', id);
  await requireNamespace(services, id);
}
