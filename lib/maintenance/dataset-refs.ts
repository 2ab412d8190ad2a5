/**
 * What a dataset's committed manifests name, read from storage: the files, index directories
 * and transaction files every version of every branch still needs. The sweep reclaims what only removed
 * versions named against it (docs/maintenance.md, "What a sweep reclaims").
 */
import { parseManifestName } from '../catalog/dataset/manifests.js';
import type { ObjectInfo, ObjectStore } from '../ports/object-store.js';
import { readManifestRefs, type ManifestRefs } from './lance-manifest.js';

/** A committed manifest's key relative to the dataset root: `_versions/…` or `tree/<branch>/_versions/…`. */
const MANIFEST_KEY = /^(?:tree\/.+\/)?_versions\/([^/]+)$/;

export function isManifestKey(rel: string): boolean {
  const m = MANIFEST_KEY.exec(rel);
  return m !== null && parseManifestName(m[1]) !== undefined;
}

/** Every object under `prefix`, page by page. */
export async function* listAll(store: ObjectStore, prefix: string): AsyncGenerator<ObjectInfo> {
  let after: string | undefined;
  for (;;) {
    const page = await store.list({ prefix, startAfter: after, limit: 1000 });
    yield* page.objects;
    const last = page.objects[page.objects.length - 1];
    if (!page.truncated || !last) return;
    after = last.key;
  }
}

/**
 * Paths (relative to the dataset root) that `refs` names: its data and deletion files, index
 * directories and transaction file.
 */
export function namedPaths(refs: ManifestRefs): string[] {
  return [...refs.files, ...refs.indexDirs, ...(refs.transaction ? [refs.transaction] : [])];
}

/**
 * The manifest-named path an object belongs to: a data or deletion file is named itself, a file
 * inside an index directory by `_indices/<uuid>`.
 */
function namedAs(rel: string): string {
  const index = /^_indices\/[^/]+/.exec(rel);
  return index ? index[0] : rel;
}

/**
 * What `objects` (a listing of the dataset at `root`) has that no committed manifest names,
 * limited to `candidates`. Throws when a manifest cannot be read and answers undefined when the
 * dataset reads files from other bases: then nothing can be proven unreferenced.
 */
export async function unreferenced(
  store: ObjectStore,
  root: string,
  objects: readonly ObjectInfo[],
  candidates: ReadonlySet<string>,
): Promise<ObjectInfo[] | undefined> {
  const kept = new Set<string>();
  for (const obj of objects) {
    const rel = obj.key.slice(root.length + 1);
    if (!isManifestKey(rel)) continue;
    const body = await store.get(obj.key);
    if (!body) continue; // removed meanwhile: it names nothing any more
    const refs = readManifestRefs(body.body);
    if (refs.externalBases) return undefined;
    for (const p of namedPaths(refs)) kept.add(p);
  }
  return objects.filter((obj) => {
    const named = namedAs(obj.key.slice(root.length + 1));
    return candidates.has(named) && !kept.has(named);
  });
}
