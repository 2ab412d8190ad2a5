import { forEachLimited } from '../../concurrency.js';
import { ConditionFailedError, type ObjectStore } from '../../ports/object-store.js';
import { parseManifestName } from '../dataset/manifests.js';
import { deleteTableObjects } from './purge.js';

/**
 * The first version of a declared table, arbitrated like every later commit.
 *
 * Why: LanceDB's `createTable(mode: create)` checks that no dataset exists and then commits
 * version 1 as an *Overwrite*; two writers that both passed the check both commit, because
 * Lance rebases a losing Overwrite onto the winner as version 2 — replacing rows it already
 * acknowledged (issue #8, defect 4). Every later version is arbitrated by a put-if-absent of its
 * manifest, so the first one is too:
 *
 * 1. the writer creates the dataset at a private staging location inside the table's own
 *    directory (`<table>/_staging/<random>.lance`), where nobody competes with it;
 * 2. it copies every file of that dataset except its manifests into the table directory: data
 *    and transaction files carry random names, so they never collide and are harmless while no
 *    manifest references them;
 * 3. it publishes the staging dataset's version-1 manifest at the table's `_versions/` with
 *    copy-if-absent — the same conditional create Lance itself (and CreateTableVersion) uses for
 *    every commit. Exactly one writer wins; the others delete the files they copied and are
 *    told they lost, so they retry as an ordinary write (an append lands on top of the winner's
 *    version) or answer a conflict — never 200 for rows that are not there;
 * 4. the staging directory is deleted.
 *
 * Staging inside the table directory keeps every leftover of a crash inside the table: a drop
 * purges it with the table, and nothing under `_staging/` is a version of the table (a crash
 * after step 2 leaves unreferenced data files, which Lance's own cleanup or the orphan scan
 * removes). Manifests carry paths relative to the dataset, so a copied manifest reads the
 * copied files.
 */
export const STAGING_DIR = '_staging';

export interface FirstVersionTarget {
  /** The warehouse's object store. */
  readonly store: ObjectStore;
  /** The table's path relative to the warehouse root. */
  readonly path: string;
  /** The table's absolute location (what the data engine opens). */
  readonly location: string;
}

export type FirstVersionOutcome<T> = { readonly won: true; readonly value: T } | { readonly won: false };

export async function writeFirstVersion<T>(
  target: FirstVersionTarget,
  random: string,
  /** Creates a new dataset at `stagingLocation` (mode create) and answers what the request answers. */
  stage: (stagingLocation: string) => Promise<T>,
): Promise<FirstVersionOutcome<T>> {
  const name = random.replace(/[^A-Za-z0-9]/g, '').slice(0, 24) || 'stage';
  const stagingPath = `${target.path}/${STAGING_DIR}/${name}.lance`;
  const stagingLocation = `${target.location.replace(/\/+$/, '')}/${STAGING_DIR}/${name}.lance`;
  try {
    const value = await stage(stagingLocation);
    return (await publish(target.store, stagingPath, target.path)) ? { won: true, value } : { won: false };
  } finally {
    await deleteTableObjects(target.store, stagingPath).catch(() => undefined);
  }
}

/** Files copied at once while publishing; each copy is one request on S3. */
const COPY_WIDTH = 16;

/**
 * Steps 2–3: copy the files, then copy-if-absent the manifest. True when this writer won. The
 * copies are the store's own (a hard link on disk, CopyObject on S3), so the bytes never pass
 * through this process: a create of 5 MB read and rewrote them here (and fsynced them) before.
 */
async function publish(store: ObjectStore, stagingPath: string, tablePath: string): Promise<boolean> {
  const files = await listAll(store, `${stagingPath}/`);
  const manifests: string[] = [];
  const data: string[] = [];
  for (const rel of files) {
    const versionsFile = rel.startsWith('_versions/') ? rel.slice('_versions/'.length) : undefined;
    // The version hint is a cache Lance rebuilds by listing; only manifests are versions.
    if (versionsFile === undefined) data.push(rel);
    else if (parseManifestName(versionsFile)) manifests.push(rel);
  }
  if (manifests.length !== 1) throw new Error(`a new dataset should have exactly one manifest, found ${manifests.length}`);
  const copied: string[] = [];
  await forEachLimited(data, COPY_WIDTH, async (rel) => {
    // Random names: an existing file here is not ours to overwrite (ConditionFailedError stops the write).
    if (!(await store.copyIfAbsent(`${stagingPath}/${rel}`, `${tablePath}/${rel}`))) {
      throw new Error(`staged file ${rel} vanished before it was published`);
    }
    copied.push(rel);
  });
  try {
    if (!(await store.copyIfAbsent(`${stagingPath}/${manifests[0]}`, `${tablePath}/${manifests[0]}`))) {
      throw new Error('the staged manifest vanished before it was published');
    }
    return true;
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    // Someone else's version 1 is the table now; our copies are referenced by nothing.
    await Promise.all(copied.map((rel) => store.delete(`${tablePath}/${rel}`).catch(() => undefined)));
    return false;
  }
}

async function listAll(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ prefix, startAfter, limit: 1000 });
    out.push(...page.objects.map((o) => o.key.slice(prefix.length)));
    const last = page.objects[page.objects.length - 1];
    if (!page.truncated || !last) return out;
    startAfter = last.key;
  }
}
