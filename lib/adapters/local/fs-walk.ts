import { compareKeys } from '../../ports/object-store.js';
import type { Child, ListingCache } from './fs-listing-cache.js';

/**
 * The filesystem object store's listing walk: keys under a directory in S3's byte order, rolled
 * up to common prefixes, resumed after `startAfter`. Files sit in a tree of directories whose
 * names do not sort like keys, so the order is not the directories' own; this module holds the
 * rule that makes it so (a directory sorts as `name/`), the binary search that skips to
 * `startAfter`, and the roll-up, reading each directory through the listing cache
 * (fs-listing-cache.ts). It is apart from the store so the ordering argument reads in one place.
 */

export type Entry = { readonly key: string } | { readonly prefix: string };

export interface Query {
  readonly prefix: string;
  readonly delimiter?: string;
  readonly startAfter?: string;
}

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

/**
 * Yields entries under `dirKey` in byte order. Sorting siblings by name alone is not byte order
 * of keys (`a/b` sorts after `a-c` but before `a0`), so a directory sorts as `name + '/'`; since
 * all keys under it share that prefix, visiting it at that position keeps the whole walk
 * ordered. Directories outside the prefix or wholly before startAfter are never read, and a
 * directory that rolls up to one common prefix is only probed for a single file.
 */
export async function* walk(listings: ListingCache, dirKey: string, query: Query): AsyncGenerator<Entry> {
  const { prefix, delimiter, startAfter } = query;
  const after = (s: string) => startAfter === undefined || compareKeys(s, startAfter) > 0;
  const children = await listings.sortedChildren(dirKey);
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
    if (common === undefined) yield* walk(listings, dir, query);
    else if (after(common) && (await hasKeys(listings, dir))) yield { prefix: common };
  }
}

async function hasKeys(listings: ListingCache, dirKey: string): Promise<boolean> {
  for await (const _ of walk(listings, dirKey, { prefix: dirKey })) return true;
  return false;
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
