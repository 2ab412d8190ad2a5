import { randomUUID } from 'node:crypto';
import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import type { CatalogServices } from '../catalog/services.js';
import { keys, parseTreeKey } from '../registry/keys.js';
import type { LocationClaimRecord, NamespaceRecord, TableRecord } from '../registry/records.js';

/**
 * What a crash leaves behind, looked at once when the local server starts (issue #8, defect 8).
 *
 * Deleted — provably dead, because nothing can still be using them:
 * - staged writes in a store's `.tmp/` older than TMP_STALE_MS: a staged file is linked or
 *   renamed into place within the request that wrote it, and no request lives that long;
 * - lock files in `.locks/` older than the store's stale-lock bound (the age at which any writer
 *   would break them anyway), and the `.stale-*` graves a crash left while breaking one.
 *
 * Reported — possibly alive, or a decision the reconcile / orphan passes make: location claims
 * whose table record is gone (`held`/`pending`: the location is free to register again;
 * `purging`: a purge to finish), dataset folders under `tables/` that no claim covers,
 * namespaces left `dropping` and table records left mid-rename (the next request that meets
 * them settles them, docs/protocols.md "Repair paths").
 *
 * One log line either way, so a data directory that piles up leftovers says so.
 */
export const TMP_STALE_MS = 15 * 60_000;
export const LOCK_STALE_MS = 10_000;

export interface StartupSummary {
  removedTmpFiles: number;
  removedLockFiles: number;
  claimsWithoutRecord: number;
  purgingClaims: number;
  unreferencedDatasetDirs: number;
  droppingNamespaces: number;
  unsettledTables: number;
  /** The registry scan stopped at its cap; the counts above cover only what it read. */
  scanTruncated: boolean;
}

/** Records read by the report at most: start-up must stay quick on a large registry. */
const SCAN_CAP = 20_000;

export async function startupCleanup(
  services: CatalogServices,
  roots: { readonly registryRoot: string; readonly warehouseRoots: readonly string[] },
  options: { readonly now?: number; readonly lockStaleMs?: number } = {},
): Promise<StartupSummary> {
  const now = options.now ?? Date.now();
  const summary: StartupSummary = {
    removedTmpFiles: 0,
    removedLockFiles: 0,
    claimsWithoutRecord: 0,
    purgingClaims: 0,
    unreferencedDatasetDirs: 0,
    droppingNamespaces: 0,
    unsettledTables: 0,
    scanTruncated: false,
  };
  for (const root of [roots.registryRoot, ...roots.warehouseRoots]) {
    summary.removedTmpFiles += await removeOlder(path.join(root, '.tmp'), now - TMP_STALE_MS, () => true);
    summary.removedLockFiles += await removeOlder(
      path.join(root, '.locks'),
      now - (options.lockStaleMs ?? LOCK_STALE_MS),
      (name) => name.endsWith('.lock') || name.includes('.lock.stale-'),
    );
  }
  const claimed = await reportClaims(services, summary);
  for (const root of roots.warehouseRoots) summary.unreferencedDatasetDirs += await unclaimedDatasetDirs(root, claimed);
  await reportTree(services, summary);
  return summary;
}


/** Deletes the plain files in `dir` last modified before `before`; how many went. */
async function removeOlder(dir: string, before: number, wanted: (name: string) => boolean): Promise<number> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (!wanted(name)) continue;
    const file = path.join(dir, name);
    const seen = await fs.lstat(file).catch(() => undefined);
    if (!seen?.isFile() || seen.mtimeMs >= before) continue;
    if (await removeIfSame(file, seen)) removed++;
  }
  return removed;
}

/**
 * Removes `file` only if it is still the file we judged old: another process may break a stale
 * lock and take a fresh one under the same name between our look and our delete. Renaming first
 * and comparing identities (the store's own stale-lock dance) puts a fresh one back.
 */
async function removeIfSame(file: string, seen: Stats): Promise<boolean> {
  const grave = `${file}.cleanup-${randomUUID()}`;
  try {
    await fs.rename(file, grave);
  } catch {
    return false; // gone already
  }
  const now = await fs.lstat(grave);
  if (now.ino !== seen.ino || now.dev !== seen.dev) {
    await fs.link(grave, file).catch(() => undefined);
    await fs.rm(grave, { force: true });
    return false;
  }
  await fs.rm(grave, { force: true });
  return true;
}

/** Counts claims without a live record; answers the warehouse-relative paths every claim covers. */
async function reportClaims(services: CatalogServices, summary: StartupSummary): Promise<Set<string>> {
  const claimed = new Set<string>();
  for await (const key of scanKeys(services, keys.locationClaimsPrefix(services.project), summary)) {
    const claim = (await services.registry.read<LocationClaimRecord>(key))?.value;
    if (!claim) continue;
    claimed.add(claim.path);
    if (claim.state === 'purging') {
      summary.purgingClaims++;
      continue;
    }
    let live = false;
    for (const id of claim.ids) {
      const t = (await services.registry.read<TableRecord>(keys.table(services.project, id)))?.value;
      if (t && t.uid === claim.uid && t.path === claim.path) live = true;
    }
    if (!live) summary.claimsWithoutRecord++;
  }
  return claimed;
}

/** Dataset folders `tables/<random>/<name>.lance` that no claim covers. */
async function unclaimedDatasetDirs(warehouseRoot: string, claimed: Set<string>): Promise<number> {
  let count = 0;
  const tables = path.join(warehouseRoot, 'tables');
  for (const random of await fs.readdir(tables).catch(() => [] as string[])) {
    for (const name of await fs.readdir(path.join(tables, random)).catch(() => [] as string[])) {
      if (!claimed.has(`tables/${random}/${name}`)) count++;
    }
  }
  return count;
}

/** Namespaces left `dropping` and table records left mid-rename. */
async function reportTree(services: CatalogServices, summary: StartupSummary): Promise<void> {
  for await (const key of scanKeys(services, keys.subtree(services.project, []), summary)) {
    const kind = parseTreeKey(services.project, key)?.kind;
    if (!kind) continue;
    const value = (await services.registry.read<NamespaceRecord | TableRecord>(key))?.value;
    if (kind === 'namespace' && (value as NamespaceRecord | undefined)?.state === 'dropping') summary.droppingNamespaces++;
    if (kind === 'table' && ((value as TableRecord | undefined)?.state ?? 'active') !== 'active') summary.unsettledTables++;
  }
}

/**
 * The registry keys under `prefix`, page by page, stopping after SCAN_CAP keys (and saying so in
 * the summary): start-up must stay quick however large the catalog is; reconcile does the rest.
 */
async function* scanKeys(services: CatalogServices, prefix: string, summary: StartupSummary): AsyncGenerator<string> {
  let startAfter: string | undefined;
  let read = 0;
  for (;;) {
    const page = await services.registry.store.list({ prefix, startAfter, limit: 1000 });
    for (const obj of page.objects) {
      if (++read > SCAN_CAP) {
        summary.scanTruncated = true;
        return;
      }
      yield obj.key;
    }
    const last = page.objects[page.objects.length - 1];
    if (!page.truncated || !last) return;
    startAfter = last.key;
  }
}
