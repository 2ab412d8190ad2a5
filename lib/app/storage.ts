import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config.js';
import type { AwsConfig } from '../config.js';
import { encodeSegment } from '../registry/keys.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { childRoot, formatStorageRoot, parseStorageRoot, rootsOverlap } from '../registry/storage-roots.js';

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

/**
 * The AWS deployment's storage, for every AWS composition (API functions, maintenance): the
 * registry is reserved; a fresh deployment's default warehouse gets its own directory beside the
 * projects' storage (docs/governance.md, "Storage allotment"; an existing one keeps the root its
 * record holds); projects are allotted inside `<warehouse prefix>projects/` unless
 * RASK_STORAGE_ROOTS says otherwise.
 */
export function awsStorage(config: AwsConfig): { reservedRoots: StorageRoot[]; warehouseRoot: StorageRoot; storageRoots: StorageRoot[] } {
  const reservedRoots: StorageRoot[] = [{ kind: 's3', bucket: config.RASK_REGISTRY_BUCKET, prefix: config.RASK_REGISTRY_PREFIX }];
  const base: StorageRoot = { kind: 's3', bucket: config.RASK_WAREHOUSE_BUCKET, prefix: config.RASK_WAREHOUSE_PREFIX, region: config.AWS_REGION };
  const warehouseRoot = childRoot(base, encodeSegment(config.RASK_WAREHOUSE));
  const storageRoots = declaredRoots(config.RASK_STORAGE_ROOTS, childRoot(base, 'projects'), 's3', [...reservedRoots, warehouseRoot]);
  return { reservedRoots, warehouseRoot, storageRoots };
}
