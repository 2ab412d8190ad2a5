/**
 * The backfill tests' table (test/data/backfill-resume.test.ts, backfill-escalation.test.ts):
 * three appends of 100 rows, so three fragments, and a computed column `twice` (`id * 2`) added
 * empty, so a backfill has three fragment slices to write. Returns the table as resolved after
 * the column was added.
 */
import { createTableWithData, insertRows } from '../../lib/catalog/data/writes.js';
import { resolveTable } from '../../lib/catalog/protocols/lookup.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { ipcRows } from './fixtures.js';

export const FRAGMENT_ROWS = 100;

export async function threeFragmentTable(svc: CatalogServices, id: string[]): Promise<Awaited<ReturnType<typeof resolveTable>>> {
  await createTableWithData(svc, { id, mode: 'create', properties: {}, identity: {} }, ipcRows(FRAGMENT_ROWS));
  const t = await resolveTable(svc, id);
  await insertRows(svc, t, ipcRows(FRAGMENT_ROWS, FRAGMENT_ROWS), 'append', undefined);
  await insertRows(svc, t, ipcRows(FRAGMENT_ROWS, 2 * FRAGMENT_ROWS), 'append', undefined);
  const engine = svc.data;
  if (!engine) throw new Error('the backfill fixture needs a data engine');
  await engine.addColumns(t.location, { columns: [{ kind: 'computed', name: 'twice', expression: 'id * 2' }] });
  return resolveTable(svc, id);
}
