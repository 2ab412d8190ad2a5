import { NamespaceAlreadyExistsError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { NamespaceRecord } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { fmtId, validateId } from '../ids.js';
import { dropNamespace, settleDrop } from './drop.js';
import { confirmParentOrWithdraw, requireNamespace } from './lookup.js';
import { type CreateMode, readNamespace } from './record.js';

/** CreateNamespace. */

export async function createNamespace(
  services: CatalogServices,
  input: { id: readonly string[]; mode: CreateMode; properties: Record<string, string> },
): Promise<{ properties: Record<string, string> }> {
  const { id, mode, properties } = input;
  if (id.length === 0) throw new NamespaceAlreadyExistsError('the root namespace always exists');
  validateId('namespace', id);
  const key = keys.namespace(services.project, id);
  const parentId = id.slice(0, -1);

  return services.registry.retrying(`create namespace ${fmtId(id)}`, async () => {
    const parent = await requireNamespace(services, parentId, '; create the parent namespace first');
    const record: NamespaceRecord = {
      kind: 'namespace',
      id: [...id],
      uid: services.newId(),
      warehouse: parent?.value.warehouse ?? services.defaultWarehouse,
      properties,
      // Every table ever in it keeps its has-data marker (protocols/markers.ts).
      tableMarkers: true,
      // Only the protection door sets it (protection.ts): describe skips the protection read.
      mayBeProtected: false,
      state: 'active',
      createdAt: services.now().toISOString(),
    };
    let etag: string;
    try {
      etag = await services.registry.create(key, record);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const existing = await readNamespace(services, id);
      if (!existing) throw err; // dropped between our write and read: try again
      if (existing.value.state === 'dropping') {
        // A drop that died (or is running) holds the name: settle it, then try again.
        await settleDrop(services, id, existing);
        throw err;
      }
      // Our own record, from an attempt whose answer was lost (issue #35): the create happened.
      if (existing.value.uid === record.uid) {
        await confirmParentOrWithdraw(services, parentId, key, existing.etag);
        return { properties: { ...properties } };
      }
      if (mode === 'create') {
        throw new NamespaceAlreadyExistsError(`namespace ${fmtId(id)} already exists`);
      }
      if (mode === 'exist_ok') return { properties: { ...existing.value.properties } };
      await dropNamespace(services, { id, mode: 'skip', behavior: 'cascade' });
      throw err; // re-run the create against the now-free name
    }
    await confirmParentOrWithdraw(services, parentId, key, etag);
    return { properties: { ...properties } };
  });
}
