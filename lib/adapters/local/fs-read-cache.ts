import type { StoredObject } from '../../ports/object-store.js';
import { statIdentity, statOrAbsent } from './fs-files.js';

/**
 * The filesystem object store's small-body read cache: small objects as last read, by file path.
 * A file's etag is its (device, inode, size, mtime) and no write ever changes a stored file in
 * place, so a file whose lstat still gives the etag it was read under holds the same bytes: a
 * repeated `get` (a registry record read on every request) costs one lstat instead of a realpath,
 * an open and a read. A link planted anywhere on the path leads the lstat to another file (or to
 * a link) and so to the full read, which refuses it. It is its own module so its bound
 * (docs/architecture.md, "Caches and their bounds") and its one invariant sit in one place.
 */

/** Objects at most this large keep their bytes after a `get`… */
const BODY_CACHE_MAX_BYTES = 16 * 1024;
/** …up to this many per store (least recently read dropped first). */
const BODY_CACHE_ENTRIES = 1024;

export class ReadCache {
  readonly #recent = new Map<string, { identity: string; object: StoredObject }>();

  /** A copy of the bytes `get` last read at `file`, if the file is still the one they came from. */
  recentObject(file: string): StoredObject | undefined {
    const entry = this.#recent.get(file);
    if (!entry) return undefined;
    this.#recent.delete(file);
    const stat = statOrAbsent(file);
    if (!stat?.isFile() || statIdentity(stat) !== entry.identity) return undefined;
    this.#recent.set(file, entry);
    return { ...entry.object, body: Buffer.from(entry.object.body) };
  }

  remember(file: string, read: { identity: string; object: StoredObject }): void {
    if (read.object.body.length > BODY_CACHE_MAX_BYTES) return;
    this.#recent.delete(file);
    this.#recent.set(file, { identity: read.identity, object: { ...read.object, body: Buffer.from(read.object.body) } });
    if (this.#recent.size > BODY_CACHE_ENTRIES) this.#recent.delete(this.#recent.keys().next().value!);
  }

  /** What the cache holds now (the store's cacheUse). */
  cacheUse(): { bodies: number; bodyBytes: number } {
    let bodyBytes = 0;
    for (const { object } of this.#recent.values()) bodyBytes += object.body.length;
    return { bodies: this.#recent.size, bodyBytes };
  }
}
