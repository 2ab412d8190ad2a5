/**
 * What a backfill or a sweep will rewrite, read from the table's newest manifest when the job is
 * queued, so that the queue starts it on the tier that fits (lib/queue/tiers.ts, routeByEstimate;
 * docs/jobs.md, "Routing"). One LIST and one GET, and no LanceDB: the scheduled fan-out, which
 * bundles no data plane, reads it too. Undefined when the manifest cannot be read or a writer did
 * not record a file's size: the job then goes by experience (an escalation after a lapsed lease).
 */
import type { ObjectStore } from '../../ports/object-store.js';
import { readDataFiles, readFragments, readSchemaFields } from './lance-manifest.js';
import { versionsPrefix } from './manifests.js';
import { latestEntry } from './version-chain.js';

/** The newest manifest's bytes of the table at `tablePath` (on `branch`), or undefined. */
export async function newestManifest(store: ObjectStore, tablePath: string, branch?: string): Promise<Uint8Array | undefined> {
  try {
    const latest = await latestEntry(store, versionsPrefix(tablePath, branch));
    const object = latest && (await store.get(latest.info.key));
    return object ? new Uint8Array(object.body) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bytes a compaction would rewrite: the data files of the fragments with fewer live rows than
 * `targetRows`, when there are two or more of them (a single small fragment has nothing to merge
 * with; the sweep's own trigger, lib/maintenance/sweep.ts). Fragments rewritten only to drop
 * deleted rows are not counted.
 */
export function compactionBytes(manifest: Uint8Array, targetRows: number): number | undefined {
  try {
    const small = readFragments(manifest).filter((f) => f.rows < targetRows);
    if (small.length < 2) return 0;
    let bytes = 0;
    for (const f of small) {
      if (f.bytes === undefined) return undefined;
      bytes += f.bytes;
    }
    return bytes;
  } catch {
    return undefined;
  }
}

/**
 * The bytes a backfill of `column` reads at most: every data file of the version except those
 * that serve only the column being filled. A column-only fill reads the key and the expression's
 * inputs, which is at most that (exact for a table of key + inputs, as the budget was measured:
 * lib/queue/tiers.ts); a fill without a key rewrites whole rows, which is that.
 */
export function backfillBytes(manifest: Uint8Array, column: string): number | undefined {
  try {
    const fields = readSchemaFields(manifest);
    const top = fields.find((f) => f.parent === -1 && f.name === column);
    const own = new Set<number>();
    if (top) {
      own.add(top.id);
      // Nested children (a vector's item field) belong to the column too.
      for (let grew = true; grew; ) {
        grew = false;
        for (const f of fields) {
          if (own.has(f.parent) && !own.has(f.id)) {
            own.add(f.id);
            grew = true;
          }
        }
      }
    }
    let bytes = 0;
    for (const file of readDataFiles(manifest)) {
      if (file.fields.length > 0 && file.fields.every((id) => own.has(id))) continue;
      if (file.bytes === 0) return undefined;
      bytes += file.bytes;
    }
    return bytes;
  } catch {
    return undefined;
  }
}
