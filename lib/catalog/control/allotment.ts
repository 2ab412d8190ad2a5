import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { CatalogServices } from '../services.js';
import { reservedOverlap } from '../storage-claims.js';
import { InvalidInputError, PermissionDeniedError } from '../../errors.js';
import type { Caller } from '../../contract/request.js';
import { encodeSegment } from '../../registry/keys.js';
import type { ProjectRecord } from '../../registry/records.js';
import type { StorageRoot } from '../../ports/storage-root.js';
import { childRoot, formatStorageRoot, rootInside } from '../../registry/storage-roots.js';

/**
 * Storage allotment (docs/governance.md, "Storage allotment"): the operator declares the storage
 * a deployment may use (CatalogServices.storage); project P is allotted `<declared root>/<P>/`
 * in each declared root, plus whatever a platform administrator adds to its record
 * (`storage_roots` on CreateProject / UpdateProject). A warehouse root must lie inside the
 * project's allotment; the overlap rule between warehouses is the claims index's
 * (lib/catalog/storage-claims.ts).
 */

/** Every root project `p` may put warehouses in. */
export function allottedRoots(services: CatalogServices, p: Pick<ProjectRecord, 'name' | 'storageRoots'>): StorageRoot[] {
  const declared = services.storage?.roots ?? [];
  return [...declared.map((root) => childRoot(root, encodeSegment(p.name))), ...(p.storageRoots ?? [])];
}

/** 403 unless `root` lies inside project `p`'s allotment; the message lists the allotment (the caller's own). */
export function requireAllotted(services: CatalogServices, p: ProjectRecord, root: StorageRoot): void {
  const allotted = allottedRoots(services, p);
  if (allotted.some((a) => rootInside(root, a))) return;
  throw new PermissionDeniedError(
    `storage_root ${formatStorageRoot(root)} is outside the storage allotted to project ${JSON.stringify(p.name)}` +
      (allotted.length ? ` (${allotted.map(formatStorageRoot).join(', ')})` : ' (this deployment declares no storage)') +
      '; a platform administrator can allot more (UpdateProject storage_roots)',
  );
}

/**
 * A root as it is recorded: a local directory by its real path (the nearest existing ancestor
 * resolved through symbolic links, the rest appended), so a link inside an allotment cannot
 * point a warehouse at a directory outside it. S3 has no links: as parsed.
 */
export async function canonicalRoot(root: StorageRoot): Promise<StorageRoot> {
  if (root.kind !== 'file') return root;
  let existing = path.resolve(root.path);
  const rest: string[] = [];
  for (;;) {
    try {
      return { kind: 'file', path: path.join(await realpath(existing), ...rest.reverse()) };
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return { kind: 'file', path: path.resolve(root.path) };
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * `storage_roots` of CreateProject / UpdateProject, as parsed (lib/registry/storage-roots.ts):
 * extra allotment, which only a platform administrator may set (403 otherwise), each root inside
 * the declared storage (400) and clear of the platform's reserved locations (400), recorded by
 * its real path. Undefined when the request does not mention it.
 */
export async function checkAllotment(services: CatalogServices, roots: readonly StorageRoot[] | undefined, caller: Caller | undefined): Promise<StorageRoot[] | undefined> {
  if (roots === undefined) return undefined;
  if (caller && !caller.platformAdmin) throw new PermissionDeniedError('only a platform administrator may allot storage (storage_roots)');
  const out: StorageRoot[] = [];
  for (const parsed of roots) {
    const root = await canonicalRoot(parsed);
    if (!(services.storage?.roots ?? []).some((d) => rootInside(root, d))) {
      throw new InvalidInputError(`storage_roots: ${formatStorageRoot(root)} is outside the storage this deployment declares (RASK_STORAGE_ROOTS)`);
    }
    if (reservedOverlap(services, root)) throw new InvalidInputError(`storage_roots: ${formatStorageRoot(root)} overlaps storage reserved by the platform`);
    out.push(root);
  }
  return out;
}
