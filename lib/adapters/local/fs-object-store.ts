import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, write, writeSync, type BigIntStats } from 'node:fs';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ConditionFailedError,
  LinkRefusedError,
  type CopiedObject,
  type ListOptions,
  type ListResult,
  type ObjectInfo,
  type ObjectStore,
  type StoredObject,
} from '../../ports/object-store.js';
import { checkLimit } from '../memory/object-store.js';
import { onDisk } from './fs-errors.js';
import { code, fileEtag, inDirAsync, isAbsent, RESERVED_ROOT_DIRS, statIdentity, statOrAbsent } from './fs-files.js';
import { LinkGuard } from './fs-links.js';
import { LISTING_CACHE_CHILDREN, ListingCache } from './fs-listing-cache.js';
import { KeyLocks } from './fs-locks.js';
import { ReadCache } from './fs-read-cache.js';
import { walk, type Query } from './fs-walk.js';

export { LISTING_CACHE_CHILDREN, RESERVED_ROOT_DIRS };

export interface FsObjectStoreOptions {
  /** A lock file older than this is assumed to belong to a crashed process and is broken. */
  readonly lockStaleMs?: number;
  /** Directory entries all cached listings hold together at most (default LISTING_CACHE_CHILDREN). */
  readonly listingCacheChildren?: number;
}

/**
 * Objects up to this size are read and staged with synchronous calls, as are the metadata reads
 * around them (lstat, realpath). A registry record or a manifest is a few KiB: each such call
 * takes microseconds, while each step through libuv's thread pool costs a wake-up and a hop back
 * to the event loop — most of a metadata request's time on the local server. Larger bodies are
 * read and written off the loop, so one big object never stalls other requests; so is the fsync
 * that makes a staged write durable, and so is every call that changes a directory (create,
 * link, rename, unlink, rmdir, lock files): those wait for the filesystem journal, which a
 * concurrent fsync holds, and on the loop they stalled every request for 1–180 ms each under
 * the memory soak (issue #36; docs/benchmarks.md).
 */
const SYNC_IO_MAX_BYTES = 256 * 1024;

/**
 * Objects as plain files under a root directory (`root/<key>`), so Lance can use the same
 * directories as datasets. Conditional writes hold across processes:
 *
 * - `putIfAbsent` hard-links a fully written temp file onto the target; `link` fails if the
 *   target exists, so exactly one creator wins without a lock.
 * - everything that replaces or removes an existing file holds a per-key lock file (`open` with
 *   `wx`) across "read etag, compare, rename/unlink", so a check cannot be overtaken by a write.
 *   Unconditional `put`/`delete` take the lock too: otherwise they could land between another
 *   caller's etag check and its rename and be silently undone.
 *
 * Unlike S3, a key cannot be both an object and a "directory" of other keys (`a` and `a/b`);
 * such a write fails with a plain Error.
 *
 * Symbolic links are never followed (a link can point out of the root, and the catalog must not
 * read, write or delete bytes it does not own): every operation checks that the directory it
 * resolves a key in is reached without a link (one `realpath` compared with the root's; a `get`
 * checks once its file is open, so a miss, which reads nothing, skips it), a read opens with
 * `O_NOFOLLOW`, and a listing reports a link as a leaf object of its own, never descending into
 * it, so deleting what a listing found removes the link and not its target.
 * Anything else throws LinkRefusedError. The root's own ancestors may be links (`/tmp` on macOS).
 *
 * Etags identify a file version by (device, inode, size, mtime), never by content, so listing a
 * dataset costs one stat per file instead of reading every byte. Every write stages a new file
 * and links/renames it into place, so a write gets a fresh inode; because inodes are recycled
 * and kernel timestamps are coarse, each staged file's mtime is also set to a per-process
 * strictly increasing microsecond, so a recycled inode does not bring back an old etag.
 *
 * This class is the façade: each mechanism lives in its own module — the per-key locks
 * (fs-locks.ts), the link check (fs-links.ts), the ordered listing walk and its sorted-listing
 * cache (fs-walk.ts, fs-listing-cache.ts), the small-body read cache (fs-read-cache.ts) — with
 * the file facts they share in fs-files.ts.
 */
export class FsObjectStore implements ObjectStore {
  readonly url: string;
  readonly #root: string;
  readonly #tmpDir: string;
  readonly #locks: KeyLocks;
  readonly #links: LinkGuard;
  readonly #listings: ListingCache;
  readonly #recent = new ReadCache();

  constructor(root: string, options: FsObjectStoreOptions = {}) {
    if (!path.isAbsolute(root)) throw new Error(`FsObjectStore root must be absolute: ${root}`);
    this.#root = path.resolve(root);
    this.#tmpDir = path.join(this.#root, '.tmp');
    this.#locks = new KeyLocks(path.join(this.#root, '.locks'), options.lockStaleMs ?? 10_000);
    this.#links = new LinkGuard(this.#root);
    this.#listings = new ListingCache(this.#root, options.listingCacheChildren ?? LISTING_CACHE_CHILDREN);
    this.url = pathToFileURL(this.#root).href;
  }

  // Every operation answers a failing disk with StorageUnavailableError (./fs-errors.ts).

  async get(key: string): Promise<StoredObject | undefined> {
    return onDisk(() => this.#get(key));
  }

  async #get(key: string): Promise<StoredObject | undefined> {
    const file = this.#path(key);
    const recent = this.#recent.recentObject(file);
    if (recent) return recent;
    try {
      // The link check runs once the file is open: a key that is not there reads nothing through
      // any link, so a miss (a registry lookup of a free name) costs one failed open.
      const small = readSmallFile(file, () => this.#links.checkDir(path.dirname(file), key));
      if (small === null) return undefined;
      if (small) {
        this.#recent.remember(file, small);
        return small.object;
      }
      return await withFile(file, async (handle, stat) => {
        const body = await handle.readFile();
        return { body, etag: fileEtag(stat), size: body.length, lastModified: stat.mtime };
      });
    } catch (error) {
      if (code(error) === 'ELOOP') throw new LinkRefusedError(key, key);
      throw error;
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    return onDisk(async () => {
      this.#checkedPath(key);
      return this.#info(key);
    });
  }

  /**
   * An arrow property rather than a method: wrappers built with `Object.create(store)` (request
   * counters in tests) reach it through the prototype chain with its `this` still the store.
   */
  readonly checkPath = (keyOrPrefix: string): Promise<void> =>
    onDisk(async () => {
      const file = this.#path(keyOrPrefix);
      this.#links.checkDir(path.dirname(file), keyOrPrefix);
      if (statOrAbsent(file)?.isSymbolicLink()) throw new LinkRefusedError(keyOrPrefix, keyOrPrefix);
    });

  async putIfAbsent(key: string, body: Buffer | string): Promise<{ etag: string }> {
    return onDisk(() => this.#putIfAbsent(key, body));
  }

  async #putIfAbsent(key: string, body: Buffer | string): Promise<{ etag: string }> {
    const target = this.#checkedPath(key);
    // link keeps the inode and mtime, so the staged file's etag is the stored object's.
    const { staged, etag } = await this.#stage(body);
    try {
      await inDirAsync(path.dirname(target), () => fs.link(staged, target));
    } catch (error) {
      if (code(error) !== 'EEXIST') throw error;
      // Checked loosely: the winner may already have been deleted again, which is still a lost race.
      if (statOrAbsent(target)?.isDirectory()) throw new Error(`key ${JSON.stringify(key)} is a directory of other keys`);
      throw new ConditionFailedError(key, 'exists');
    } finally {
      await fs.rm(staged, { force: true });
    }
    return { etag };
  }

  /**
   * A hard link of the source onto the target: `link` fails if the target exists, so exactly one
   * copier wins, and no byte is read or written. The copy shares the source's inode, and so its
   * etag; every later write to either key replaces its file (a new inode), never the shared one.
   */
  async copyIfAbsent(source: string, key: string, options: { sourceEtag?: string } = {}): Promise<CopiedObject | undefined> {
    return onDisk(() => this.#copyIfAbsent(source, key, options));
  }

  async #copyIfAbsent(source: string, key: string, options: { sourceEtag?: string }): Promise<CopiedObject | undefined> {
    // Neither side may pass through a symbolic link: the copy must not reach out of the root.
    await this.checkPath(source);
    const from = this.#path(source);
    const target = this.#checkedPath(key);
    const before = this.#info(source);
    if (before === undefined) return undefined;
    if (options.sourceEtag !== undefined && before.etag !== options.sourceEtag) {
      throw new ConditionFailedError(source, 'etag-mismatch');
    }
    try {
      await inDirAsync(path.dirname(target), () => fs.link(from, target));
    } catch (error) {
      if (isAbsent(error)) return undefined; // the source went between the stat and the link
      if (code(error) !== 'EEXIST') throw error;
      if (statOrAbsent(target)?.isDirectory()) throw new Error(`key ${JSON.stringify(key)} is a directory of other keys`);
      throw new ConditionFailedError(key, 'exists');
    }
    const after = this.#info(key);
    if (after === undefined) return undefined; // deleted again at once; the copy happened, report none
    if (options.sourceEtag !== undefined && after.etag !== options.sourceEtag) {
      // The source was replaced between the check and the link: undo, as S3 would have refused.
      await this.#remove(key, after.etag).catch(() => undefined);
      throw new ConditionFailedError(source, 'etag-mismatch');
    }
    return { etag: after.etag, lastModified: after.lastModified, size: after.size };
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<{ etag: string }> {
    return onDisk(() => this.#replace(key, body, etag));
  }

  async put(key: string, body: Buffer | string): Promise<{ etag: string }> {
    return onDisk(() => this.#replace(key, body, undefined));
  }

  async deleteIfMatch(key: string, etag: string): Promise<void> {
    await onDisk(() => this.#remove(key, etag));
  }

  async delete(key: string): Promise<void> {
    await onDisk(() => this.#remove(key, undefined));
  }

  async list(options: ListOptions): Promise<ListResult> {
    return onDisk(() => this.#list(options));
  }

  async #list(options: ListOptions): Promise<ListResult> {
    const { keys, commonPrefixes, truncated } = await this.#listKeys(options);
    // A file deleted between the walk and this read is left out rather than failing the listing.
    const infos = keys.map((key) => this.#info(key));
    return { objects: infos.filter((i): i is ObjectInfo => i !== undefined), commonPrefixes, truncated };
  }

  /**
   * `list` without an lstat per key: a page of names costs the directory reads alone. A file
   * deleted after the walk saw it may still be named, as a key deleted after an S3 LIST would be.
   */
  async listKeys(options: Omit<ListOptions, 'delimiter'>): Promise<{ keys: string[]; truncated: boolean }> {
    const { keys, truncated } = await onDisk(() => this.#listKeys({ ...options, delimiter: undefined }));
    return { keys, truncated };
  }

  async #listKeys(options: ListOptions): Promise<{ keys: string[]; commonPrefixes: string[]; truncated: boolean }> {
    checkLimit(options.limit);
    const limit = options.limit ?? Infinity;
    const query: Query = { ...options, prefix: options.prefix ?? '' };
    // Start at the deepest directory the prefix names; keys elsewhere cannot match.
    const startDir = query.prefix.slice(0, query.prefix.lastIndexOf('/') + 1);
    if (startDir !== '' && !isValidKey(startDir.slice(0, -1))) return { keys: [], commonPrefixes: [], truncated: false };
    // The walk itself never enters a link; this keeps it from starting inside one.
    if (startDir !== '') await this.checkPath(startDir.slice(0, -1));

    const keys: string[] = [];
    const commonPrefixes: string[] = [];
    let truncated = false;
    for await (const entry of walk(this.#listings, startDir, query)) {
      if ('prefix' in entry && entry.prefix === commonPrefixes.at(-1)) continue;
      if (keys.length + commonPrefixes.length === limit) {
        truncated = true;
        break;
      }
      if ('prefix' in entry) commonPrefixes.push(entry.prefix);
      else keys.push(entry.key);
    }
    return { keys, commonPrefixes, truncated };
  }

  /** The lock file guarding `key` (exposed so tests can plant stale or held locks). */
  lockPath(key: string): string {
    return this.#locks.lockPath(key);
  }

  async #replace(key: string, body: Buffer | string, etag: string | undefined): Promise<{ etag: string }> {
    const target = this.#checkedPath(key);
    // Stage before locking, so the lock is held only for the check and the rename.
    const { staged, etag: newEtag } = await this.#stage(body);
    try {
      await this.#locks.withLock(key, async () => {
        if (etag !== undefined) this.#expect(key, etag);
        await inDirAsync(path.dirname(target), () => fs.rename(staged, target));
      });
    } finally {
      await fs.rm(staged, { force: true });
    }
    return { etag: newEtag };
  }

  async #remove(key: string, etag: string | undefined): Promise<void> {
    // A link itself may be removed (unlink never follows the last component); a link on the way may not.
    const target = this.#checkedPath(key);
    await this.#locks.withLock(key, async () => {
      if (etag !== undefined) this.#expect(key, etag);
      try {
        await fs.unlink(target);
      } catch (error) {
        if (!isAbsent(error)) throw error;
        return;
      }
      await this.#pruneEmptyDirs(path.dirname(target));
    });
  }

  #expect(key: string, etag: string): void {
    const current = this.#info(key);
    if (current === undefined) throw new ConditionFailedError(key, 'missing');
    if (current.etag !== etag) throw new ConditionFailedError(key, 'etag-mismatch');
  }

  /** The key's object: a regular file, or a link as itself (lstat: never its target). Synchronous: see SYNC_IO_MAX_BYTES. */
  #info(key: string): ObjectInfo | undefined {
    const stat = statOrAbsent(this.#path(key));
    if (!stat?.isFile() && !stat?.isSymbolicLink()) return undefined;
    return { key, etag: fileEtag(stat), size: Number(stat.size), lastModified: stat.mtime };
  }

  /**
   * Writes `body` to a new file in `.tmp/`, flushed to disk, with a unique mtime; answers its path
   * and the etag it keeps under any key it is linked or renamed to.
   */
  async #stage(body: Buffer | string): Promise<{ staged: string; etag: string }> {
    const data = typeof body === 'string' ? Buffer.from(body) : body;
    const staged = path.join(this.#tmpDir, `${process.pid}-${randomUUID()}`);
    const handle = await inDirAsync(this.#tmpDir, () => fs.open(staged, 'wx'));
    const fd = handle.fd;
    try {
      if (data.length <= SYNC_IO_MAX_BYTES) {
        for (let written = 0; written < data.length; ) written += writeSync(fd, data, written, data.length - written, written);
      } else {
        await writeAllOffLoop(fd, data);
      }
      const stamp = uniqueStamp();
      await handle.utimes(stamp, stamp);
      // Flushed before it becomes visible under its key, so a crash cannot expose a torn file.
      await handle.sync();
      return { staged, etag: fileEtag(fstatSync(fd, { bigint: true })) };
    } finally {
      await handle.close();
    }
  }

  /** Keeps directories from outliving their last key, so they never show up as common prefixes. */
  async #pruneEmptyDirs(dir: string): Promise<void> {
    for (let current = dir; current.startsWith(this.#root + path.sep); current = path.dirname(current)) {
      try {
        await fs.rmdir(current);
      } catch {
        return; // not empty, so neither is anything above it (or a concurrent delete is pruning it)
      }
    }
  }

  /** What the per-store caches hold now (docs/architecture.md, "Caches and their bounds"). */
  cacheUse(): { listings: number; listedChildren: number; bodies: number; bodyBytes: number } {
    return { ...this.#listings.cacheUse(), ...this.#recent.cacheUse() };
  }

  #path(key: string): string {
    if (!isValidKey(key)) throw new Error(`invalid key for a filesystem object store: ${JSON.stringify(key)}`);
    return path.join(this.#root, ...key.split('/'));
  }

  /** The key's file path, once the directory it lies in is known to be reached without a link. */
  #checkedPath(key: string): string {
    const file = this.#path(key);
    this.#links.checkDir(path.dirname(file), key);
    return file;
  }
}

function isValidKey(key: string): boolean {
  const segments = key.split('/');
  return (
    !key.includes('\0') &&
    !RESERVED_ROOT_DIRS.includes(segments[0]) &&
    segments.every((s) => s !== '' && s !== '.' && s !== '..')
  );
}

let lastStampMicros = 0;

/** A strictly increasing wall-clock microsecond within this process, for staged files' mtimes. */
function uniqueStamp(): number {
  lastStampMicros = Math.max(Math.floor(Date.now() * 1000), lastStampMicros + 1);
  return lastStampMicros / 1e6;
}

/**
 * The object at `file`, and the stat identity it was read under, read synchronously when it is at
 * most SYNC_IO_MAX_BYTES (O_NOFOLLOW, stat and read through one descriptor, as withFile);
 * `undefined` for a larger file, which the caller reads off the event loop. Missing or not a
 * regular file: `null`.
 */
function readSmallFile(file: string, checkDir: () => void): { identity: string; object: StoredObject } | null | undefined {
  let fd: number;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (error) {
    if (isAbsent(error)) return null;
    throw error;
  }
  try {
    checkDir();
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) return null;
    if (stat.size > SYNC_IO_MAX_BYTES) return undefined;
    // Stored files are never written in place (every write stages a new inode), so the size holds.
    const body = Buffer.allocUnsafe(Number(stat.size));
    let read = 0;
    while (read < body.length) {
      const n = readSync(fd, body, read, body.length - read, read);
      if (n === 0) break;
      read += n;
    }
    const object = { body: body.subarray(0, read), etag: fileEtag(stat), size: read, lastModified: stat.mtime };
    return { identity: statIdentity(stat), object };
  } finally {
    closeSync(fd);
  }
}

/** Runs `use` on the regular file at `file`; undefined when it is missing or not a file. */
async function withFile<T>(file: string, use: (handle: FileHandle, stat: BigIntStats) => Promise<T>): Promise<T | undefined> {
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a link in the key's own place is refused (ELOOP), never read through.
    handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
  try {
    // Stat and read through one descriptor: a concurrent rename swaps the path, not this file.
    const stat = await handle.stat({ bigint: true });
    return stat.isFile() ? await use(handle, stat) : undefined;
  } finally {
    await handle.close();
  }
}

const writeFd = promisify(write);

/** Writes a large body through the thread pool, chunk after chunk. */
async function writeAllOffLoop(fd: number, data: Buffer): Promise<void> {
  for (let written = 0; written < data.length; ) written += (await writeFd(fd, data, written, data.length - written, written)).bytesWritten;
}
