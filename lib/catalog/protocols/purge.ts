import { forEachLimited } from '../../concurrency.js';
import { InternalError } from '../../errors.js';
import { LinkRefusedError, type ObjectStore } from '../../ports/object-store.js';
import type { WarehouseRecord } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { persist } from '../outcome.js';
import { refuseSharedRoot } from '../storage-claims.js';

export interface PurgeResult {
  readonly deleted: number;
  /** Objects that could not be deleted (first few, for the report), and how many in all. */
  readonly failed: readonly { readonly key: string; readonly error: string }[];
  readonly failedCount: number;
  /** The listing itself failed, so the purge may have missed objects. */
  readonly listingError?: string;
}

const PAGE = 1000;
const WIDTH = 8;
/**
 * Deletes between two turns of the event loop at most. The filesystem store deletes
 * synchronously (its per-key lock, the unlink, the empty-directory prune), so without a turn
 * between batches the purge of a table with a long history ran as one block: 904 files, 300
 * versions, held every other request for 0.9 s on a loaded 2-core machine (issue #36). On S3 the
 * turn costs nothing measurable.
 */
export const PURGE_BATCH = 64;
/** Passes over the prefix: a later pass catches objects written while an earlier one ran. */
const PASSES = 3;

/**
 * Deletes every object under a table's directory, through the warehouse's object store (the
 * same port on disk and on S3, so the local server exercises the deployed code path). Never
 * throws for a single object: it reports what is left, because the caller has already removed
 * the table record and must answer either way.
 */
export async function deleteTableObjects(store: ObjectStore, tablePath: string): Promise<PurgeResult> {
  // A table path is relative and non-empty (location.ts); refuse anything that would widen the
  // prefix to the whole warehouse, whatever a damaged record says.
  if (!tablePath || tablePath.startsWith('/') || tablePath.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new InternalError(`refusing to delete objects under the unsafe table path ${JSON.stringify(tablePath)}`);
  }
  const prefix = `${tablePath}/`;
  let deleted = 0;
  let failedCount = 0;
  const failed: { key: string; error: string }[] = [];
  try {
    for (let pass = 0; pass < PASSES; pass++) {
      let startAfter: string | undefined;
      let seen = 0;
      for (;;) {
        const page = await persist(() => listOrUnlink(store, tablePath, { prefix, startAfter, limit: PAGE }));
        seen += page.objects.length;
        for (let from = 0; from < page.objects.length; from += PURGE_BATCH) {
          if (from > 0) await nextTurn();
          await forEachLimited(page.objects.slice(from, from + PURGE_BATCH), WIDTH, async (obj) => {
            try {
              // Tried again when the store does not answer (outcome.ts): a failed delete leaves
              // the claim `purging` for a job, which no read settles.
              await persist(() => store.delete(obj.key));
              deleted++;
            } catch (err) {
              failedCount++;
              if (failed.length < 10) failed.push({ key: obj.key, error: (err as Error).message });
            }
          });
        }
        await nextTurn();
        const last = page.objects[page.objects.length - 1];
        if (!page.truncated || !last) break;
        startAfter = last.key;
      }
      // Done when a pass found nothing left, or found only what it could not delete.
      if (seen === 0 || failedCount > 0) return { deleted, failed, failedCount };
    }
    // Every pass still found objects: something keeps writing into the dropped location.
    const left = await store.list({ prefix, limit: 1 });
    if (left.objects.length > 0) {
      failedCount++;
      failed.push({ key: left.objects[0].key, error: 'objects were still being written under the dropped table' });
    }
  } catch (err) {
    return { deleted, failed, failedCount, listingError: (err as Error).message };
  }
  return { deleted, failed, failedCount };
}

/**
 * deleteTableObjects for a table of warehouse `warehouse`, behind the backstop every deleting door
 * shares (docs/governance.md, "Storage allotment"): a warehouse whose root overlaps another
 * warehouse's or the platform's is refused (19) before anything is deleted, so a drop through an
 * alias warehouse can never reach the other warehouse's bytes. `checked`: the caller already ran it.
 */
export async function purgeInWarehouse(
  services: CatalogServices,
  warehouse: WarehouseRecord,
  tablePath: string,
  options: { checked?: boolean } = {},
): Promise<PurgeResult> {
  if (!options.checked) await refuseSharedRoot(services, warehouse, `delete ${tablePath}`);
  return deleteTableObjects(services.storageFor(warehouse.storage), tablePath);
}

/**
 * A listing of the table's directory. When the directory itself (or a directory in it) was
 * replaced by a symbolic link, the store refuses to list through it; the link lies inside the
 * table, so it is deleted as the object it is (its target is never touched) and the listing is
 * repeated. A link above the table's directory is not the table's to remove: that stays an error.
 */
async function listOrUnlink(store: ObjectStore, tablePath: string, options: Parameters<ObjectStore['list']>[0]) {
  for (let removed = 0; ; removed++) {
    try {
      return await store.list(options);
    } catch (err) {
      const inside = err instanceof LinkRefusedError && (err.link === tablePath || err.link.startsWith(`${tablePath}/`));
      if (!inside || removed >= 100) throw err;
      await store.delete(err.link);
    }
  }
}

/** Lets timers, I/O callbacks and other requests run before the next batch. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export const purgeComplete = (r: PurgeResult) => r.failedCount === 0 && r.listingError === undefined;
