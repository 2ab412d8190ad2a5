import { createHash } from 'node:crypto';
import {
  ConditionFailedError,
  compareKeys,
  type CopiedObject,
  type ListOptions,
  type ListResult,
  type ObjectInfo,
  type ObjectStore,
  type StoredObject,
} from '../../ports/object-store.js';

interface Entry {
  readonly body: Buffer;
  readonly etag: string;
  readonly lastModified: Date;
}

/**
 * An object store in a Map, with S3's semantics (md5 etags, byte-order listing), for unit tests
 * and local runs. Every method is async and does its check-and-set without an `await` in between,
 * so concurrent callers interleave between calls exactly like they would against S3.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly url = 'memory:';
  readonly #objects = new Map<string, Entry>();

  async get(key: string): Promise<StoredObject | undefined> {
    const entry = this.#objects.get(key);
    if (entry === undefined) return undefined;
    // A copy, so a caller mutating the buffer cannot change what is stored.
    return { ...info(key, entry), body: Buffer.from(entry.body) };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const entry = this.#objects.get(key);
    return entry && info(key, entry);
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<{ etag: string }> {
    if (this.#objects.has(key)) throw new ConditionFailedError(key, 'exists');
    return this.#write(key, body);
  }

  async copyIfAbsent(source: string, key: string, options: { sourceEtag?: string } = {}): Promise<CopiedObject | undefined> {
    const original = this.#objects.get(source);
    if (original === undefined) return undefined;
    if (options.sourceEtag !== undefined && original.etag !== options.sourceEtag) {
      throw new ConditionFailedError(source, 'etag-mismatch');
    }
    if (this.#objects.has(key)) throw new ConditionFailedError(key, 'exists');
    const entry = { body: original.body, etag: original.etag, lastModified: new Date() };
    this.#objects.set(key, entry);
    return { etag: entry.etag, lastModified: entry.lastModified, size: entry.body.length };
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<{ etag: string }> {
    this.#expect(key, etag);
    return this.#write(key, body);
  }

  async put(key: string, body: Buffer | string): Promise<{ etag: string }> {
    return this.#write(key, body);
  }

  async deleteIfMatch(key: string, etag: string): Promise<void> {
    this.#expect(key, etag);
    this.#objects.delete(key);
  }

  async delete(key: string): Promise<void> {
    this.#objects.delete(key);
  }

  async list(options: ListOptions): Promise<ListResult> {
    checkLimit(options.limit);
    const limit = options.limit ?? Infinity;
    const objects: ObjectInfo[] = [];
    const commonPrefixes: string[] = [];
    const keys = [...this.#objects.keys()].sort(compareKeys);
    for (const entry of rollUp(keys, options)) {
      if (objects.length + commonPrefixes.length === limit) return { objects, commonPrefixes, truncated: true };
      if ('prefix' in entry) commonPrefixes.push(entry.prefix);
      else objects.push(info(entry.key, this.#objects.get(entry.key)!));
    }
    return { objects, commonPrefixes, truncated: false };
  }

  #expect(key: string, etag: string): void {
    const current = this.#objects.get(key);
    if (current === undefined) throw new ConditionFailedError(key, 'missing');
    if (current.etag !== etag) throw new ConditionFailedError(key, 'etag-mismatch');
  }

  #write(key: string, body: Buffer | string): { etag: string } {
    const copy = Buffer.from(body);
    const etag = md5Etag(copy);
    this.#objects.set(key, { body: copy, etag, lastModified: new Date() });
    return { etag };
  }
}

/** S3 etags of single-part, non-KMS objects are the quoted md5 of the body. */
export function md5Etag(body: Buffer): string {
  return `"${createHash('md5').update(body).digest('hex')}"`;
}

/** Shared by the adapters so an invalid page size fails the same way everywhere. */
export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
    throw new RangeError(`list limit must be a positive integer, got ${limit}`);
  }
}

function info(key: string, entry: Entry): ObjectInfo {
  return { key, etag: entry.etag, size: entry.body.length, lastModified: entry.lastModified };
}

/**
 * S3's listing walk over keys already in byte order: keep keys under the prefix and after
 * startAfter, roll keys up to their common prefix at the first delimiter after the prefix, and
 * drop common prefixes not after startAfter (so a page token that is a common prefix skips
 * everything under it, as with S3).
 */
function* rollUp(sortedKeys: Iterable<string>, options: ListOptions): Generator<{ key: string } | { prefix: string }> {
  const { prefix = '', delimiter, startAfter } = options;
  const after = (s: string) => startAfter === undefined || compareKeys(s, startAfter) > 0;
  let lastPrefix: string | undefined;
  for (const key of sortedKeys) {
    if (!key.startsWith(prefix) || !after(key)) continue;
    const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    if (cut < 0) {
      yield { key };
      continue;
    }
    const common = key.slice(0, cut + delimiter!.length);
    if (common === lastPrefix || !after(common)) continue;
    lastPrefix = common;
    yield { prefix: common };
  }
}
