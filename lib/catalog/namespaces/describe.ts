import type { CatalogServices } from '../services.js';
import { readProtectionRecord } from '../protection.js';
import { validateId } from '../ids.js';
import { requireNamespace } from './lookup.js';

/** DescribeNamespace. */

export async function describeNamespace(
  services: CatalogServices,
  id: readonly string[],
): Promise<{ properties: Record<string, string>; protected: boolean }> {
  if (id.length === 0) return { properties: {}, protected: false };
  validateId('namespace', id);
  // `protected` is ours (docs/lifecycle.md): a top-level field the spec's response schema admits
  // and clients ignore, never inside `properties` (user data). Its record is read only when the
  // namespace's record does not rule it out (`mayBeProtected`, as for tables): one GET.
  const found = (await requireNamespace(services, id))!;
  if (found.value.mayBeProtected === false) return { properties: { ...found.value.properties }, protected: false };
  const protection = await readProtectionRecord(services, 'namespace', id);
  return { properties: { ...found.value.properties }, protected: protection?.uid === found.value.uid };
}
