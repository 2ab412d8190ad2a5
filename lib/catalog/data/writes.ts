/**
 * The data plane's writes on a catalog table: CreateTable with data, and inserts, merges,
 * updates and deletes, each serialized per table in this process (write-queue.ts). Inserts and
 * merges into a table that is only declared write its first version (declared.ts).
 */
import { decodeIpc, emptyTable, encodeIpcFile } from '../../data/arrow.js';
import { TableBranchNotFoundError, TableColumnNotFoundError } from '../../errors.js';
import type { DeleteInput, InsertMode, MergeInsertInput, MergeInsertResponse, UpdateInput } from '../../ports/data-engine.js';
import { type CatalogServices, dataEngineOf } from '../services.js';
import { type CreateTableInput, createTable } from '../tables/create.js';
import type { ResolvedTable } from '../protocols/lookup.js';
import { branchOf, trackedMerge } from './column-fill.js';
import { writeOrCreate } from './declared.js';
import { withEffects } from './write-effects.js';
import { serializedWrite } from './write-queue.js';

/** CreateTable: the catalog's create protocol, with `ipc` (already decoded once by the caller) as the data. */
export function createTableWithData(svc: CatalogServices, input: CreateTableInput, ipc: Buffer) {
  return createTable(svc, input, (location, m) => dataEngineOf(svc).createTable(location, ipc, m));
}

/** InsertIntoTable: appends (or overwrites) rows; into a declared table, its first version. */
export function insertRows(svc: CatalogServices, t: ResolvedTable, ipc: Buffer, mode: InsertMode, branch: string | undefined) {
  const engine = dataEngineOf(svc);
  return serializedWrite(t.location, () =>
    writeOrCreate(
      svc,
      t,
      () => engine.insert(t.location, ipc, mode, branch === undefined || branch === 'main' ? {} : { branch }),
      async (location) => {
        noBranchYet(branch);
        const { version } = await engine.createTable(location, ipc, 'create');
        return { version, num_inserted_rows: decodeIpc(ipc).numRows };
      },
    ),
  );
}

/**
 * MergeInsertIntoTable: `input` holds the merge flags (`on` at least once). Into rows, a
 * column-only fill when it can be one, answering its cost and index effects (column-fill.ts).
 */
export function mergeRows(svc: CatalogServices, t: ResolvedTable, ipc: Buffer, input: MergeInsertInput) {
  return serializedWrite(t.location, () =>
    writeOrCreate(
      svc,
      t,
      () => trackedMerge(svc, t, ipc, input),
      (location) => mergeIntoDeclared(svc, location, ipc, input),
    ),
  );
}

/** UpdateTable: whole rows rewritten (LanceDB 0.31), so the answer names the indices it cost (write-effects.ts). */
export function updateRows(svc: CatalogServices, t: ResolvedTable, input: UpdateInput) {
  const engine = dataEngineOf(svc);
  return serializedWrite(t.location, () => withEffects(engine, t, branchOf(input), () => engine.update(t.location, input)));
}

export function deleteRows(svc: CatalogServices, t: ResolvedTable, input: DeleteInput) {
  const engine = dataEngineOf(svc);
  return serializedWrite(t.location, () => withEffects(engine, t, branchOf(input), () => engine.delete(t.location, input)));
}

/**
 * A merge into a declared table: there are no target rows, so every source row is "not
 * matched": inserted with when_not_matched_insert_all, otherwise the table is created with the
 * source's schema and no rows.
 */
async function mergeIntoDeclared(
  svc: CatalogServices,
  location: string,
  bytes: Buffer,
  input: MergeInsertInput,
): Promise<MergeInsertResponse> {
  noBranchYet(input.branch);
  const data = decodeIpc(bytes);
  const missing = input.on.filter((c) => !data.schema.fields.some((f) => f.name === c));
  if (missing.length > 0) throw new TableColumnNotFoundError(`merge key column(s) not in the data: ${missing.join(', ')}`);
  // That the merge has a clause at all was checked when it was decoded (lib/operations/data/writes.ts).
  const insertAll = input.whenNotMatchedInsertAll;
  const { version } = await dataEngineOf(svc).createTable(location, insertAll ? bytes : encodeIpcFile(emptyTable(data.schema)), 'create');
  return { version, num_updated_rows: 0, num_inserted_rows: insertAll ? data.numRows : 0, num_deleted_rows: 0 };
}

/** A declared table has no dataset, so no branches: only a write to main can create it. */
function noBranchYet(branch: string | undefined): void {
  if (branch && branch !== 'main') {
    throw new TableBranchNotFoundError(`branch "${branch}" not found: the table is declared but has no data yet`);
  }
}
