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

/**
 * A client-supplied `x-request-id` (the LanceDB remote client sends one), when it is a plain
 * token: 8 to 128 of `A-Za-z0-9._:-`. The request then carries the client's id, in its log lines
 * and in the change stamp and events it writes, so a client whose answer was lost can ask what
 * that request changed (`GET /v1/requests/{request_id}`; docs/operations.md, "Did my commit
 * land?"). Anything else is ignored and the server's own id is used.
 */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdOf(headers: Readonly<Record<string, string | string[] | undefined>>, own: () => string): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : own();
}
