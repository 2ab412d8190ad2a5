/**
 * Reconcile and the has-data markers (lib/catalog/protocols/marker-repair.ts): a leftover marker
 * (no record at its id, or a record of another uid) is reported and, with repair, removed, but
 * never from under a table that owns it, however the repair interleaves with the doors; a table
 * whose record says it has data but whose marker is missing (hidden by the listing) gets it back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { listTables } from '../../lib/catalog/tables/list.js';
import { removeLeftoverMarker } from '../../lib/catalog/protocols/marker-repair.js';
import { readRaw } from '../../lib/catalog/protocols/move.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { reconcileWith, type Finding } from '../../lib/maintenance/reconcile.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import { Registry } from '../../lib/registry/registry.js';
import { withWriteCounter } from '../support/counting.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

const HOUR = 3_600_000;
const reconcile = reconcileWith({ stuckAfterMs: 15 * 60_000 });
const anHourLater = (svc: CatalogServices): CatalogServices => ({ ...svc, now: () => new Date(Date.now() + HOUR) });
const found = (items: readonly Readonly<Record<string, unknown>>[]) =>
  (items as unknown as Finding[]).filter((i) => i.kind.endsWith('-marker')).map((i) => `${i.kind} ${i.marker} ${JSON.stringify(i.id)}`).sort();

let f: ServicesFixture;
let s: CatalogServices;
let store: ObjectStore;

const withData = async (svc = s) => (await listTables(svc, { namespace: ['m'], includeDeclared: false })).tables;
const marker = (name: string) => s.registry.store.get(keys.dataMarker(s.project, 'data', ['m', name]));

/** A registered table: it has data, so it keeps a `data` marker. */
async function register(name: string, svc = s): Promise<void> {
  const path = `reg/${name}-${Math.random().toString(36).slice(2)}`;
  await writeFakeDataset(store, path);
  await registerTable(svc, { id: ['m', name], location: path, mode: 'create', properties: {} });
}

/** A drop that died after removing the record, before removing its marker. */
async function removeRecordOnly(name: string): Promise<void> {
  const rec = (await readRaw(s, ['m', name]))!;
  await s.registry.remove(keys.table(s.project, ['m', name]), rec.etag);
}

/** The services with `hook` run (once) before the store call `op` on `key` gets through. */
function interposed(svc: CatalogServices, op: string, key: string, hook: () => Promise<void>, skip = 0): CatalogServices {
  let seen = 0;
  const inner = svc.registry.store;
  const wrapped = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (prop === op && args[0] === key && seen++ === skip) await hook();
        return value.apply(target, args);
      };
    },
  });
  return { ...svc, registry: new Registry(wrapped) };
}

beforeEach(async () => {
  f = await servicesOver('memory');
  s = f.services;
  store = await warehouseStore(s);
  await createNamespace(s, { id: ['m'], mode: 'create', properties: {} });
  await register('ok');
  await declareTable(s, { id: ['m', 'declared'], properties: {}, identity: {} });
  // Leftover: no record at its id.
  await register('gone');
  await removeRecordOnly('gone');
  // Leftover: the name was taken since by a declared table (another uid, no data).
  await register('other');
  await removeRecordOnly('other');
  await declareTable(s, { id: ['m', 'other'], properties: {}, identity: {} });
  // Missing: a table with data whose marker was lost.
  await register('lost');
  await s.registry.store.delete(keys.dataMarker(s.project, 'data', ['m', 'lost']));
});
afterEach(() => f.cleanup());

describe('reconcile: has-data markers', () => {
  it('reports leftover and missing markers, and writes nothing', async () => {
    expect(await withData()).toEqual(['gone', 'ok', 'other']);
    const counter = { writes: [] as string[] };
    const r = await reconcile(withWriteCounter(anHourLater(s), counter), {});
    expect(found(r.items)).toEqual([
      'leftover-marker data ["m","gone"]',
      'leftover-marker data ["m","other"]',
      'missing-marker data ["m","lost"]',
    ]);
    expect(r.summary).toMatchObject({ markers: 3, 'leftover-marker': 2, 'missing-marker': 1 });
    expect(counter.writes).toEqual([]);
    expect(r.complete).toBe(true);
  });

  it('does not report young markers or records: a create or rename may be in flight', async () => {
    const r = await reconcile(s, {});
    expect(found(r.items)).toEqual([]);
  });

  it('repairs: leftovers removed, the missing marker written; the listing is then exactly the tables with data', async () => {
    const r = await reconcile(anHourLater(s), { repair: true });
    const repaired = Object.fromEntries((r.items as unknown as Finding[]).map((i) => [`${i.kind} ${i.id?.join('.')}`, i.repaired]));
    expect(repaired['leftover-marker m.gone']).toMatch(/removed/);
    expect(repaired['leftover-marker m.other']).toMatch(/removed/);
    expect(repaired['missing-marker m.lost']).toMatch(/written/);
    expect(await withData()).toEqual(['lost', 'ok']);
    expect(found((await reconcile(anHourLater(s), {})).items)).toEqual([]);
  });

  it('reports a managed table a client committed to directly (its record does not know), and records it with repair', async () => {
    // Seen so far only by read-only functions, which answer its versions without recording them.
    await writeFakeDataset(store, (await readRaw(s, ['m', 'declared']))!.value.path);
    const unrecorded = (items: readonly Readonly<Record<string, unknown>>[]) =>
      (items as unknown as Finding[]).filter((i) => i.kind === 'unrecorded-data').map((i) => `${i.id?.join('.')} ${i.repaired ?? ''}`);
    expect(unrecorded((await reconcile(s, {})).items)).toEqual([]); // young: a commit may be in flight
    const counter = { writes: [] as string[] };
    const r = await reconcile(withWriteCounter(anHourLater(s), counter), {});
    expect(unrecorded(r.items)).toEqual(['m.declared ']);
    expect(r.summary).toMatchObject({ 'unrecorded-data': 1 });
    expect(counter.writes).toEqual([]);
    expect(await withData()).not.toContain('declared');

    const repaired = await reconcile(anHourLater(s), { repair: true });
    expect(unrecorded(repaired.items)).toEqual(['m.declared data marker and record written']);
    expect((await readRaw(s, ['m', 'declared']))!.value.dataMarker).toBe('data');
    expect(await withData()).toContain('declared');
    expect(unrecorded((await reconcile(anHourLater(s), {})).items)).toEqual([]);
  });

  it('keeps a marker whose table is created at the name while the repair looks at it', async () => {
    // The repair reads the marker; a table with data takes the name right then.
    const key = keys.dataMarker(s.project, 'data', ['m', 'gone']);
    const later = interposed(anHourLater(s), 'get', key, () => register('gone'), 1);
    const r = await reconcile(later, { repair: true });
    expect((r.items as unknown as Finding[]).find((i) => i.kind === 'leftover-marker' && i.id?.[1] === 'gone')?.repaired).toMatch(/belongs/);
    expect(await withData()).toContain('gone');
  });

  it('keeps a marker rewritten by a create between the record check and the delete', async () => {
    const key = keys.dataMarker(s.project, 'data', ['m', 'gone']);
    const later = interposed(anHourLater(s), 'deleteIfMatch', key, () => register('gone'));
    const r = await reconcile(later, { repair: true });
    expect((r.items as unknown as Finding[]).find((i) => i.kind === 'leftover-marker' && i.id?.[1] === 'gone')?.repaired).toMatch(/rewritten meanwhile/);
    expect(await withData()).toContain('gone');
  });

  it('puts back a marker its own table re-put (same uid, same bytes, same etag) just before the delete', async () => {
    // What an undrop does (restoreTable): the same marker again, then the same record again.
    const gone = (await marker('gone'))!;
    const uid = (JSON.parse(gone.body.toString()) as { uid: string }).uid;
    const record = { kind: 'table', id: ['m', 'gone'], uid, dataMarker: 'data' } as const;
    const restore = async () => {
      await s.registry.store.put(keys.dataMarker(s.project, 'data', ['m', 'gone']), gone.body);
      await s.registry.create(keys.table(s.project, ['m', 'gone']), { ...record, warehouse: s.defaultWarehouse, path: 'reg/back', managedVersioning: true, properties: {}, origin: 'registered', createdAt: new Date().toISOString() });
    };
    const later = interposed(anHourLater(s), 'deleteIfMatch', keys.dataMarker(s.project, 'data', ['m', 'gone']), restore);
    const r = await reconcile(later, { repair: true });
    expect((r.items as unknown as Finding[]).find((i) => i.kind === 'leftover-marker' && i.id?.[1] === 'gone')?.repaired).toMatch(/put back/);
    expect((await marker('gone'))?.body.toString()).toBe(gone.body.toString());
    expect(await withData()).toContain('gone');
  });

  it('rewrites, not removes, a leftover at a name whose new table keeps that marker', async () => {
    // The name was re-taken by a table with data whose own marker put was lost: the leftover
    // (old uid) is the only marker there, and removing it would hide the new table's data.
    const uid = (await readRaw(s, ['m', 'ok']))!.value.uid;
    await s.registry.store.put(keys.dataMarker(s.project, 'data', ['m', 'ok']), JSON.stringify({ kind: 'data-marker', uid: 'old-uid' }));
    const again = await reconcile(anHourLater(s), {});
    expect(found(again.items).filter((x) => x.includes('"ok"'))).toEqual(['leftover-marker data ["m","ok"]', 'missing-marker data ["m","ok"]']);
    // The leftover's own repair (whichever finding a run repairs first) rewrites it for the table.
    expect(await removeLeftoverMarker(s, 'data', ['m', 'ok'])).toMatch(/rewritten for the table now at the name/);
    expect(JSON.parse((await marker('ok'))!.body.toString())).toMatchObject({ uid });
    expect(await withData()).toContain('ok');
  });

  it('works in slices across both marker kinds: the slices together find what one run finds', async () => {
    // A `maybe` leftover too (a declare in an unmanaged warehouse that lost its name, say).
    await s.registry.store.put(keys.dataMarker(s.project, 'maybe', ['m', 'ghost']), JSON.stringify({ kind: 'data-marker', uid: 'u-ghost' }));
    const later = anHourLater(s);
    const whole = found((await reconcile(later, {})).items);
    expect(whole).toContain('leftover-marker maybe ["m","ghost"]');
    const all: string[] = [];
    let cursor: string | undefined;
    let slices = 0;
    do {
      const r = await reconcile(later, { cursor, deadline: 0 });
      all.push(...found(r.items));
      cursor = r.cursor;
      expect(++slices).toBeLessThan(100);
    } while (cursor);
    expect([...new Set(all)].sort()).toEqual(whole);
  });
});
