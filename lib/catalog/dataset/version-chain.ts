import type { ObjectInfo, ObjectStore } from '../../ports/object-store.js';
import type { StorageRoot } from '../../ports/storage-root.js';
import { relativeToStorePath } from './location.js';
import { manifestName, parseManifestName, type NamingScheme } from './manifests.js';

/**
 * Reading a dataset's version chain (`_versions/` or `tree/<branch>/_versions/`) from storage.
 * The dataset's own manifests are the record of managed versioning, so there is nothing else to
 * read and no second copy to drift.
 *
 * V2 manifest names (`{u64::MAX − N:020}.manifest`) sort newest-first in byte order, which is
 * S3's listing order: "the latest version" is the first manifest of one LIST. V1 names
 * (`{N}.manifest`) sort as strings (1, 10, 2, …), so a V1 chain is read whole and sorted. The
 * directory also holds staging manifests (`<final name>-<uuid>`) and `latest_version_hint.json`;
 * both are skipped.
 */

export interface ChainEntry {
  readonly version: number;
  readonly scheme: NamingScheme;
  readonly info: ObjectInfo;
}

export interface ChainQuery {
  readonly descending: boolean;
  /** Exclusive page token: only versions strictly past this one in the chosen order. */
  readonly after?: number;
  /** At most this many; undefined = all. */
  readonly limit?: number;
}

export interface ChainPage {
  readonly entries: readonly ChainEntry[];
  /** More versions exist past the last entry. */
  readonly more: boolean;
}

/**
 * Keys read per LIST on the newest-first path. Generous on purpose: a LIST costs the same for 1
 * or 1000 keys, and crashed writers leave staging files that sort among the manifests.
 */
const SCAN_PAGE = 100;
const MAX_PAGE = 1000;

export async function readChain(store: ObjectStore, prefix: string, query: ChainQuery): Promise<ChainPage> {
  if (query.descending) {
    const fast = await newestFirst(store, prefix, query);
    if (fast) return fast;
  }
  return wholeChain(store, prefix, query);
}

/** The newest version of the chain, or undefined for an empty chain. */
export async function latestEntry(store: ObjectStore, prefix: string): Promise<ChainEntry | undefined> {
  return (await readChain(store, prefix, { descending: true, limit: 1 })).entries[0];
}

/**
 * Walks the listing in byte order, which for V2 names is newest-first; usually one LIST. Gives
 * up (undefined) as soon as a V1 name shows that byte order is not version order, and when a
 * page token positioned the walk past keys it has not seen (a mixed chain could hide there).
 * Stopping at `limit` without reading the rest is the same judgement Lance makes when it
 * resolves the latest version itself: the first name decides the scheme.
 */
async function newestFirst(store: ObjectStore, prefix: string, query: ChainQuery): Promise<ChainPage | undefined> {
  const want = query.limit ?? Infinity;
  const pageSize = Number.isFinite(want) ? Math.min(MAX_PAGE, Math.max(SCAN_PAGE, 2 * (want + 1))) : MAX_PAGE;
  const found: { version: number; scheme: NamingScheme; key: string; info?: ObjectInfo }[] = [];
  let more = false;
  let startAfter = query.after === undefined ? undefined : prefix + manifestName(query.after, 'V2');
  walk: for (;;) {
    const page = await listNames(store, { prefix, startAfter, limit: pageSize });
    for (const key of page.keys) {
      const parsed = parseManifestName(key.slice(prefix.length));
      if (!parsed) continue;
      if (parsed.scheme !== 'V2') return undefined;
      if (found.length === want) {
        more = true;
        break walk;
      }
      found.push({ ...parsed, key, info: page.infos?.get(key) });
    }
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || !last) break;
    startAfter = last;
  }
  if (!more && query.after !== undefined) return undefined;
  // Details only for the versions answered (on the filesystem store, one lstat each instead of
  // one per listed file); a manifest deleted since the listing is left out, as a listing would.
  const entries = await Promise.all(
    found.map(async ({ version, scheme, key, info }) => {
      const known = info ?? (await store.head(key));
      return known && { version, scheme, info: known };
    }),
  );
  return { entries: entries.filter((e): e is ChainEntry => e !== undefined), more };
}

/**
 * A page of keys, with the details a store's listing carries anyway (S3, memory). A store that
 * pays per object for those (the filesystem store) answers names alone, and the chain reader
 * asks for the details of the few versions it keeps.
 */
async function listNames(
  store: ObjectStore,
  options: { prefix: string; startAfter?: string; limit: number },
): Promise<{ keys: string[]; infos?: Map<string, ObjectInfo>; truncated: boolean }> {
  if (store.listKeys) return store.listKeys(options);
  const page = await store.list(options);
  return { keys: page.objects.map((o) => o.key), infos: new Map(page.objects.map((o) => [o.key, o])), truncated: page.truncated };
}

/** Every manifest, sorted by version; a version present under both names counts once (V2). */
async function wholeChain(store: ObjectStore, prefix: string, query: ChainQuery): Promise<ChainPage> {
  const listing = await store.list({ prefix });
  const byVersion = new Map<number, ChainEntry>();
  for (const info of listing.objects) {
    const parsed = parseManifestName(info.key.slice(prefix.length));
    if (!parsed) continue;
    const seen = byVersion.get(parsed.version);
    if (!seen || parsed.scheme === 'V2') byVersion.set(parsed.version, { ...parsed, info });
  }
  const sign = query.descending ? -1 : 1;
  let all = [...byVersion.values()].sort((a, b) => sign * (a.version - b.version));
  if (query.after !== undefined) {
    const after = query.after;
    all = all.filter((e) => (query.descending ? e.version < after : e.version > after));
  }
  if (query.limit !== undefined && all.length > query.limit) return { entries: all.slice(0, query.limit), more: true };
  return { entries: all, more: false };
}

/** A TableVersion as the spec shapes it (and as Lance's namespace store reads it). */
export interface TableVersionJson {
  version: number;
  manifest_path: string;
  manifest_size: number;
  e_tag: string;
  timestamp_millis: number;
}

/**
 * `manifest_path` is relative to the object-store root, the way the client itself names paths:
 * the key inside the bucket on S3, the absolute path without its leading `/` on local disk.
 */
export function storePath(root: StorageRoot, key: string): string {
  return relativeToStorePath(root, key).replace(/^\/+/, '');
}

export function tableVersionOf(root: StorageRoot, version: number, info: ObjectInfo): TableVersionJson {
  return {
    version,
    manifest_path: storePath(root, info.key),
    manifest_size: info.size,
    e_tag: info.etag,
    timestamp_millis: info.lastModified.getTime(),
  };
}
