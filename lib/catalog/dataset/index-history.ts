/**
 * Why an index is gone from a dataset (issue #33 item 3): dropped on purpose, or lost to a write.
 *
 * A client that writes straight to storage (the official client over `connectNamespace('rest')`
 * opens the dataset itself) drops an index without the catalog seeing it, and so does a write
 * that rewrites the index's column. Both leave the same latest manifest, but not the same
 * history: Lance commits an index drop as a CreateIndex transaction (field 103 of its
 * Transaction message) that removes the index, and a write as an Update, Merge, Overwrite, … So
 * the first version without the index, walking back from the latest, names its cause through
 * its transaction file. The walk stops at `MAX_VERSIONS_BACK` or at a version already pruned:
 * the cause is then unknown.
 */
import type { ObjectStore } from '../../ports/object-store.js';
import { readIndexNames, readTransactionFile, readTransactionOperation } from './lance-manifest.js';
import { findManifest } from './manifests.js';

export const MAX_VERSIONS_BACK = 32;

/** Lance's Transaction.operation field numbers (protos/transaction.proto). */
const CREATE_INDEX_OPERATION = 103;

export interface IndexLoss {
  /** `dropped`: an index drop removed it; `written`: a data write did; `unknown`: the history does not say. */
  readonly cause: 'dropped' | 'written' | 'unknown';
  /** The first version without it. */
  readonly version?: number;
}

async function manifestBytes(store: ObjectStore, tablePath: string, version: number): Promise<Uint8Array | undefined> {
  const info = await findManifest(store, tablePath, version);
  const object = info && (await store.get(info.key));
  return object ? new Uint8Array(object.body) : undefined;
}

/** Why `name` is not in version `latest` of the dataset at `tablePath` (main). */
export async function indexLoss(store: ObjectStore, tablePath: string, name: string, latest: number): Promise<IndexLoss> {
  let without = await manifestBytes(store, tablePath, latest);
  for (let v = latest; without && v > 1 && latest - v < MAX_VERSIONS_BACK; v--) {
    const before = await manifestBytes(store, tablePath, v - 1);
    if (!before) return { cause: 'unknown' };
    if (readIndexNames(before).includes(name)) {
      const txn = readTransactionFile(without);
      const object = txn && (await store.get(`${tablePath}/${txn}`));
      if (!object) return { cause: 'unknown', version: v };
      const op = readTransactionOperation(new Uint8Array(object.body));
      return { cause: op === CREATE_INDEX_OPERATION ? 'dropped' : op === undefined ? 'unknown' : 'written', version: v };
    }
    without = before;
  }
  return { cause: 'unknown' };
}
