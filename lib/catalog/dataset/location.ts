import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidInputError } from '../../errors.js';
import { iamPatternIn } from '../../ports/credential-vendor.js';
import type { StorageRoot } from '../../ports/storage-root.js';

/**
 * Table locations. A location is allocated once per creation under the warehouse root as
 * `tables/<random>/<safe-name>.lance`: the random directory makes it unique (a re-created name
 * never reuses old bytes) and the `<name>.lance` tail is what LanceDB's own connection can open
 * (`connect(dir).openTable(name)` accepts only `[A-Za-z0-9_.-]`).
 */
export function allocateTablePath(name: string, random: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_').slice(0, 48) || 'table';
  return `tables/${random.replace(/-/g, '').slice(0, 16)}/${safe}.lance`;
}

/** The absolute location clients get: a local path or an `s3://bucket/key` URI. */
export function absoluteLocation(root: StorageRoot, relative: string): string {
  if (root.kind === 'file') return path.join(root.path, relative);
  return `s3://${root.bucket}/${joinKey(root.prefix, relative)}`;
}

/** A complete URI for `table_uri` (`file:///…` locally). */
export function locationUri(root: StorageRoot, relative: string): string {
  if (root.kind === 'file') return new URL(`file://${path.join(root.path, relative)}`).href;
  return absoluteLocation(root, relative);
}

/**
 * The inverse for locations supplied by callers (RegisterTable): a path relative to the
 * warehouse root, or an absolute location inside it. Anything outside is refused.
 */
export function relativeToRoot(root: StorageRoot, location: string): string {
  // Refused on every storage kind, so a registration that works locally also works on S3, where
  // the location becomes an IAM resource in the vended session policy.
  const pattern = iamPatternIn(location);
  if (pattern !== undefined) {
    throw new InvalidInputError(
      `location ${JSON.stringify(location)} contains ${JSON.stringify(pattern)}: IAM wildcard and variable characters (*, ?, \${) are not allowed in table locations; rename the dataset's directory`,
    );
  }
  let rel: string;
  if (root.kind === 'file') {
    // fileURLToPath, not URL.pathname: the latter keeps `%20` and friends percent-encoded.
    const abs = location.startsWith('file://') ? localPathOf(location) : location;
    rel = path.isAbsolute(abs) ? path.relative(root.path, abs) : abs;
  } else if (location.startsWith('s3://')) {
    // The root prefix as a directory: `s3://b/wh` must not admit `s3://b/wh2/…`.
    const base = root.prefix === '' || root.prefix.endsWith('/') ? root.prefix : `${root.prefix}/`;
    const prefix = `s3://${root.bucket}/${base}`;
    if (!location.startsWith(prefix)) throw outside(location);
    rel = location.slice(prefix.length);
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw outside(location);
  } else {
    rel = location;
  }
  rel = rel.replace(/\/+$/, '');
  const parts = rel.split('/');
  if (!rel || rel.startsWith('/') || parts.some((p) => p === '..' || p === '' || p === '.')) throw outside(location);
  return rel;
}

/**
 * An object-store path as the Lance client writes it (relative to the store root: the bucket
 * key, or a local absolute path without its leading `/`), made relative to the warehouse root.
 */
export function storePathToRelative(root: StorageRoot, storePath: string): string | undefined {
  const base = root.kind === 'file' ? root.path.replace(/^\/+/, '') : root.prefix;
  const trimmed = storePath.replace(/^\/+/, '');
  const prefix = base === '' ? '' : base.endsWith('/') ? base : `${base}/`;
  return trimmed.startsWith(prefix) ? trimmed.slice(prefix.length) : undefined;
}

/** The inverse of storePathToRelative: what the client opens with the store built from `location`. */
export function relativeToStorePath(root: StorageRoot, relative: string): string {
  if (root.kind === 'file') return path.join(root.path, relative);
  return joinKey(root.prefix, relative);
}

function joinKey(prefix: string, rel: string): string {
  if (!prefix) return rel;
  return prefix.endsWith('/') ? prefix + rel : `${prefix}/${rel}`;
}

/**
 * A `file://` URL as a local path. fileURLToPath throws a plain TypeError for URLs naming a host
 * (`file://evilhost/etc`) or an encoded slash (`%2F`); both are the caller's mistake (13).
 */
function localPathOf(location: string): string {
  try {
    return fileURLToPath(location);
  } catch {
    throw new InvalidInputError(
      `location ${JSON.stringify(location)} is not a local file URL: use file:///<absolute path> (no host, no encoded "/"), or a path`,
    );
  }
}

function outside(location: string) {
  return new InvalidInputError(
    `location ${JSON.stringify(location)} is not inside the warehouse's storage root; register data that lies under it`,
  );
}
