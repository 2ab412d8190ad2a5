import * as fs from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { compareKeys } from '../../ports/object-store.js';
import { isAbsent, RESERVED_ROOT_DIRS, statOrAbsent } from './fs-files.js';

/**
 * The filesystem object store's sorted-listing cache: the children of a key directory in key
 * byte order, kept per store for large directories that have settled, so paging through a
 * 10,000-entry directory costs a stat and a binary search per page instead of a readdir and a
 * sort of everything. Reading and sorting a directory is here too, since the cache is the only
 * way the listing walk (fs-walk.ts) reads one. It is its own module because its freshness rule
 * (mtime and ctime, and only settled directories) and its bound (docs/architecture.md, "Caches
 * and their bounds") are what a reader checks it for.
 */

export interface Child {
  readonly key: string;
  readonly isDir: boolean;
}

/**
 * A directory whose own size (its entry blocks) is at most this is read synchronously: a few
 * hundred names. Larger ones are read off the loop (and cached once settled, sortedChildren).
 */
const SYNC_IO_MAX_DIR_BYTES = 16_384n;

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

export class ListingCache {
  readonly #root: string;
  /** Sorted directory listings of large, settled directories (sortedChildren). */
  readonly #listings = new Map<string, { mtimeNs: bigint; ctimeNs: bigint; children: readonly Child[] }>();
  readonly #listingBudget: number;
  #listedChildren = 0;

  constructor(root: string, listingBudget: number) {
    this.#root = root;
    this.#listingBudget = listingBudget;
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
  async sortedChildren(dirKey: string): Promise<readonly Child[]> {
    const dir = path.join(this.#root, ...dirKey.split('/'));
    // Synchronous like the store's #info: on a cached listing this stat is the whole cost of a page. It
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

  /** What the cache holds now (the store's cacheUse). */
  cacheUse(): { listings: number; listedChildren: number } {
    return { listings: this.#listings.size, listedChildren: this.#listedChildren };
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
      // A link is a leaf of its own (see the FsObjectStore class comment): never descended into.
      const isDir = dirent.isDirectory();
      if (!isDir && !dirent.isFile() && !dirent.isSymbolicLink()) continue;
      named.push({ child: { key, isDir }, sortName: isDir ? `${dirent.name}/` : dirent.name });
    }
    return named.sort((a, b) => compareKeys(a.sortName, b.sortName)).map((n) => n.child);
  }
}
