import { InvalidInputError } from '../errors.js';

/**
 * Path segments arrive form-urlencoded by the official client (`form_urlencoded::byte_serialize`):
 * a space is `+`, everything outside `A-Za-z0-9*-._` is `%XX`. `decodeURIComponent` alone would
 * keep `+` and turn `my+table` into a wrong name.
 */
export function formDecode(segment: string, what = 'path segment'): string {
  try {
    return decodeURIComponent(segment.replace(/\+/g, ' '));
  } catch {
    throw new InvalidInputError(`malformed percent-encoding in ${what}: ${JSON.stringify(segment)}`);
  }
}

/**
 * An object id in the path: the parts joined by the delimiter. The root namespace is sent as the
 * delimiter itself; empty parts (from `a$$b` or a leading delimiter) are dropped, as the
 * reference server does.
 */
export function parseObjectId(rawSegment: string, delimiter: string): string[] {
  const joined = formDecode(rawSegment, 'object id');
  if (joined === delimiter) return [];
  return joined.split(delimiter).filter((part) => part.length > 0);
}

/** Whether two object ids are the same, part by part: the one comparison the router and the catalog share. */
export function sameId(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
