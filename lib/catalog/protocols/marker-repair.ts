import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { TableRecord } from '../../registry/records.js';
import type { CatalogServices } from '../services.js';
import { keepsMarker, type MarkerKind, markHasData, markerUid, putMarkers } from './markers.js';
import { isLive, readRaw } from './move.js';

/**
 * Finding and repairing has-data markers that disagree with the table records (the reconcile
 * pass, lib/maintenance/reconcile.ts). Two kinds of drift, both left by a crash:
 *
 *   leftover  a marker whose id holds no record, or a record of another uid (a create that lost
 *             its name and died before taking its marker back, a drop or rename cut short before
 *             its marker went): a listing shows the name of a table with no data. Harmless, so
 *             removal must never be the worse error: it re-checks under the record current
 *             right before removing.
 *   missing   a record that says `dataMarker: data` without the marker: a listing HIDES its data.
 *             No door leaves that (the marker is always written first), but a lost object or a
 *             hand edit can; the repair writes it.
 */

export type MarkerCheck = { ok: true } | { ok: false; uid?: string; holder?: TableRecord };

/** Whether a data marker at `id` (its `body`, of either kind) belongs to the table record there (any state, same uid). */
export async function checkMarker(services: CatalogServices, id: readonly string[], body: Buffer): Promise<MarkerCheck> {
  const uid = markerUid(body);
  const holder = (await readRaw(services, id))?.value;
  if (holder && uid !== undefined && holder.uid === uid) return { ok: true };
  return { ok: false, uid, holder };
}

/**
 * Removes the `kind` marker at `id` unless a table record there owns it. Order matters: the
 * marker is read first (its etag), the record second, and the delete is conditional on that
 * etag, so a create that puts its own marker (then its record) anywhere in between changes the
 * etag and the delete fails. One gap is left by etags being content hashes: a table coming back
 * under the same uid (an undrop) re-puts an identical marker; the record is therefore read once
 * more after the delete and the marker put back if the table there keeps it.
 */
export async function removeLeftoverMarker(services: CatalogServices, kind: MarkerKind, id: readonly string[]): Promise<string> {
  const key = keys.dataMarker(services.project, kind, id);
  const found = await services.registry.store.get(key);
  if (!found) return 'no change: the marker is gone';
  const check = await checkMarker(services, id, found.body);
  if (check.ok) return 'no change: the marker belongs to the table now at the name';
  if (check.holder && keepsMarker(check.holder, kind)) {
    await putMarkers(services, id, check.holder.uid, [kind]);
    return `${kind} marker rewritten for the table now at the name (uid ${check.holder.uid})`;
  }
  try {
    await services.registry.store.deleteIfMatch(key, found.etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return 'no change: the marker was rewritten meanwhile';
  }
  const now = (await readRaw(services, id))?.value;
  if (now && (keepsMarker(now, kind) || now.uid === check.uid)) {
    await putMarkers(services, id, now.uid, [kind]);
    return `no change: a table came to the name while the marker was removed; its ${kind} marker is put back`;
  }
  return `leftover ${kind} marker removed`;
}

/** Whether the record at `id` (uid `uid`) says it has data and its `data` marker does not name it. */
export async function dataMarkerMissing(services: CatalogServices, id: readonly string[], uid: string): Promise<boolean> {
  const found = await services.registry.store.get(keys.dataMarker(services.project, 'data', id));
  return !found || markerUid(found.body) !== uid;
}

/**
 * Writes the `data` marker of table `uid` at `id` if the record there still says it has data.
 * A drop racing this can leave the marker behind: a leftover, which only shows a name.
 */
export async function restoreDataMarker(services: CatalogServices, id: readonly string[], uid: string): Promise<string> {
  const now = (await readRaw(services, id))?.value;
  if (!now || now.uid !== uid || now.dataMarker !== 'data') return 'no change: the table changed meanwhile';
  if (!(await dataMarkerMissing(services, id, uid))) return 'no change: the marker is there now';
  await putMarkers(services, id, uid, ['data']);
  return 'data marker written';
}

/**
 * Records the data of table `uid` at `id` whose record still says `dataMarker: none` (a managed
 * table a client committed to directly, so far read only in read-only mode): the `data` marker,
 * then the record (compare-and-swap), exactly what a version lookup does outside read-only mode.
 */
export async function recordFoundData(services: CatalogServices, id: readonly string[], uid: string): Promise<string> {
  const now = await readRaw(services, id);
  if (!now || now.value.uid !== uid || !isLive(now.value) || now.value.dataMarker !== 'none') return 'no change: the table changed meanwhile';
  return (await markHasData(services, id, now.value, now.etag)) ? 'data marker and record written' : 'no change: the record changed meanwhile';
}
