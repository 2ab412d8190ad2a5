/**
 * Reconcile finds each kind of crash leftover, made by driving the catalog's own doors and
 * interrupting them with direct registry writes, in every project of the registry; writes
 * nothing unless asked to repair; repairs through each door's own path; resumes from a cursor.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { readNamespace } from '../../lib/catalog/namespaces/record.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { markPurging } from '../../lib/catalog/protocols/claims.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readRaw } from '../../lib/catalog/protocols/move.js';
import { markMoving } from '../support/renames.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { jobContext } from '../../lib/queue/context.js';
import { claimNext, enqueue } from '../../lib/queue/jobs.js';
import { reconcileWith, type Finding } from '../../lib/maintenance/reconcile.js';
import { keys } from '../../lib/registry/keys.js';
import { ensureDefaults } from '../../lib/registry/layout.js';
import type { NamespaceRecord, TableRecord } from '../../lib/registry/records.js';
import { withWriteCounter } from '../support/counting.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

const HOUR = 3_600_000;
const reconcile = reconcileWith({ stuckAfterMs: 15 * 60_000 });

/** The same registry seen an hour later: every leftover made now is past the bound. */
const anHourLater = (s: CatalogServices): CatalogServices => ({ ...s, now: () => new Date(Date.now() + HOUR) });

const kinds = (items: readonly Readonly<Record<string, unknown>>[]) =>
  items.map((i) => `${i.kind} ${i.project} ${JSON.stringify(i.id ?? i.job)}`).sort();

describe('reconcile', () => {
  let f: ServicesFixture;
  let s: CatalogServices;
  let other: CatalogServices;
  let jobId: string;

  beforeEach(async () => {
    f = await servicesOver('fs');
    s = f.services;
    // A second project with its own warehouse: reconcile covers the registry, not one project.
    await ensureDefaults(s.registry, {
      project: 'other',
      warehouse: 'w2',
      storage: { kind: 'file', path: '/w/other/w2' },
      managedVersioning: true,
      trashGraceDays: 0,
    });
    other = { ...s, project: 'other', defaultWarehouse: 'w2' };
    const declare = (svc: CatalogServices, id: string[]) => declareTable(svc, { id, properties: {}, identity: {} });
    for (const ns of [['a'], ['b'], ['c'], ['d'], ['d', 'e']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
    await createNamespace(other, { id: ['x'], mode: 'create', properties: {} });

    // Healthy: a declared table without data yet, a registered table with its dataset.
    await declare(s, ['a', 'fine']);
    const store = await warehouseStore(s);
    await writeFakeDataset(store, 'reg/ok');
    await registerTable(s, { id: ['a', 'reg_ok'], location: 'reg/ok', mode: 'create', properties: {} });

    // A registered table whose dataset vanished.
    await writeFakeDataset(store, 'reg/gone');
    await registerTable(s, { id: ['a', 'reg_gone'], location: 'reg/gone', mode: 'create', properties: {} });
    await store.delete('reg/gone/_versions/18446744073709551614.manifest');

    // A drop that died after removing the record: its claim is left (in both projects).
    for (const [svc, id] of [[s, ['a', 'dropped']], [other, ['x', 'dropped']]] as const) {
      await declare(svc, [...id]);
      const rec = (await readRaw(svc, id))!;
      await svc.registry.remove(keys.table(svc.project, id), rec.etag);
    }

    // A drop that died after marking its claim purging.
    await declare(s, ['a', 'purged']);
    const purged = (await readRaw(s, ['a', 'purged']))!;
    await s.registry.remove(keys.table(s.project, ['a', 'purged']), purged.etag);
    await markPurging(s, purged.value);

    // A rename that died after its first step.
    await declare(s, ['a', 'mv']);
    await markMoving(s, ['a', 'mv'], (await readRaw(s, ['a', 'mv']))!, ['b', 'mv2']);

    // A namespace drop that died after marking: empty 'c'.
    const c = (await readNamespace(s, ['c']))!;
    await s.registry.replace<NamespaceRecord>(keys.namespace(s.project, ['c']), { ...c.value, state: 'dropping' }, c.etag);

    // A cascade that died after removing the parent of 'd'.'e'.
    await s.registry.remove(keys.namespace(s.project, ['d']), (await readNamespace(s, ['d']))!.etag);

    // A job whose worker died holding it.
    const jobs = jobContext(s);
    jobId = (await enqueue(jobs, { type: 'build', params: {} })).id;
    expect((await claimNext(jobs, 'crashed-worker', ['build'])).claim?.job.id).toBe(jobId);
  });
  afterEach(() => f.cleanup());

  const EXPECTED = [
    'expired-lease default undefined',
    'missing-dataset default ["a","reg_gone"]',
    'parent-missing default ["d","e"]',
    'stale-claim default ["a","dropped"]',
    'stale-claim other ["x","dropped"]',
    'stuck-dropping default ["c"]',
    'stuck-move default ["a","mv"]',
    'stuck-purging default ["a","purged"]',
  ];

  it('reports every kind of leftover in every project, and writes nothing', async () => {
    const counter = { writes: [] as string[] };
    const r = await reconcile(withWriteCounter(anHourLater(s), counter), {});
    expect(r.complete).toBe(true);
    expect(kinds(r.items).map((k) => k.replace(`"${jobId}"`, 'undefined'))).toEqual(EXPECTED);
    expect(r.items.find((i) => i.kind === 'expired-lease')).toMatchObject({ job: jobId });
    expect(r.summary).toMatchObject({ projects: 2, warehouses: 2, declaredWithoutData: 1 });
    expect(counter.writes).toEqual([]);
    expect(r.problems).toEqual([]);
  });

  it('does not call a protocol in flight stuck: young leftovers of the transitional kinds are not reported', async () => {
    const r = await reconcile(s, {});
    // Still reported: a missing parent, a missing dataset and an expired lease are not states in flight.
    const found = kinds(r.items);
    expect(found.filter((k) => /stuck|stale/.test(k))).toEqual([]);
    expect(found.some((k) => k.startsWith('parent-missing'))).toBe(true);
  });

  it('repairs through each door and reports what changed; the next run finds only what has no repair path', async () => {
    const later = anHourLater(s);
    const r = await reconcile(later, { repair: true });
    const repaired = Object.fromEntries((r.items as unknown as Finding[]).map((i) => [`${i.kind} ${i.project}`, i.repaired]));
    expect(repaired['stale-claim default']).toMatch(/released/);
    expect(repaired['stale-claim other']).toMatch(/released/);
    expect(repaired['stuck-move default']).toMatch(/rename settled/);
    expect(repaired['stuck-dropping default']).toMatch(/drop finished/);
    expect(repaired['parent-missing default']).toMatch(/drop finished/);
    expect(repaired['stuck-purging default']).toMatch(/purge_table job \w+ queued/);
    expect(repaired['missing-dataset default']).toMatch(/no repair path/);
    // The rename was finished by its own protocol: exactly one name holds the table.
    const [src, dst] = [await readRaw(s, ['a', 'mv']), await readRaw(s, ['b', 'mv2'])];
    expect([src, dst].filter(Boolean).map((x) => (x!.value as TableRecord).state ?? 'active')).toEqual(['active']);
    expect(await readNamespace(s, ['c'])).toBeUndefined();
    expect(await readNamespace(s, ['d', 'e'])).toBeUndefined();

    const again = await reconcile(later, {});
    expect(kinds(again.items).map((k) => k.replace(`"${jobId}"`, 'undefined'))).toEqual([
      'expired-lease default undefined',
      'missing-dataset default ["a","reg_gone"]',
      // The purge is queued, not run: its claim stays purging until the jobs worker finishes it.
      'stuck-purging default ["a","purged"]',
    ]);
    // ... and a second repair does not queue a second purge.
    const twice = await reconcile(later, { repair: true });
    expect(twice.items.find((i) => i.kind === 'stuck-purging')).toMatchObject({ repaired: expect.stringMatching(/already queued/) });
  });

  it('works in slices: a run past its deadline returns a cursor, and the slices together find everything', async () => {
    const later = anHourLater(s);
    const all: string[] = [];
    let cursor: string | undefined;
    let slices = 0;
    do {
      // A deadline already passed: each slice does one unit of work, then stops.
      const r = await reconcile(later, { cursor, deadline: 0 });
      all.push(...kinds(r.items));
      cursor = r.cursor;
      slices++;
      expect(slices).toBeLessThan(100);
    } while (cursor);
    expect(slices).toBeGreaterThan(3);
    expect([...new Set(all)].sort().map((k) => k.replace(`"${jobId}"`, 'undefined'))).toEqual(EXPECTED);
  });

  it('reports an unreadable record as a problem and the run as incomplete', async () => {
    await s.registry.store.put(keys.table(s.project, ['a', 'broken']), '{not json');
    const r = await reconcile(s, {});
    expect(r.complete).toBe(false);
    expect(r.problems.join('\n')).toMatch(/could not be read/);
  });
});
