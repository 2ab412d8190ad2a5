import { keys } from '../../registry/keys.js';
import type { NamespaceRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';

/** The namespace record as stored, and the words of the doors' modes. */

export async function readNamespace(
  services: CatalogServices,
  id: readonly string[],
): Promise<Versioned<NamespaceRecord> | undefined> {
  return services.registry.read<NamespaceRecord>(keys.namespace(services.project, id));
}

export type CreateMode = 'create' | 'exist_ok' | 'overwrite';

export type DropMode = 'fail' | 'skip';
export type DropBehavior = 'restrict' | 'cascade';

export const recordedBehavior = (r: NamespaceRecord): DropBehavior => r.drop?.behavior ?? 'restrict';
