import { ConcurrentModificationError, TableAlreadyExistsError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { TableRecord } from '../../registry/records.js';
import { fmtId } from '../ids.js';
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
    kinds.map((kind) => services.registry.store.put(keys.dataMarker(services.project, kind, id), markerBody(uid))),
  );
}

/** The marker kinds a record keeps written at a new id (a `maybe` table, or one from before markers, is probed again there). */
function kindsToWrite(record: Pick<TableRecord, 'dataMarker'>): MarkerKind[] {
  return record.dataMarker === 'none' ? [] : record.dataMarker === 'data' ? ['data'] : ['maybe'];
}

/** The markers a record keeps, written at `id` (a rename's destination). */
export async function putMarkersOf(services: CatalogServices, id: readonly string[], record: TableRecord): Promise<void> {
  await putMarkers(services, id, record.uid, kindsToWrite(record));
}

/** Whether a record keeps a `kind` marker at its id: `data` once it has data, `maybe` while its clients commit unseen (or it is from before markers). */
export function keepsMarker(record: Pick<TableRecord, 'dataMarker'>, kind: MarkerKind): boolean {
  if (record.dataMarker === 'none') return false;
  return kind === 'data' ? record.dataMarker === 'data' : record.dataMarker !== 'data';
}

/** The uid a marker names; undefined for a body this code did not write. */
export function markerUid(body: Buffer): string | undefined {
  try {
    const uid = (JSON.parse(body.toString()) as { uid?: unknown }).uid;
    return typeof uid === 'string' ? uid : undefined;
  } catch {
    return undefined;
  }
}

/** The markers a creating door holds at its id until its record exists (claimMarkersOf). */
export interface MarkerHold {
  /**
   * The door was refused: take back what it wrote (never throws). Safe on any failure path,
   * because it looks at the record at the id first: its own record there (a write whose answer
   * was lost) keeps the marker, another table that keeps one gets it back under its own uid,
   * else it goes.
   */
  release(): Promise<void>;
}

/**
 * The table now at a door's id, read settled (lookup.ts, readTable, which callers pass: lookup.ts
 * sits above this file in the import graph): how a taken name is told.
 */
export type HolderRead = () => Promise<{ value: TableRecord } | undefined>;

/**
 * The markers of `record` (about to be created at `id` by CreateTable, DeclareTable,
 * RegisterTable or an undrop), written before the record as every marker is, but never over a
 * table that holds the name: a put-if-absent. A marker already there is
 *
 * - this record's own (a retried write, an undrop's table): held as it is;
 * - a live table's (`holder` finds one at `id`): nothing written, and the door is refused with `taken()`
 *   (default: 5, the table exists): its record write would be refused, and the marker is that
 *   table's;
 * - a leftover, or a rival create's that has no record yet: taken over by compare-and-swap, so
 *   whichever create writes its record owns the marker its record needs.
 *
 * A door refused after this must `release()` the hold (docs/protocols.md, "Has-data markers").
 */
export async function claimMarkersOf(
  services: CatalogServices,
  id: readonly string[],
  record: TableRecord,
  holder: HolderRead,
  taken: () => Error = () => new TableAlreadyExistsError(`table ${fmtId(id)} already exists`),
): Promise<MarkerHold> {
  const held: { kind: MarkerKind; key: string; etag: string }[] = [];
  // Best effort: what it cannot take back only makes a listing show the name (reconcile's `leftover-marker`).
  const hold: MarkerHold = { release: () => releaseMarkers(services, record.uid, held, holder).catch(() => undefined) };
  const body = markerBody(record.uid);
  for (const kind of kindsToWrite(record)) {
    const key = keys.dataMarker(services.project, kind, id);
    const etag = await claimOne(services, key, record.uid, body, holder).catch(async (err: unknown) => {
      await hold.release();
      throw err;
    });
    if (etag === 'taken') {
      await hold.release();
      throw taken();
    }
    held.push({ kind, key, etag });
  }
  return hold;
}

async function claimOne(services: CatalogServices, key: string, uid: string, body: string, holder: HolderRead): Promise<string | 'taken'> {
  const store = services.registry.store;
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      return (await store.putIfAbsent(key, body)).etag;
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
    const found = await store.get(key);
    if (!found) continue; // removed meanwhile: put it again
    if (markerUid(found.body) === uid) return found.etag;
    if (await holder()) return 'taken';
    try {
      return (await store.putIfMatch(key, body, found.etag)).etag;
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
    }
  }
  throw new ConcurrentModificationError(`the has-data marker at ${key} kept changing; retry`);
}

async function releaseMarkers(
  services: CatalogServices,
  uid: string,
  held: readonly { kind: MarkerKind; key: string; etag: string }[],
  holder: HolderRead,
): Promise<void> {
  if (held.length === 0) return;
  const store = services.registry.store;
  const ignoreLost = (err: unknown) => {
    if (!(err instanceof ConditionFailedError)) throw err;
  };
  // Unreadable: the marker stays (at worst a listing shows the name; never hide data).
  const now = (await holder())?.value;
  if (now?.uid === uid) return; // the record landed after all: the markers are its own
  await Promise.all(
    held.map(async ({ kind, key, etag }) => {
      // Every write is conditional on the etag this door left: a create that took the marker
      // over since owns it now.
      if (now && keepsMarker(now, kind)) return store.putIfMatch(key, markerBody(now.uid), etag).then(() => undefined, ignoreLost);
      try {
        await store.deleteIfMatch(key, etag);
      } catch (err) {
        return ignoreLost(err);
      }
      // A create whose record landed between the read above and the delete gets its marker back.
      const after = (await holder())?.value;
      if (after && after.uid !== uid && keepsMarker(after, kind)) await store.putIfAbsent(key, markerBody(after.uid)).catch(ignoreLost);
    }),
  );
}

const markerBody = (uid: string) => JSON.stringify({ kind: 'data-marker', uid } satisfies MarkerRecord);

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
