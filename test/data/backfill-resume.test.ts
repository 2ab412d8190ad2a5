/**
 * A backfill stopped halfway resumes where it stopped (issue #33, docs/jobs.md "Computed columns
 * and backfill"): each fragment's slice is its own commit, so a second run reads only the rows
 * still null and never rewrites the fragments the first run had done. Real LanceDB on disk,
 * through the catalog (lib/catalog/data/backfill.ts `runBackfill`).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { runBackfill } from '../../lib/catalog/data/backfill.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { resolveTable } from '../../lib/catalog/protocols/lookup.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { threeFragmentTable } from './backfill-fixture.js';
import { type ServicesFixture, servicesOver } from '../support/services.js';

let f: ServicesFixture;
let svc: CatalogServices;

beforeAll(async () => {
  f = await servicesOver('fs');
  svc = { ...f.services, data: new LanceDataEngine() };
  await createNamespace(svc, { id: ['bf'], mode: 'create', properties: {} });
});
afterAll(() => f?.cleanup());

it('a backfill stopped after its first fragment resumes with the rest and leaves the done fragment alone', async () => {
  const id = ['bf', 'three_fragments'];
  let t = await threeFragmentTable(svc, id);
  const engine = svc.data!;

  const stop = new Error('stopped by the test after one slice');
  await expect(runBackfill(svc, t, { column: 'twice' }, { onSlice: () => { throw stop; } })).rejects.toBe(stop);
  expect(await engine.countRows(t.location, { predicate: 'twice IS NULL' })).toBe(200);
  t = await resolveTable(svc, id);
  const afterFirst = (await engine.describe(t.location)).version;

  const rest = await runBackfill(svc, t, { column: 'twice' });
  expect(rest).toMatchObject({ path: 'column-only', key: 'id', slices: 2, updated_rows: 200, index_effects: [] });
  expect(await engine.countRows(t.location, { predicate: 'twice IS NULL' })).toBe(0);
  expect(await engine.countRows(t.location, { predicate: 'twice = id * 2' })).toBe(300);
  // Two slices, each one merge and one key-index rebuild: nothing else was committed.
  expect((await engine.describe(t.location)).version).toBe(afterFirst + 4);
  const none = await runBackfill(svc, t, { column: 'twice' });
  expect(none).toMatchObject({ slices: 0, updated_rows: 0 });
}, 60_000);
