import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  fsync,
  futimesSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  write,
  writeSync,
  type BigIntStats,
} from 'node:fs';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ConditionFailedError,
  compareKeys,
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

/**
 * Root-level directories the store keeps for itself; keys whose first segment is one of these
 * are refused and never listed. Staged writes live in `.tmp/` (same filesystem as the targets, so
 * link/rename are atomic); per-key lock files live in `.locks/`.
 */
export const RESERVED_ROOT_DIRS: readonly string[] = ['.tmp', '.locks'];

export interface FsObjectStoreOptions {
  /** A lock file older than this is assumed to belong to a crashed process and is broken. */
  readonly lockStaleMs?: number;
  /** Directory entries all cached listings hold together at most (default LISTING_CACHE_CHILDREN). */
  readonly listingCacheChildren?: number;
}

type Entry = { readonly key: string } | { readonly prefix: string };

interface Child {
  readonly key: string;
  readonly isDir: boolean;
}

/**
 * Objects up to this size are read and staged with synchronous calls, as are the metadata calls
 * around them (lstat, realpath, link, rename, unlink, lock files). A registry record or a
 * manifest is a few KiB: each such call takes microseconds, while each step through libuv's
 * thread pool costs a wake-up and a hop back to the event loop — most of a metadata request's
 * time on the local server. Larger bodies are read and written off the loop, so one big object
 * never stalls other requests; so is the fsync that makes a staged write durable.
 */
const SYNC_IO_MAX_BYTES = 256 * 1024;

/**
 * A directory whose own size (its entry blocks) is at most this is read synchronously: a few
 * hundred names. Larger ones are read off the loop (and cached once settled, #sortedChildren).
 */
const SYNC_IO_MAX_DIR_BYTES = 16_384n;

const fsyncFd = promisify(fsync);

/** A directory changed more recently than this may change again without its mtime moving. */
const LISTING_SETTLE_NS = 2_000_000_000n;
/** Small directories are cheap to read; only larger ones are worth a cache entry. */
const LISTING_CACHE_MIN = 256;
/** Cached directories per store (oldest dropped first)… */
const LISTING_CACHE_DIRS = 64;
/**
 * …holding this many entries at most between them (a key of at most 1,024 bytes each, so a few
 * MiB at typical key lengths): one huge directory cannot pin unbounded memory (issue #36).
 */
export const LISTING_CACHE_CHILDREN = 65_536;
/** Objects at most this large keep their bytes after a `get` (#recent)… */
const BODY_CACHE_MAX_BYTES = 16 * 1024;
/** …up to this many per store (least recently read dropped first). */
const BODY_CACHE_ENTRIES = 1024;

/**
 * The index of the first child that can hold keys after `startAfter`: the first whose sort key
 * (a directory's is `name/`) is above it, or the directory just before that if `startAfter`
 * lies inside it (no sibling can sort between a directory and the keys under it).
 */
function firstAfter(children: readonly Child[], startAfter: string | undefined): number {
  if (startAfter === undefined) return 0;
  const sortKey = (c: Child) => (c.isDir ? `${c.key}/` : c.key);
  let lo = 0;
  let hi = children.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(sortKey(children[mid]), startAfter) > 0) hi = mid;
    else lo = mid + 1;
  }
  const before = children[lo - 1];
  return before?.isDir && startAfter.startsWith(`${before.key}/`) ? lo - 1 : lo;
}

interface Query {
  readonly prefix: string;
  readonly delimiter?: string;
  readonly startAfter?: string;
}

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
 */
export class FsObjectStore implements ObjectStore {
  readonly url: string;
  readonly #root: string;
  readonly #tmpDir: string;
  readonly #lockDir: string;
  readonly #lockStaleMs: number;
  #realRoot?: string;
  /** Sorted directory listings of large, settled directories (#sortedChildren). */
  readonly #listings = new Map<string, { mtimeNs: bigint; ctimeNs: bigint; children: readonly Child[] }>();
  readonly #listingBudget: number;
  #listedChildren = 0;
  /**
   * Small objects as last read, by file path. A file's etag is its (device, inode, size, mtime)
   * and no write ever changes a stored file in place, so a file whose lstat still gives the
   * etag it was read under holds the same bytes: a repeated `get` (a registry record read on
   * every request) costs one lstat instead of a realpath, an open and a read. A link planted
   * anywhere on the path leads the lstat to another file (or to a link) and so to the full read,
   * which refuses it.
   */
  readonly #recent = new Map<string, { identity: string; object: StoredObject }>();

  constructor(root: string, options: FsObjectStoreOptions = {}) {
    if (!path.isAbsolute(root)) throw new Error(`FsObjectStore root must be absolute: ${root}`);
    this.#root = path.resolve(root);
    this.#tmpDir = path.join(this.#root, '.tmp');
    this.#lockDir = path.join(this.#root, '.locks');
    this.#lockStaleMs = options.lockStaleMs ?? 10_000;
    this.#listingBudget = options.listingCacheChildren ?? LISTING_CACHE_CHILDREN;
    this.url = pathToFileURL(this.#root).href;
  }

  // Every operation answers a failing disk with StorageUnavailableError (./fs-errors.ts).

  async get(key: string): Promise<StoredObject | undefined> {
    return onDisk(() => this.#get(key));
  }

  async #get(key: string): Promise<StoredObject | undefined> {
    const file = this.#path(key);
    const recent = this.#recentObject(file);
    if (recent) return recent;
    try {
      // The link check runs once the file is open: a key that is not there reads nothing through
      // any link, so a miss (a registry lookup of a free name) costs one failed open.
      const small = readSmallFile(file, () => this.#checkDir(path.dirname(file), key));
      if (small === null) return undefined;
      if (small) {
        this.#remember(file, small);
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

  /** A copy of the bytes `get` last read at `file`, if the file is still the one they came from. */
  #recentObject(file: string): StoredObject | undefined {
    const entry = this.#recent.get(file);
    if (!entry) return undefined;
    this.#recent.delete(file);
    const stat = statOrAbsent(file);
    if (!stat?.isFile() || statIdentity(stat) !== entry.identity) return undefined;
    this.#recent.set(file, entry);
    return { ...entry.object, body: Buffer.from(entry.object.body) };
  }

  #remember(file: string, read: { identity: string; object: StoredObject }): void {
    if (read.object.body.length > BODY_CACHE_MAX_BYTES) return;
    this.#recent.delete(file);
    this.#recent.set(file, { identity: read.identity, object: { ...read.object, body: Buffer.from(read.object.body) } });
    if (this.#recent.size > BODY_CACHE_ENTRIES) this.#recent.delete(this.#recent.keys().next().value!);
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
      this.#checkDir(path.dirname(file), keyOrPrefix);
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
      inDir(path.dirname(target), () => linkSync(staged, target));
    } catch (error) {
      if (code(error) !== 'EEXIST') throw error;
      // Checked loosely: the winner may already have been deleted again, which is still a lost race.
      if (statOrAbsent(target)?.isDirectory()) throw new Error(`key ${JSON.stringify(key)} is a directory of other keys`);
      throw new ConditionFailedError(key, 'exists');
    } finally {
      rmSync(staged, { force: true });
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
      inDir(path.dirname(target), () => linkSync(from, target));
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
    for await (const entry of this.#walk(startDir, query)) {
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
    return path.join(this.#lockDir, `${createHash('sha256').update(key).digest('hex')}.lock`);
  }

  async #replace(key: string, body: Buffer | string, etag: string | undefined): Promise<{ etag: string }> {
    const target = this.#checkedPath(key);
    // Stage before locking, so the lock is held only for the check and the rename.
    const { staged, etag: newEtag } = await this.#stage(body);
    try {
      await this.#withLock(key, () => {
        if (etag !== undefined) this.#expect(key, etag);
        inDir(path.dirname(target), () => renameSync(staged, target));
      });
    } finally {
      rmSync(staged, { force: true });
    }
    return { etag: newEtag };
  }

  async #remove(key: string, etag: string | undefined): Promise<void> {
    // A link itself may be removed (unlink never follows the last component); a link on the way may not.
    const target = this.#checkedPath(key);
    await this.#withLock(key, () => {
      if (etag !== undefined) this.#expect(key, etag);
      try {
        unlinkSync(target);
      } catch (error) {
        if (!isAbsent(error)) throw error;
        return;
      }
      this.#pruneEmptyDirs(path.dirname(target));
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
    const fd = inDir(this.#tmpDir, () => openSync(staged, 'wx'));
    try {
      if (data.length <= SYNC_IO_MAX_BYTES) {
        for (let written = 0; written < data.length; ) written += writeSync(fd, data, written, data.length - written, written);
      } else {
        await writeAllOffLoop(fd, data);
      }
      const stamp = uniqueStamp();
      futimesSync(fd, stamp, stamp);
      // Flushed before it becomes visible under its key, so a crash cannot expose a torn file.
      await fsyncFd(fd);
      return { staged, etag: fileEtag(fstatSync(fd, { bigint: true })) };
    } finally {
      closeSync(fd);
    }
  }

  async #withLock<T>(key: string, critical: () => T): Promise<T> {
    const lock = this.lockPath(key);
    const ours = await this.#acquire(lock);
    try {
      return critical();
    } finally {
      // If our lock was broken as stale and someone else now holds the path, it is theirs.
      const current = statOrAbsent(lock, { follow: true });
      if (current !== undefined && sameFile(current, ours)) rmSync(lock, { force: true });
    }
  }

  async #acquire(lock: string): Promise<BigIntStats> {
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = inDir(this.#lockDir, () => openSync(lock, 'wx'));
        try {
          return fstatSync(fd, { bigint: true });
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        if (code(error) !== 'EEXIST') throw error;
      }
      this.#breakIfStale(lock);
      await sleep(Math.min(2 ** attempt, 32) * (0.5 + Math.random()));
    }
  }

  /**
   * Removes a lock left by a crashed process. Two waiters can both see the same stale lock; the
   * rename-then-compare dance keeps the slower one from deleting the fresh lock the faster
   * one has just taken (it puts that lock back instead).
   */
  #breakIfStale(lock: string): void {
    const seen = statOrAbsent(lock, { follow: true });
    if (seen === undefined || Date.now() - Number(seen.mtimeMs) < this.#lockStaleMs) return;
    const grave = `${lock}.stale-${randomUUID()}`;
    try {
      renameSync(lock, grave);
    } catch (error) {
      if (isAbsent(error)) return;
      throw error;
    }
    if (!sameFile(statSync(grave, { bigint: true }), seen)) {
      try {
        linkSync(grave, lock);
      } catch {
        // Someone took the lock meanwhile: theirs now.
      }
    }
    rmSync(grave, { force: true });
  }

  /** Keeps directories from outliving their last key, so they never show up as common prefixes. */
  #pruneEmptyDirs(dir: string): void {
    for (let current = dir; current.startsWith(this.#root + path.sep); current = path.dirname(current)) {
      try {
        rmdirSync(current);
      } catch {
        return; // not empty, so neither is anything above it (or a concurrent delete is pruning it)
      }
    }
  }

  /**
   * Yields entries under `dirKey` in byte order. Sorting siblings by name alone is not byte order
   * of keys (`a/b` sorts after `a-c` but before `a0`), so a directory sorts as `name + '/'`; since
   * all keys under it share that prefix, visiting it at that position keeps the whole walk
   * ordered. Directories outside the prefix or wholly before startAfter are never read, and a
   * directory that rolls up to one common prefix is only probed for a single file.
   */
  async *#walk(dirKey: string, query: Query): AsyncGenerator<Entry> {
    const { prefix, delimiter, startAfter } = query;
    const after = (s: string) => startAfter === undefined || compareKeys(s, startAfter) > 0;
    const children = await this.#sortedChildren(dirKey);
    // Everything before startAfter is skipped by a binary search, not visited: a page deep into
    // a large directory costs the page, not the entries before it.
    for (let i = firstAfter(children, startAfter); i < children.length; i++) {
      const child = children[i];
      if (!(child.isDir ? `${child.key}/`.startsWith(prefix) || prefix.startsWith(`${child.key}/`) : child.key.startsWith(prefix))) {
        continue;
      }
      if (!child.isDir) {
        if (!child.key.startsWith(prefix) || !after(child.key)) continue;
        const common = commonPrefix(child.key, prefix, delimiter);
        if (common === undefined) yield { key: child.key };
        else if (after(common)) yield { prefix: common };
        continue;
      }
      const dir = `${child.key}/`;
      if (startAfter !== undefined && !after(dir) && !startAfter.startsWith(dir)) continue;
      const common = dir.startsWith(prefix) ? commonPrefix(dir, prefix, delimiter) : undefined;
      if (common === undefined) yield* this.#walk(dir, query);
      else if (after(common) && (await this.#hasKeys(dir))) yield { prefix: common };
    }
  }

  async #hasKeys(dirKey: string): Promise<boolean> {
    for await (const _ of this.#walk(dirKey, { prefix: dirKey })) return true;
    return false;
  }

  /**
   * The children of a key directory in key byte order, from a per-process cache when the
   * directory has not changed. A cached listing is checked against the directory's mtime and
   * ctime (one stat), which every entry added or removed by any process changes (and ctime
   * cannot be set back); and only a directory whose mtime is older than the filesystem clock
   * could blur (LISTING_SETTLE_NS) is cached, so two changes within one clock tick cannot hide
   * behind an unchanged timestamp. A page of a 10,000-entry directory then costs a stat and a binary search
   * instead of a readdir and a sort of everything.
   */
  async #sortedChildren(dirKey: string): Promise<readonly Child[]> {
    const dir = path.join(this.#root, ...dirKey.split('/'));
    // Synchronous like #info: on a cached listing this stat is the whole cost of a page. It
    // follows a link only where one can be: the root itself (the walk never enters one below it).
    const stat = statOrAbsent(dir, { follow: true });
    if (stat === undefined || !stat.isDirectory()) return [];
    const cached = this.#listings.get(dirKey);
    if (cached && cached.mtimeNs === stat.mtimeNs && cached.ctimeNs === stat.ctimeNs) return cached.children;
    const children = await this.#children(dirKey, stat.size <= SYNC_IO_MAX_DIR_BYTES);
    const settled = BigInt(Date.now()) * 1_000_000n - stat.mtimeNs > LISTING_SETTLE_NS;
    if (settled && children.length >= LISTING_CACHE_MIN && children.length <= this.#listingBudget) {
      this.#forgetListing(dirKey);
      this.#listings.set(dirKey, { mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs, children });
      this.#listedChildren += children.length;
      while (this.#listings.size > LISTING_CACHE_DIRS || this.#listedChildren > this.#listingBudget) {
        this.#forgetListing(this.#listings.keys().next().value!);
      }
    }
    return children;
  }

  #forgetListing(dirKey: string): void {
    const entry = this.#listings.get(dirKey);
    if (!entry) return;
    this.#listings.delete(dirKey);
    this.#listedChildren -= entry.children.length;
  }

  /** What the per-store caches hold now (docs/architecture.md, "Caches and their bounds"). */
  cacheUse(): { listings: number; listedChildren: number; bodies: number; bodyBytes: number } {
    let bodyBytes = 0;
    for (const { object } of this.#recent.values()) bodyBytes += object.body.length;
    return { listings: this.#listings.size, listedChildren: this.#listedChildren, bodies: this.#recent.size, bodyBytes };
  }

  /** The children of a key directory, in key byte order. */
  async #children(dirKey: string, small: boolean): Promise<Child[]> {
    const dir = path.join(this.#root, ...dirKey.split('/'));
    let dirents;
    try {
      dirents = small ? readdirSync(dir, { withFileTypes: true }) : await fs.readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isAbsent(error)) return [];
      throw error;
    }
    // Sorted by name within the directory (a directory as `name/`): every key here shares the
    // directory's prefix, so comparing whole keys would walk that prefix in every comparison.
    const named: { child: Child; sortName: string }[] = [];
    for (const dirent of dirents) {
      if (dirKey === '' && RESERVED_ROOT_DIRS.includes(dirent.name)) continue;
      const key = dirKey + dirent.name;
      // A link is a leaf of its own (see the class comment): never descended into.
      const isDir = dirent.isDirectory();
      if (!isDir && !dirent.isFile() && !dirent.isSymbolicLink()) continue;
      named.push({ child: { key, isDir }, sortName: isDir ? `${dirent.name}/` : dirent.name });
    }
    return named.sort((a, b) => compareKeys(a.sortName, b.sortName)).map((n) => n.child);
  }

  #path(key: string): string {
    if (!isValidKey(key)) throw new Error(`invalid key for a filesystem object store: ${JSON.stringify(key)}`);
    return path.join(this.#root, ...key.split('/'));
  }

  /** The key's file path, once the directory it lies in is known to be reached without a link. */
  #checkedPath(key: string): string {
    const file = this.#path(key);
    this.#checkDir(path.dirname(file), key);
    return file;
  }

  /**
   * Throws LinkRefusedError unless `dir` (under the root) resolves to itself under the root's
   * real path: one realpath (of its deepest existing ancestor) instead of an lstat per segment.
   * Synchronous: one libc realpath of a local path costs less than a thread-pool round trip.
   */
  #checkDir(dir: string, key: string): void {
    const rel = path.relative(this.#root, dir);
    this.#realRoot ??= realpathOfExisting(this.#root);
    if (realpathOfExisting(dir) === path.join(this.#realRoot, rel)) return;
    throw new LinkRefusedError(key, this.#firstLink(rel));
  }

  /** The key prefix of the first link on the way to `rel` (for the error; the slow path). */
  #firstLink(rel: string): string {
    const segments = rel.split(path.sep).filter(Boolean);
    for (let i = 1; i <= segments.length; i++) {
      if (statOrAbsent(path.join(this.#root, ...segments.slice(0, i)))?.isSymbolicLink()) return segments.slice(0, i).join('/');
    }
    return segments.join('/');
  }
}

/**
 * The real path of `p` where it exists; where it does not yet, the real path of its deepest
 * existing ancestor joined with the missing rest (a write creates those as plain directories).
 * A link loop resolves to nothing real, so it never matches.
 */
function realpathOfExisting(p: string): string {
  const missing: string[] = [];
  for (let current = p; ; ) {
    try {
      return path.join(realpathSync.native(current), ...missing.reverse());
    } catch (error) {
      if (code(error) === 'ELOOP') return `\0loop:${p}`;
      if (!isAbsent(error)) throw error;
    }
    const parent = path.dirname(current);
    if (parent === current) return p;
    missing.push(path.basename(current));
    current = parent;
  }
}

/** Inode numbers are reused quickly once freed, so a lock's identity is its inode plus its mtime. */
function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeMs === b.mtimeMs;
}

function isValidKey(key: string): boolean {
  const segments = key.split('/');
  return (
    !key.includes('\0') &&
    !RESERVED_ROOT_DIRS.includes(segments[0]) &&
    segments.every((s) => s !== '' && s !== '.' && s !== '..')
  );
}

/**
 * The common prefix `s` rolls up to: up to and including the first delimiter after the prefix,
 * but only when that delimiter lies wholly inside `s` (for a directory key, every key below it
 * then rolls up to the same prefix).
 */
function commonPrefix(s: string, prefix: string, delimiter: string | undefined): string | undefined {
  if (!delimiter) return undefined;
  const at = s.indexOf(delimiter, prefix.length);
  return at >= 0 && at + delimiter.length <= s.length ? s.slice(0, at + delimiter.length) : undefined;
}

/** What a file version's etag is made of. */
function statIdentity(stat: BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}`;
}

function fileEtag(stat: BigIntStats): string {
  return `"${createHash('md5').update(statIdentity(stat)).digest('hex')}"`;
}

let lastStampMicros = 0;

/** A strictly increasing wall-clock microsecond within this process, for staged files' mtimes. */
function uniqueStamp(): number {
  lastStampMicros = Math.max(Math.floor(Date.now() * 1000), lastStampMicros + 1);
  return lastStampMicros / 1e6;
}

/**
 * The file's stat — of a final link itself unless `follow` — or undefined when nothing is there.
 * Synchronous, and a miss does not throw (see SYNC_IO_MAX_BYTES).
 */
function statOrAbsent(file: string, options: { follow?: boolean } = {}): BigIntStats | undefined {
  try {
    const how = { bigint: true, throwIfNoEntry: false } as const;
    return options.follow ? statSync(file, how) : lstatSync(file, how);
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
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

/**
 * Runs a write into `dir`, creating the directory when missing. Retries because a concurrent
 * delete (another process's) may prune the momentarily empty directory between our mkdir and our write.
 */
function inDir<T>(dir: string, write: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return write();
    } catch (error) {
      if (code(error) !== 'ENOENT' || attempt === 5) throw error;
    }
    mkdirSync(dir, { recursive: true });
  }
}

const writeFd = promisify(write);

/** Writes a large body through the thread pool, chunk after chunk. */
async function writeAllOffLoop(fd: number, data: Buffer): Promise<void> {
  for (let written = 0; written < data.length; ) written += (await writeFd(fd, data, written, data.length - written, written)).bytesWritten;
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * The path does not name a file: missing, a path segment is a file rather than a directory, or
 * a segment is longer than a file name can be (so no such file can exist).
 */
function isAbsent(error: unknown): boolean {
  const c = code(error);
  return c === 'ENOENT' || c === 'ENOTDIR' || c === 'EISDIR' || c === 'ENAMETOOLONG';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
