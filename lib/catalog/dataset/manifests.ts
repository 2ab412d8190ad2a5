import type { ObjectInfo, ObjectStore } from '../../ports/object-store.js';

/**
 * Lance manifest naming. V2 names are `{u64::MAX - N:020}.manifest`, so an ascending LIST of
 * `_versions/` is newest-first; V1 names are `{N}.manifest`.
 */
const U64_MAX = 2n ** 64n - 1n;

export type NamingScheme = 'V1' | 'V2';

export function manifestName(version: number | bigint, scheme: NamingScheme): string {
  const v = BigInt(version);
  return scheme === 'V2' ? `${(U64_MAX - v).toString().padStart(20, '0')}.manifest` : `${v}.manifest`;
}

/** The version a manifest file name stands for, or undefined for anything else (staging files). */
export function parseManifestName(name: string): { version: number; scheme: NamingScheme } | undefined {
  const m = /^(\d+)\.manifest$/.exec(name);
  if (!m) return undefined;
  if (m[1].length === 20) {
    const v = U64_MAX - BigInt(m[1]);
    if (v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return { version: Number(v), scheme: 'V2' };
  }
  return { version: Number(m[1]), scheme: 'V1' };
}

export function versionsPrefix(tablePath: string, branch?: string): string {
  return branch && branch !== 'main' ? `${tablePath}/tree/${branch}/_versions/` : `${tablePath}/_versions/`;
}

/** The stored manifest of `version`, whichever naming scheme wrote it. */
export async function findManifest(
  store: ObjectStore,
  tablePath: string,
  version: number,
  branch?: string,
): Promise<ObjectInfo | undefined> {
  const prefix = versionsPrefix(tablePath, branch);
  for (const scheme of ['V2', 'V1'] as const) {
    const info = await store.head(prefix + manifestName(version, scheme));
    if (info) return info;
  }
  return undefined;
}
