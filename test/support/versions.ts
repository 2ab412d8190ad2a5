import { randomUUID } from 'node:crypto';
import { manifestName, versionsPrefix, type NamingScheme } from '../../lib/catalog/dataset/manifests.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

/** Stands in for a Lance client's commit: the staging manifest it writes before version/create. */
export async function stageManifest(
  store: ObjectStore,
  tablePath: string,
  version: number,
  body: Buffer | string,
  options: { branch?: string; scheme?: NamingScheme } = {},
): Promise<{ key: string; etag: string; size: number }> {
  const key = `${versionsPrefix(tablePath, options.branch)}${manifestName(version, options.scheme ?? 'V2')}-${randomUUID()}`;
  const { etag } = await store.put(key, body);
  return { key, etag, size: Buffer.byteLength(body) };
}

/** The key a committed version's manifest must end up at. */
export const finalKey = (tablePath: string, version: number, options: { branch?: string; scheme?: NamingScheme } = {}) =>
  versionsPrefix(tablePath, options.branch) + manifestName(version, options.scheme ?? 'V2');

/** Settles to 'ok' or the catalog error code, so racing calls can be tallied. */
export const outcome = (p: Promise<unknown>): Promise<'ok' | number> =>
  p.then(
    () => 'ok' as const,
    (e: unknown) => {
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'number') return code;
      throw e;
    },
  );
