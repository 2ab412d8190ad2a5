import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { StorageRoot } from '../registry/records.js';

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
 * Whether two roots share storage: same bucket (or file system) and one prefix contains the
 * other, on whole path segments (`a/b` overlaps `a/b/c` and `a`, not `a/bc`).
 */
export function rootsOverlap(a: StorageRoot, b: StorageRoot): boolean {
  if (a.kind !== b.kind) return false;
  const dirs = (x: StorageRoot) =>
    x.kind === 's3' ? `${x.bucket}/${x.prefix.replace(/\/*$/, '/')}`.replace(/\/+$/, '/') : `${path.resolve(x.path)}/`.replace(/\/+$/, '/');
  const [da, db] = [dirs(a), dirs(b)];
  return da.startsWith(db) || db.startsWith(da);
}
