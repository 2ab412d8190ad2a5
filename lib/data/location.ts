import path from 'node:path';
import { InvalidInputError } from '../errors.js';

/**
 * A table location split the way LanceDB can open it. LanceDB has no open-by-path call; it opens
 * `<parent>/<name>.lance` as table `name` of a connection on `parent`. The catalog therefore
 * allocates locations shaped `<parent>/<safe-name>.lance`, and only those are accepted here.
 */
export interface TableLocation {
  /** Connection URI: a local directory or an object-store prefix such as `s3://bucket/prefix`. */
  readonly parent: string;
  /** LanceDB table name: the last segment without `.lance`. */
  readonly name: string;
  /** The normalised location (no trailing slash). */
  readonly uri: string;
}

const URI_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
// LanceDB rejects any other character in table names.
const NAME = /^[A-Za-z0-9_.-]+$/;

export function parseLocation(location: string): TableLocation {
  if (typeof location !== 'string' || location.trim() === '') {
    throw new InvalidInputError('table location is empty');
  }
  const uri = location.replace(/\/+$/, '');
  const isUri = URI_SCHEME.test(uri);
  if (!isUri && !path.isAbsolute(uri)) {
    throw new InvalidInputError(`table location must be an absolute path or a URI: ${location}`);
  }
  const slash = uri.lastIndexOf('/');
  const parent = uri.slice(0, slash);
  const base = uri.slice(slash + 1);
  const name = base.endsWith('.lance') ? base.slice(0, -'.lance'.length) : '';
  if (!name || !NAME.test(name)) {
    throw new InvalidInputError(
      `table location must end in "/<name>.lance" with a name of letters, digits, "_", "-" or ".": ${location}`,
    );
  }
  if (isUri && !/:\/\/[^/]+/.test(parent)) {
    throw new InvalidInputError(`table location has no bucket or host: ${location}`);
  }
  return { parent: parent === '' ? '/' : parent, name, uri };
}

/** A path inside the table (e.g. `_refs/branches/x.json`) as a local path, or undefined for remote tables. */
export function localPathInside(location: TableLocation, relative: string): string | undefined {
  if (URI_SCHEME.test(location.uri)) {
    return location.uri.startsWith('file://') ? path.join(location.uri.slice('file://'.length), relative) : undefined;
  }
  return path.join(location.uri, relative);
}
