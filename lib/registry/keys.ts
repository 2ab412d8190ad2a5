import { InvalidInputError } from '../errors.js';

/**
 * The registry's key layout. THE KEY ENCODING IS THE SCHEMA: it is versioned by
 * LAYOUT_VERSION (lib/registry/layout.ts) and may only change through a migration.
 *
 *   layout.json                               layout version record
 *   projects/<P>                              project record
 *   p/<P>/w/<W>                               warehouse record
 *   p/<P>/t/<a>/<b>/+n/<c>                    namespace a.b.c
 *   p/<P>/t/<a>/<b>/+n/<c>!                   drop mark: namespace a.b.c may be dropping
 *   p/<P>/t/<a>/<b>/+t/<x>                    table a.b.x
 *   p/<P>/data/<a>/<b>/+t/<x>                 table a.b.x has data (maybe/…: may have; markers.ts)
 *   p/<P>/loc/<W>/<s1>/<s2>/…/+c              claim on location s1/s2/… of warehouse W
 *   p/<P>/jobs/live/<J>                       job J while queued, running or just finished
 *   p/<P>/jobs/done/<J>                       job J once finished, until its retention ends
 *   idem/<sha256(principal)>/<sha256(key)>    an Idempotency-Key's claim and answer (idempotency-records.ts)
 *
 * <…> is `encodeSegment(name)`. Records are always leaves and a namespace's children live in
 * its own directory (`p/<P>/t/<a>/<b>/`), so listing a namespace's children is one LIST of a
 * prefix that contains nothing else, and a cascade finds every descendant under one prefix.
 * `+n` and `+t` can never collide with an encoded name because `+` is always escaped.
 *
 * Location claims (lib/catalog/protocols/claims.ts) index table locations, so "no two live tables
 * on one location" is a put-if-absent. The location path keeps its `/` structure, one encoded
 * segment per directory, and the claim is the leaf `+c` inside: a claim on `a/b` and one on
 * `a/b/c` never collide (no key is both an object and a directory, which the filesystem store
 * cannot hold), and the claims nested below a location are one LIST of its directory.
 *
 * Jobs (lib/jobs/) are split by life stage so that a worker looking for work lists only the
 * live ones: the finished jobs kept for DescribeTransaction never slow a claim down. `live` and
 * `done` are fixed words, never user input, and job ids are 32 lowercase hex digits (validated
 * by lib/queue/ids.ts) whose byte order is their creation order (to the millisecond), so both
 * listings are oldest first. A job is only ever in one of the two (or, for an instant while it moves, the same
 * record in both; lib/queue/store.ts says which copy wins).
 *
 * encodeSegment escapes, as `%XX`, exactly the bytes below `0`: (0x00–0x2F, which includes
 * `/`, `%`, `+`, `.`, space). Because `%` (0x25) is itself below every byte that stays raw,
 * an escaped byte sorts below every raw byte and escaped bytes sort among themselves by their
 * hex — so the encoding preserves byte order (S3 listing order is the order of names), is
 * injective (`%` is always escaped, so decoding is unambiguous), and never yields `/`, `.` or
 * `..` as a path segment. Everything from `0` upward (letters, digits, UTF-8) stays readable.
 */

/**
 * A namespace's drop mark (lib/catalog/namespaces/drop-marks.ts) is its record key plus `!`, and
 * so is a table's rename mark (lib/catalog/protocols/rename-marks.ts). `!`
 * (0x21) is below every byte an encoded segment can hold (`%` is 0x25), so the mark sorts right
 * after its record and before any other name: a page of ListNamespaces sees each listed name's
 * mark in the same LIST. No name encodes to a segment with a raw `!`, so a mark is never a name.
 */
export const DROP_MARK_SUFFIX = '!';

/** Whether `segment` is one `encodeSegment` can produce (raw bytes from `0` up, or `%XX`). */
export function isEncodedSegment(segment: string): boolean {
  return segment.length > 0 && !/[\x00-\x24\x26-\x2f]/.test(segment);
}

/** The encoded name a drop-mark segment (`<c>!`) marks, or undefined for any other segment. */
export function dropMarkedSegment(segment: string): string | undefined {
  if (!segment.endsWith(DROP_MARK_SUFFIX)) return undefined;
  const name = segment.slice(0, -DROP_MARK_SUFFIX.length);
  return isEncodedSegment(name) ? name : undefined;
}

/** Longest name, in UTF-8 bytes: 80 fully escaped bytes are 240, under a 255-byte filename. */
export const MAX_NAME_BYTES = 80;
/** Keys must fit S3's 1024-byte limit after a store prefix; keep headroom for it. */
export const MAX_KEY_BYTES = 900;

export type NameKind = 'namespace' | 'table' | 'project' | 'warehouse';

/** What every name may be, quoted by each refusal (docs/governance.md, "Names and limits"). */
const ALLOWED_NAMES = `names are 1 to ${MAX_NAME_BYTES} bytes of UTF-8, not "." or "..", without control characters, format characters (bidi overrides, zero-width characters, the BOM) or line separators`;

/**
 * Characters no name may hold: controls (Cc, C0 and C1), format characters (Cf: bidi overrides
 * and isolates such as U+202E, zero-width characters such as U+200B, the BOM U+FEFF) and line or
 * paragraph separators. They make one name display as another in listings, logs and consoles.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** The one check every name (project, warehouse, namespace, table) passes, whichever door it enters by. */
export function validateName(kind: NameKind, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidInputError(`${kind} name must be a non-empty string; ${ALLOWED_NAMES}`);
  }
  if (!name.isWellFormed()) throw new InvalidInputError(`${kind} name ${JSON.stringify(name)} is not valid Unicode; ${ALLOWED_NAMES}`);
  const bad = INVISIBLE.exec(name);
  if (bad) {
    const cp = `U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const what = /\p{Cc}/u.test(bad[0]) ? 'a control character' : /\p{Cf}/u.test(bad[0]) ? 'a format character' : 'a line separator';
    throw new InvalidInputError(`${kind} name ${JSON.stringify(name)} contains ${what} (${cp}); ${ALLOWED_NAMES}`);
  }
  // A path-like "." or ".." reads as "here" or "the parent" wherever names become paths or URLs.
  if (name === '.' || name === '..') throw new InvalidInputError(`${kind} name ${JSON.stringify(name)} is not allowed; ${ALLOWED_NAMES}`);
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    throw new InvalidInputError(`${kind} name is ${bytes} bytes long; ${ALLOWED_NAMES}`);
  }
}

export function encodeSegment(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    out += byte < 0x30 ? `%${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte);
  }
  // The loop above produced one JS char per byte; reinterpret the raw bytes as UTF-8.
  return Buffer.from(out, 'latin1').toString('utf8');
}

export function decodeSegment(segment: string): string {
  const bytes: number[] = [];
  const raw = Buffer.from(segment, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x25) {
      bytes.push(parseInt(raw.subarray(i + 1, i + 3).toString('latin1'), 16));
      i += 2;
    } else {
      bytes.push(raw[i]);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function checked(key: string): string {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) {
    throw new InvalidInputError(
      `the object path is too long for the registry (over ${MAX_KEY_BYTES} bytes once encoded); use fewer or shorter namespace levels`,
    );
  }
  return key;
}

const seg = encodeSegment;

/** Longest encoded segment of a location path: a filename on the filesystem store. */
export const MAX_PATH_SEGMENT_BYTES = 255;

/** A table location path (relative to its warehouse root), one encoded segment per directory. */
function locationSegments(relPath: string): string {
  return relPath
    .split('/')
    .map((part) => {
      if (part === '') throw new InvalidInputError(`location path ${JSON.stringify(relPath)} has an empty segment`);
      const encoded = seg(part);
      if (Buffer.byteLength(encoded, 'utf8') > MAX_PATH_SEGMENT_BYTES) {
        throw new InvalidInputError(
          `location path segment ${JSON.stringify(part.slice(0, 40))}… is too long for the registry; use directory names under 80 bytes`,
        );
      }
      return encoded;
    })
    .join('/');
}

export const keys = {
  layout: () => 'layout.json',
  /** The storage-claims index: every warehouse's root, in one record (lib/catalog/storage-claims.ts). */
  storageClaims: () => 'storage/claims',
  projectsPrefix: () => 'projects/',
  project: (project: string) => checked(`projects/${seg(project)}`),
  warehousesPrefix: (project: string) => `p/${seg(project)}/w/`,
  warehouse: (project: string, warehouse: string) => checked(`p/${seg(project)}/w/${seg(warehouse)}`),
  /** The directory holding everything below namespace `id` (the whole project tree for `[]`). */
  subtree: (project: string, id: readonly string[]) =>
    checked(`p/${seg(project)}/t/${id.map((part) => `${seg(part)}/`).join('')}`),
  namespace: (project: string, id: readonly string[]) =>
    checked(`${keys.subtree(project, id.slice(0, -1))}+n/${seg(id[id.length - 1])}`),
  childNamespacesPrefix: (project: string, id: readonly string[]) => `${keys.subtree(project, id)}+n/`,
  /** Beside the namespace's record, while a drop of it may be under way (DROP_MARK_SUFFIX). */
  namespaceDropMark: (project: string, id: readonly string[]) => checked(`${keys.namespace(project, id)}${DROP_MARK_SUFFIX}`),
  table: (project: string, id: readonly string[]) =>
    checked(`${keys.subtree(project, id.slice(0, -1))}+t/${seg(id[id.length - 1])}`),
  /** Beside the table's record, while a rename touching that name may be under way (DROP_MARK_SUFFIX). */
  tableRenameMark: (project: string, id: readonly string[]) => checked(`${keys.table(project, id)}${DROP_MARK_SUFFIX}`),
  tablesPrefix: (project: string, namespace: readonly string[]) => `${keys.subtree(project, namespace)}+t/`,
  /**
   * Protection records (lib/lifecycle/protection.ts) mirror the object tree, so every protection
   * inside a namespace's subtree is one LIST of `protectionSubtree` away.
   */
  protection: (project: string, kind: 'namespace' | 'table', id: readonly string[]) =>
    checked(`p/${seg(project)}/prot/${(kind === 'namespace' ? keys.namespace(project, id) : keys.table(project, id)).slice(keys.subtree(project, []).length)}`),
  protectionSubtree: (project: string, id: readonly string[]) => checked(`p/${seg(project)}/prot/${id.map((part) => `${seg(part)}/`).join('')}`),
  /**
   * Has-data markers (lib/catalog/protocols/markers.ts) mirror the table keys like protection
   * records: `data` for a table known to have data, `maybe` for one whose data the catalog cannot
   * see (no managed versioning). A namespace's markers of one kind are one LIST of a prefix.
   */
  dataMarker: (project: string, kind: 'data' | 'maybe', id: readonly string[]) =>
    checked(`p/${seg(project)}/${kind}/${keys.table(project, id).slice(keys.subtree(project, []).length)}`),
  dataMarkersPrefix: (project: string, kind: 'data' | 'maybe', namespace: readonly string[]) =>
    checked(`p/${seg(project)}/${kind}/${keys.tablesPrefix(project, namespace).slice(keys.subtree(project, []).length)}`),
  dataMarkersSubtree: (project: string, kind: 'data' | 'maybe', namespace: readonly string[]) =>
    checked(`p/${seg(project)}/${kind}/${namespace.map((part) => `${seg(part)}/`).join('')}`),
  /** Trash records of dropped tables once at `id` (lib/catalog/protocols/trash.ts), one per dropped uid. */
  trashOf: (project: string, id: readonly string[]) => checked(`p/${seg(project)}/trash/${keys.table(project, id).slice(keys.subtree(project, []).length)}/`),
  trash: (project: string, id: readonly string[], uid: string) => checked(`${keys.trashOf(project, id)}${seg(uid)}`),
  /**
   * Trash records of namespaces once at `id`, one per recoverable cascade drop (dropId), and the
   * directory holding every trash record (tables and namespaces) below namespace `id`: the tree
   * layout is mirrored, so a subtree's trash is one LIST away.
   */
  namespaceTrashOf: (project: string, id: readonly string[]) =>
    checked(`p/${seg(project)}/trash/${keys.namespace(project, id).slice(keys.subtree(project, []).length)}/`),
  namespaceTrash: (project: string, id: readonly string[], dropId: string) => checked(`${keys.namespaceTrashOf(project, id)}${seg(dropId)}`),
  trashSubtree: (project: string, id: readonly string[]) => checked(`p/${seg(project)}/trash/${id.map((part) => `${seg(part)}/`).join('')}`),
  /** Every trash record of the project (expiry, reconcile and the orphan scan walk these). */
  trashPrefix: (project: string) => `p/${seg(project)}/trash/`,
  /** Every location claim of the project (the orphan scan walks these). */
  locationClaimsPrefix: (project: string) => `p/${seg(project)}/loc/`,
  /** The directory of location `relPath`: its own claim and the claims of locations below it. */
  locationClaimDir: (project: string, warehouse: string, relPath: string) =>
    checked(`p/${seg(project)}/loc/${seg(warehouse)}/${locationSegments(relPath)}/`),
  locationClaim: (project: string, warehouse: string, relPath: string) =>
    checked(`${keys.locationClaimDir(project, warehouse, relPath)}+c`),
  /** Jobs not yet retired (queued, running, or finished a moment ago): what workers list. */
  liveJobsPrefix: (project: string) => `p/${seg(project)}/jobs/live/`,
  liveJob: (project: string, id: string) => checked(`${keys.liveJobsPrefix(project)}${seg(id)}`),
  /** Finished jobs kept for their retention period (DescribeTransaction still answers for them). */
  doneJobsPrefix: (project: string) => `p/${seg(project)}/jobs/done/`,
  doneJob: (project: string, id: string) => checked(`${keys.doneJobsPrefix(project)}${seg(id)}`),
  /** A project's usage and quota of one kind of object (lib/catalog/quotas.ts; docs/operations.md, "Object quotas"). */
  quota: (project: string, kind: string) => checked(`p/${seg(project)}/quota/${seg(kind)}`),
};

/** Splits a key found under `locationClaimsPrefix(project)` back into warehouse and path. */
export function parseLocationClaimKey(project: string, key: string): { warehouse: string; path: string } | undefined {
  const root = keys.locationClaimsPrefix(project);
  if (!key.startsWith(root) || !key.endsWith('/+c')) return undefined;
  const parts = key.slice(root.length, -'/+c'.length).split('/');
  if (parts.length < 2) return undefined;
  return { warehouse: decodeSegment(parts[0]), path: parts.slice(1).map(decodeSegment).join('/') };
}

/** Splits a key found under `subtree(project, [])` back into its kind and object id. */
export function parseTreeKey(project: string, key: string): { kind: 'namespace' | 'table'; id: string[] } | undefined {
  const root = keys.subtree(project, []);
  if (!key.startsWith(root)) return undefined;
  const parts = key.slice(root.length).split('/');
  const marker = parts[parts.length - 2];
  if (marker !== '+n' && marker !== '+t') return undefined;
  // A drop mark (or anything else that is not an encoded name) is no object of the tree.
  if (!isEncodedSegment(parts[parts.length - 1])) return undefined;
  const id = [...parts.slice(0, -2), parts[parts.length - 1]].map(decodeSegment);
  return { kind: marker === '+n' ? 'namespace' : 'table', id };
}

/** The table id a key under `dataMarkersSubtree(project, kind, [])` marks (markers mirror table keys). */
export function parseDataMarkerKey(project: string, kind: 'data' | 'maybe', key: string): string[] | undefined {
  const root = keys.dataMarkersSubtree(project, kind, []);
  if (!key.startsWith(root)) return undefined;
  const parsed = parseTreeKey(project, keys.subtree(project, []) + key.slice(root.length));
  return parsed?.kind === 'table' ? parsed.id : undefined;
}
