import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { StorageRoot } from '../ports/storage-root.js';

/** `s3://bucket/prefix` or an absolute local directory, as the control plane writes them. */
export function parseStorageRoot(text: unknown): StorageRoot {
  if (typeof text !== 'string' || text.length === 0) {
    throw new InvalidInputError('storage_root is required: s3://bucket/prefix or an absolute local directory');
  }
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(text);
  if (s3) {
    const prefix = (s3[2] ?? '').replace(/\/+$/, '');
    if (prefix.split('/').some((p) => p === '' || p === '.' || p === '..') && prefix !== '') {
      throw new InvalidInputError(`storage_root ${JSON.stringify(text)} has an empty, "." or ".." segment`);
    }
    return { kind: 's3', bucket: s3[1], prefix: prefix === '' ? '' : `${prefix}/` };
  }
  if (text.startsWith('s3://')) throw new InvalidInputError(`storage_root ${JSON.stringify(text)} is not a valid s3://bucket/prefix`);
  if (!path.isAbsolute(text)) {
    throw new InvalidInputError(`storage_root ${JSON.stringify(text)} must be s3://bucket/prefix or an absolute local directory`);
  }
  return { kind: 'file', path: path.resolve(text) };
}

export function formatStorageRoot(root: StorageRoot): string {
  return root.kind === 's3' ? `s3://${root.bucket}/${root.prefix}` : root.path;
}

/**
 * A root as the path segments that name its storage, the unit every comparison uses: the kind,
 * then the bucket and the prefix's segments (S3), or the normalised absolute path's segments
 * (local; `..`, `.` and repeated or trailing slashes are resolved away). Comparing whole segments
 * is what keeps `s3://b/ab` from containing `s3://b/abc`. Symbolic links are not resolved here
 * (this is pure): the door that records a local root stores its real path (lib/catalog/control/allotment.ts).
 */
export function rootSegments(root: StorageRoot): readonly string[] {
  if (root.kind === 's3') return ['s3', root.bucket, ...root.prefix.split('/').filter(Boolean)];
  return ['file', ...path.resolve(root.path).split('/').filter(Boolean)];
}

/** Whether `inner` equals `outer` or lies inside it, on whole path segments. */
export function rootInside(inner: StorageRoot, outer: StorageRoot): boolean {
  const [i, o] = [rootSegments(inner), rootSegments(outer)];
  return o.length <= i.length && o.every((segment, n) => segment === i[n]);
}

/**
 * Whether two roots share storage: same bucket (or file system) and one contains the other, on
 * whole path segments (`a/b` overlaps `a/b/c` and `a`, not `a/bc`). Equal roots overlap.
 */
export function rootsOverlap(a: StorageRoot, b: StorageRoot): boolean {
  return rootInside(a, b) || rootInside(b, a);
}

/** The root one directory below `root` (a project's allotment inside a declared storage root). */
export function childRoot(root: StorageRoot, segment: string): StorageRoot {
  if (root.kind === 'file') return { kind: 'file', path: path.join(root.path, segment) };
  return { ...root, prefix: `${root.prefix.replace(/\/*$/, '/').replace(/^\/$/, '')}${segment}/` };
}
