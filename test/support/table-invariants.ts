import { expect } from 'vitest';
import type { TrashRecord } from '../../lib/registry/records.js';
import { turns } from './jittery-store.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { requireWarehouse } from '../../lib/catalog/warehouses.js';
import { CatalogError } from '../../lib/errors.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys, parseLocationClaimKey, parseTreeKey } from '../../lib/registry/keys.js';
import type { LocationClaimRecord, NamespaceRecord, TableRecord } from '../../lib/registry/records.js';

/** The outcome of a catalog call: 'ok' or the error code (anything else fails the test). */
export const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok' as const,
    (e: unknown) => (e instanceof CatalogError ? e.code : Promise.reject(e)),
  );

/**
 * Starts `run` after a random 0–`maxTurns` event-loop turns, so each iteration lines the doors
 * up differently (the same unit as the turn-jittered store: ~3 turns per store round trip).
 */
export const later = <T>(run: () => Promise<T>, maxTurns = 15) => turns(maxTurns).then(run);

/** `later` in milliseconds, for stores whose latency is in milliseconds (real file I/O). */
export const laterMs = <T>(run: () => Promise<T>, maxMs = 15) =>
  new Promise<T>((resolve, reject) => setTimeout(() => run().then(resolve, reject), Math.random() * maxMs));

export async function warehouseStore(services: CatalogServices): Promise<ObjectStore> {
  const warehouse = await requireWarehouse(services, services.defaultWarehouse);
  return services.storageFor(warehouse.storage);
}

/** A minimal stand-in for a Lance dataset: a committed manifest and a data file. */
export async function writeFakeDataset(store: ObjectStore, path: string): Promise<void> {
  await store.put(`${path}/_versions/18446744073709551614.manifest`, 'manifest v1');
  await store.put(`${path}/data/0-abc.lance`, 'rows');
}

export async function objectsUnder(store: ObjectStore, path: string): Promise<string[]> {
  return (await store.list({ prefix: `${path}/` })).objects.map((o) => o.key);
}

/** Every table record of the project, as stored. */
export async function allTableRecords(services: CatalogServices): Promise<TableRecord[]> {
  const listed = await services.registry.store.list({ prefix: keys.subtree(services.project, []) });
  const out: TableRecord[] = [];
  for (const obj of listed.objects) {
    if (parseTreeKey(services.project, obj.key)?.kind !== 'table') continue;
    const found = await services.registry.read<TableRecord>(obj.key);
    if (found) out.push(found.value);
  }
  return out;
}

export async function allClaims(services: CatalogServices): Promise<LocationClaimRecord[]> {
  const listed = await services.registry.store.list({ prefix: keys.locationClaimsPrefix(services.project) });
  const out: LocationClaimRecord[] = [];
  for (const obj of listed.objects) {
    expect(parseLocationClaimKey(services.project, obj.key), obj.key).toBeDefined();
    const found = await services.registry.read<LocationClaimRecord>(obj.key);
    if (found) out.push(found.value);
  }
  return out;
}

/**
 * What must hold once every request has finished (no crashes in between):
 * - every table record is live (no rename left half-done) and its namespace is active;
 * - no two live tables share a location or a uid;
 * - the location claims are exactly the live tables' locations, each owned by its table, plus
 *   the locations of tables in trash, each `trashed` and owned by the trashed table.
 */
export async function assertTableInvariants(services: CatalogServices): Promise<TableRecord[]> {
  const tables = await allTableRecords(services);
  const locations = new Set<string>();
  const uids = new Set<string>();
  for (const t of tables) {
    expect(t.state ?? 'active', `record ${JSON.stringify(t.id)} left mid-rename`).toBe('active');
    const namespace = t.id.slice(0, -1);
    if (namespace.length > 0) {
      const parent = await services.registry.read<NamespaceRecord>(keys.namespace(services.project, namespace));
      expect(parent?.value.state, `table ${JSON.stringify(t.id)} has no live namespace`).toBe('active');
    }
    const where = `${t.warehouse}/${t.path}`;
    expect(locations.has(where), `two live tables on ${where}`).toBe(false);
    expect(uids.has(t.uid), `two live records of table ${t.uid}`).toBe(false);
    locations.add(where);
    uids.add(t.uid);
  }
  const claims = await allClaims(services);
  const claimed = new Map(claims.map((c) => [`${c.warehouse}/${c.path}`, c]));
  for (const t of tables) {
    const claim = claimed.get(`${t.warehouse}/${t.path}`);
    expect(claim, `table ${JSON.stringify(t.id)} has no location claim`).toBeDefined();
    expect(claim!.uid).toBe(t.uid);
    expect(claim!.state).toBe('held');
    expect(claim!.ids.map((id) => JSON.stringify(id))).toContain(JSON.stringify(t.id));
  }
  const trashed = await allTrash(services);
  for (const t of trashed) {
    const where = `${t.warehouse}/${t.path}`;
    expect(locations.has(where), `a trashed table's location ${where} is also a live table's`).toBe(false);
    const claim = claimed.get(where);
    expect(claim, `trashed table ${JSON.stringify(t.id)} has no location claim`).toMatchObject({ uid: t.uid, state: 'trashed' });
    locations.add(where);
  }
  expect(claims.length, `stale claims: ${JSON.stringify(claims.filter((c) => !locations.has(`${c.warehouse}/${c.path}`)))}`).toBe(
    tables.length + trashed.length,
  );
  return tables;
}

/** The tables in trash (their records as they were when dropped). */
export async function allTrash(services: CatalogServices): Promise<TableRecord[]> {
  const out: TableRecord[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix: keys.trashPrefix(services.project), startAfter, limit: 1000 });
    for (const o of page.objects) {
      const found = await services.registry.read<TrashRecord | { object: 'namespace' }>(o.key);
      // Namespace trash records (a detached subtree) hold no location.
      if (found && found.value.object === 'table') out.push((found.value as TrashRecord).table);
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return out;
    startAfter = last.key;
  }
}
