import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { TableRecord } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';

/**
 * Has-data markers: what lets `ListTables include_declared=false` list a page instead of probing
 * every table's storage (docs/protocols.md, "Has-data markers").
 *
 * A marker is an object at `keys.dataMarker(project, kind, id)` naming the table's uid. The
 * table record says which one it keeps (`dataMarker`): `none` for a managed-versioning table
 * with no commit yet, `data` once it has data, `maybe` for a table whose client commits straight
 * to storage without telling the catalog (no managed versioning), which the listing probes.
 *
 * The direction of every ordering is "never hide data": a marker is written before the record
 * that says it exists (a crash leaves a marker for a table that has none, which the listing shows
 * at worst), and removed after the record that needed it is gone. So the listing can show a
 * declared-only table after a crash, never miss one with data.
 */

export type MarkerKind = 'data' | 'maybe';

interface MarkerRecord {
  readonly kind: 'data-marker';
  readonly uid: string;
}

/** The markers a record keeps (absent field: a record from before markers, treated as `maybe`). */
export function markersOf(record: Pick<TableRecord, 'dataMarker'>): MarkerKind[] {
  switch (record.dataMarker) {
    case 'none':
      return [];
    case 'data':
      return ['data'];
    default:
      // A probed `maybe` table may also have gained a `data` marker.
      return ['data', 'maybe'];
  }
}

/** Writes `kinds` markers of table `uid` at `id` (idempotent: a plain put). */
export async function putMarkers(services: CatalogServices, id: readonly string[], uid: string, kinds: readonly MarkerKind[]): Promise<void> {
  await Promise.all(
    kinds.map((kind) => services.registry.store.put(keys.dataMarker(services.project, kind, id), JSON.stringify({ kind: 'data-marker', uid } satisfies MarkerRecord))),
  );
}

/** The markers a record keeps, written at `id` (a rename's destination, an undrop). */
export async function putMarkersOf(services: CatalogServices, id: readonly string[], record: TableRecord): Promise<void> {
  // A `maybe` table (or one from before markers) is probed again at its new id.
  await putMarkers(services, id, record.uid, record.dataMarker === 'none' ? [] : record.dataMarker === 'data' ? ['data'] : ['maybe']);
}

/**
 * Removes the markers of `record` at `id` once the record has left it; a marker of another uid
 * (a table created at the name since) stays. Best effort: it runs after the door has done what
 * it was asked, and a marker left behind only makes a listing show the name (never hides data).
 */
export async function removeMarkers(services: CatalogServices, id: readonly string[], record: TableRecord): Promise<void> {
  await Promise.all(
    markersOf(record).map((kind) => removeIfOwn(services, keys.dataMarker(services.project, kind, id), record.uid).catch(() => undefined)),
  );
}

async function removeIfOwn(services: CatalogServices, key: string, uid: string): Promise<void> {
  const found = await services.registry.store.get(key);
  if (!found) return;
  try {
    if ((JSON.parse(found.body.toString()) as MarkerRecord).uid !== uid) return;
  } catch {
    // Unreadable: not a marker this code wrote; remove it.
  }
  await services.registry.store.deleteIfMatch(key, found.etag).catch((err: unknown) => {
    if (!(err instanceof ConditionFailedError)) throw err;
  });
}

/**
 * After a namespace's record is gone: markers left under it (crash leftovers of its tables)
 * belong to no table. It must run only once the record is gone — before, a create racing the
 * drop may already have put its marker (markers go before records) and would be hidden. Each
 * delete is conditional on the etag listed, and nothing is deleted if the namespace exists again
 * (re-created meanwhile: its tables' markers are theirs). What a crash leaves here, reconcile
 * finds (`leftover-marker`).
 */
export async function clearMarkerSubtree(services: CatalogServices, namespace: readonly string[]): Promise<void> {
  const found: { key: string; etag: string }[] = [];
  for (const kind of ['data', 'maybe'] as const) {
    const prefix = keys.dataMarkersSubtree(services.project, kind, namespace);
    let startAfter: string | undefined;
    for (;;) {
      const page = await services.registry.store.list({ prefix, startAfter, limit: 1000 });
      found.push(...page.objects.map((o) => ({ key: o.key, etag: o.etag })));
      const last = page.objects.at(-1);
      if (!page.truncated || !last) break;
      startAfter = last.key;
    }
  }
  if (found.length === 0) return;
  if (await services.registry.read(keys.namespace(services.project, namespace))) return;
  await Promise.all(found.map((o) => services.registry.store.deleteIfMatch(o.key, o.etag).catch(() => undefined)));
}

/**
 * A managed table's first data (CreateTableVersion, a data-plane first write): the marker, then
 * the record's `dataMarker: data` (compare-and-swap on `etag`). False when the record changed
 * meanwhile (the caller re-reads and tries again, or gives up if the table is gone; the marker
 * left behind then only makes a listing show the name).
 */
export async function markHasData(services: CatalogServices, id: readonly string[], record: TableRecord, etag: string): Promise<boolean> {
  if (record.dataMarker !== 'none') return true;
  await putMarkers(services, id, record.uid, ['data']);
  try {
    await services.registry.replace<TableRecord>(keys.table(services.project, id), { ...record, dataMarker: 'data' }, etag);
    return true;
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return false;
  }
}

/**
 * markHasData until it holds, re-reading the record (settled, through `reread`) after a lost
 * race. Throws `gone()` when the table left `id` meanwhile (dropped, renamed or re-created):
 * its first data must not be committed under a record that no longer says so.
 */
export async function ensureHasData(
  services: CatalogServices,
  id: readonly string[],
  found: { record: TableRecord; etag: string },
  reread: () => Promise<{ value: TableRecord; etag: string } | undefined>,
  gone: () => Error,
): Promise<void> {
  let current = found;
  for (let attempt = 0; attempt < 8; attempt++) {
    if (await markHasData(services, id, current.record, current.etag)) return;
    const now = await reread();
    if (!now || now.value.uid !== found.record.uid) {
      // Ours, at a name the table has left: it would make a listing show the name. Unless the
      // table now at the name keeps a `data` marker, which our put may have overwritten: then
      // it gets its own back.
      const key = keys.dataMarker(services.project, 'data', id);
      if (now?.value.dataMarker === 'data') await putMarkers(services, id, now.value.uid, ['data']);
      else await removeIfOwn(services, key, found.record.uid).catch(() => undefined);
      throw gone();
    }
    current = { record: now.value, etag: now.etag };
  }
  throw gone();
}
