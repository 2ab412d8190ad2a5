/**
 * The object-store port: the only storage primitive the registry (and managed versioning)
 * needs. Semantics follow S3 general-purpose buckets, because that is what production runs on:
 *
 * - keys are strings; listing order is the byte order of their UTF-8 encoding;
 * - `putIfAbsent` succeeds for exactly one of any number of concurrent callers on a key;
 * - `putIfMatch` / `deleteIfMatch` succeed only while the stored etag equals the given one;
 * - a lost race (the condition did not hold) throws `ConditionFailedError`, never anything else,
 *   so callers can re-read and retry. A missing key on `putIfMatch` / `deleteIfMatch` is also a
 *   lost race (the object it was conditioned on is gone);
 * - storage that cannot answer (S3 throttling, 5xx, timeouts after retries, a 409 that outlasts
 *   the store's own retries; a failing or full disk) throws `StorageUnavailableError`
 *   (lib/errors.ts, 503 / code 17), never `ConditionFailedError`: a 409 from S3 is not a lost race;
 * - a conditional write whose earlier attempt may have applied recognises its own write (the key
 *   holds what it sent, or is gone after a delete) and succeeds (docs/protocols.md, "When S3 fails").
 *
 * Every implementation runs the same contract suite (test/contract/object-store.suite.ts).
 */

export interface StoredObject {
  readonly body: Buffer;
  /** Opaque version tag; quoted like S3's (e.g. `"9b2c…"`). Compare as strings. */
  readonly etag: string;
  readonly size: number;
  readonly lastModified: Date;
}

export interface ObjectInfo {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  readonly lastModified: Date;
}

export interface CopiedObject {
  readonly etag: string;
  readonly lastModified: Date;
  /** Absent where the store's copy answer does not carry it (S3 CopyObject). */
  readonly size?: number;
}

export interface ListOptions {
  /** Only keys starting with this string. */
  readonly prefix?: string;
  /** Roll keys up at the first occurrence of this string after the prefix (S3 `Delimiter`). */
  readonly delimiter?: string;
  /** Exclusive lower bound on keys (S3 `StartAfter`); need not exist. */
  readonly startAfter?: string;
  /** At most this many entries (objects + common prefixes). Absent: all of them. */
  readonly limit?: number;
}

export interface ListResult {
  /** Objects in byte order of their keys. */
  readonly objects: readonly ObjectInfo[];
  /** With a delimiter: the rolled-up prefixes (each ending in the delimiter), in byte order. */
  readonly commonPrefixes: readonly string[];
  /** True when more entries exist after the last returned one. */
  readonly truncated: boolean;
}

export interface ObjectStore {
  /** A human-readable description of where the objects live (`file:///…`, `s3://b/p`, `memory:`). */
  readonly url: string;
  get(key: string): Promise<StoredObject | undefined>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Create; throws ConditionFailedError if the key exists. */
  putIfAbsent(key: string, body: Buffer | string): Promise<{ etag: string }>;
  /** Replace; throws ConditionFailedError unless the key exists with exactly this etag. */
  putIfMatch(key: string, body: Buffer | string, etag: string): Promise<{ etag: string }>;
  /**
   * Copies `source` to `key` unless `key` exists: a commit that needs neither the source's bytes
   * in this process nor a HEAD afterwards (S3 CopyObject with If-None-Match; a hard link on disk).
   * With `sourceEtag`, only if the source still has that etag. Answers the new object's etag and
   * timestamp (and its size where the store knows it without another request), or undefined when
   * `source` does not exist. Throws ConditionFailedError when `key` exists or the source's etag
   * differs; S3 answers both with one 412, so the caller tells them apart if it must.
   */
  copyIfAbsent(source: string, key: string, options?: { sourceEtag?: string }): Promise<CopiedObject | undefined>;
  /** Unconditional write (data files, not registry records). */
  put(key: string, body: Buffer | string): Promise<{ etag: string }>;
  /** Delete; throws ConditionFailedError unless the key exists with exactly this etag. */
  deleteIfMatch(key: string, etag: string): Promise<void>;
  /** Unconditional delete; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  list(options: ListOptions): Promise<ListResult>;
  /**
   * The keys `list` would answer (no delimiter), without their etags, sizes or timestamps. Only a
   * store that pays per object for those (the filesystem store: an lstat each) implements it;
   * callers that need names alone (registry pages) use it when present and `list` otherwise.
   */
  listKeys?(options: Omit<ListOptions, 'delimiter'>): Promise<{ keys: string[]; truncated: boolean }>;
  /**
   * Throws LinkRefusedError when `path` (a key, or a key prefix without its trailing `/`)
   * resolves through a symbolic link. Only stores that have links (the filesystem store)
   * implement it; callers about to hand a location to code that opens paths itself (LanceDB)
   * call it first.
   */
  checkPath?(path: string): Promise<void>;
}

/**
 * A key or prefix resolves through a symbolic link, which the store never follows: a link can
 * point out of the root, and reading, writing or deleting through it would touch bytes the
 * catalog does not own. `link` is the key of the first link on the way.
 */
export class LinkRefusedError extends Error {
  constructor(
    readonly key: string,
    readonly link: string,
  ) {
    super(`${JSON.stringify(key)} resolves through the symbolic link ${JSON.stringify(link)}; links are not followed`);
    this.name = 'LinkRefusedError';
  }
}

/** The condition of a conditional write did not hold: someone else won the race. */
export class ConditionFailedError extends Error {
  /**
   * An earlier attempt of this write had an unknown outcome, and the key now holds someone
   * else's object: either that attempt never applied, or it applied and a later writer (who saw
   * it) replaced or removed it. The store cannot tell; a caller whose step is not idempotent
   * can (docs/protocols.md, "When S3 fails").
   */
  readonly mayHaveApplied: boolean;

  constructor(
    readonly key: string,
    readonly reason: 'exists' | 'etag-mismatch' | 'missing' | 'conflict',
    options: { mayHaveApplied?: boolean } = {},
  ) {
    super(`conditional write on ${JSON.stringify(key)} lost: ${reason}`);
    this.name = 'ConditionFailedError';
    this.mayHaveApplied = options.mayHaveApplied ?? false;
  }
}

/**
 * Byte-order comparison of two strings' UTF-8 encodings (JS `<` compares UTF-16 units). UTF-8
 * byte order is code point order, which UTF-16 unit order matches except where a surrogate (half
 * of a code point above U+FFFF) meets a unit in U+E000–U+FFFF; so the first differing units decide,
 * a surrogate ranking above every other unit. No encoding: a directory sort makes thousands of these.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = isSurrogate(x);
    if (xs !== isSurrogate(y)) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const isSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdfff;

/** A registry record as read, with the ETag a conditional write of it must match. */
export interface Versioned<T> {
  readonly value: T;
  readonly etag: string;
}
