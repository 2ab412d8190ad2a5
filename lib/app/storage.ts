import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config.js';
import type { StorageRoot } from '../registry/records.js';
import { formatStorageRoot, parseStorageRoot, rootsOverlap } from '../registry/storage-roots.js';

/**
 * The storage a deployment declares (docs/governance.md, "Storage allotment"): RASK_STORAGE_ROOTS,
 * a comma-separated list of roots, or the composition's default. A declared root must be of the
 * kind the deployment stores on and must not overlap the platform's reserved locations.
 */
export function declaredRoots(text: string | undefined, fallback: StorageRoot, kind: StorageRoot['kind'], reserved: readonly StorageRoot[]): StorageRoot[] {
  const roots = text === undefined ? [fallback] : text.split(',').map((t) => t.trim()).filter(Boolean).map((t) => parseDeclared(t));
  if (roots.length === 0) throw new ConfigError('invalid configuration: RASK_STORAGE_ROOTS: must name at least one storage root');
  for (const root of roots) {
    if (root.kind !== kind) throw new ConfigError(`invalid configuration: RASK_STORAGE_ROOTS: ${formatStorageRoot(root)} is not ${kind === 's3' ? 'an s3:// root' : 'a local directory'}`);
    const clash = reserved.find((r) => rootsOverlap(r, root));
    if (clash) throw new ConfigError(`invalid configuration: RASK_STORAGE_ROOTS: ${formatStorageRoot(root)} overlaps ${formatStorageRoot(clash)}, which the platform reserves`);
  }
  return roots;
}

function parseDeclared(text: string): StorageRoot {
  try {
    return parseStorageRoot(text);
  } catch (err) {
    throw new ConfigError(`invalid configuration: RASK_STORAGE_ROOTS: ${(err as Error).message}`);
  }
}

/** Local roots exist and are recorded by their real path, so symbolic links cannot widen them. */
export async function realLocalRoots(roots: readonly StorageRoot[]): Promise<StorageRoot[]> {
  return Promise.all(
    roots.map(async (r) => {
      if (r.kind !== 'file') return r;
      await mkdir(r.path, { recursive: true });
      return { kind: 'file' as const, path: await realpath(r.path) };
    }),
  );
}

/** Locally, projects' storage is inside the data directory unless RASK_STORAGE_ROOTS says otherwise. */
export const localStorageDefault = (dataDir: string): StorageRoot => ({ kind: 'file', path: path.join(dataDir, 'projects') });
