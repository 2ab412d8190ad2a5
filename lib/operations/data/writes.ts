/**
 * Writes: CreateTable, InsertIntoTable, MergeInsertIntoTable (Arrow IPC bodies, parameters in
 * the query) and UpdateTable, DeleteFromTable, RestoreTable (JSON bodies).
 */
import { mode } from '../../catalog/params.js';
import type { CatalogServices } from '../../catalog/services.js';
import { createTable } from '../../catalog/tables/create.js';
import { decodeIpc, emptyTable, encodeIpcFile } from '../../data/arrow.js';
import { InvalidInputError, TableBranchNotFoundError, TableColumnNotFoundError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, defined, engine, queryBool, queryJsonMap, queryString, table } from './context.js';
import { writeOrCreate } from './declared.js';
import { serializedWrite } from './write-queue.js';

export const writeHandlers: HandlersOf<'lib/operations/data/writes.ts', CatalogServices> = {
  CreateTable: async (req, svc) => {
    const createMode = mode(queryString(req.query, 'mode'), 'mode', ['create', 'exist_ok', 'overwrite'] as const, 'create');
    const properties = queryJsonMap(req.query, 'properties') ?? {};
    // Validated but not applied: the server writes with its own storage access. Honouring a
    // caller's endpoint or credential overrides would let a request point the server's
    // credentials at a store of the caller's choosing.
    queryJsonMap(req.query, 'storage_options');
    // Bad Arrow is a shape error: refuse it before anything is written (brief rule 1).
    decodeIpc(req.bytes);
    return createTable(svc, { id: req.id, mode: createMode, properties, identity: req.identity }, (location, m) =>
      engine().createTable(location, req.bytes, m),
    );
  },

  InsertIntoTable: async (req, svc) => {
    const insertMode = mode(queryString(req.query, 'mode'), 'mode', ['append', 'overwrite'] as const, 'append');
    const branch = queryString(req.query, 'branch');
    const t = await table(req, svc);
    return serializedWrite(t.location, () => writeOrCreate(
      svc,
      t,
      () => engine().insert(t.location, req.bytes, insertMode, { branch }),
      async (location) => {
        noBranchYet(branch);
        const { version } = await engine().createTable(location, req.bytes, 'create');
        return { version, num_inserted_rows: decodeIpc(req.bytes).numRows };
      },
    ));
  },

  MergeInsertIntoTable: async (req, svc) => {
    const request = mergeParams(req);
    const t = await table(req, svc);
    return serializedWrite(t.location, () =>
      writeOrCreate(
        svc,
        t,
        () => engine().mergeInsert(t.location, req.bytes, request),
        (location) => mergeIntoDeclared(location, req.bytes, request),
      ),
    );
  },

  UpdateTable: async (req, svc) => {
    const { location } = await table(req, svc);
    return serializedWrite(location, () => engine().update(location, body(req)));
  },

  DeleteFromTable: async (req, svc) => {
    const { location } = await table(req, svc);
    return serializedWrite(location, () => engine().delete(location, body(req)));
  },

  RestoreTable: async (req, svc) => engine().restore((await table(req, svc)).location, body(req)),
};

/** The merge flags travel in the query; `on` is repeated once per key column. */
function mergeParams(req: OperationRequest): Record<string, unknown> {
  const q = req.query;
  const on = q.getAll('on');
  if (on.length === 0 || on.some((c) => c.trim() === '')) {
    throw new InvalidInputError('merge_insert needs the query parameter "on", once per key column');
  }
  return defined({
    on,
    when_matched_update_all: queryBool(q, 'when_matched_update_all'),
    when_matched_update_all_filt: queryString(q, 'when_matched_update_all_filt'),
    when_not_matched_insert_all: queryBool(q, 'when_not_matched_insert_all'),
    when_not_matched_by_source_delete: queryBool(q, 'when_not_matched_by_source_delete'),
    when_not_matched_by_source_delete_filt: queryString(q, 'when_not_matched_by_source_delete_filt'),
    timeout: queryString(q, 'timeout'),
    use_index: queryBool(q, 'use_index'),
    branch: queryString(q, 'branch'),
  });
}

/**
 * A merge into a declared table: there are no target rows, so every source row is "not
 * matched": inserted with when_not_matched_insert_all, otherwise the table is created with the
 * source's schema and no rows.
 */
async function mergeIntoDeclared(location: string, bytes: Buffer, request: Record<string, unknown>) {
  noBranchYet(request.branch as string | undefined);
  const data = decodeIpc(bytes);
  const on = request.on as string[];
  const missing = on.filter((c) => !data.schema.fields.some((f) => f.name === c));
  if (missing.length > 0) throw new TableColumnNotFoundError(`merge key column(s) not in the data: ${missing.join(', ')}`);
  // The same rule the engine applies to a merge into existing rows (a filter implies its clause).
  const clauses = ['when_matched_update_all', 'when_not_matched_insert_all', 'when_not_matched_by_source_delete'];
  const filters = ['when_matched_update_all_filt', 'when_not_matched_by_source_delete_filt'];
  if (!clauses.some((c) => request[c] === true) && !filters.some((f) => request[f])) {
    throw new InvalidInputError(`merge insert needs at least one of ${clauses.join(', ')}`);
  }
  const insertAll = request.when_not_matched_insert_all === true;
  const { version } = await engine().createTable(location, insertAll ? bytes : encodeIpcFile(emptyTable(data.schema)), 'create');
  return { version, num_updated_rows: 0, num_inserted_rows: insertAll ? data.numRows : 0, num_deleted_rows: 0 };
}

/** A declared table has no dataset, so no branches: only a write to main can create it. */
function noBranchYet(branch: string | undefined): void {
  if (branch && branch !== 'main') {
    throw new TableBranchNotFoundError(`branch "${branch}" not found: the table is declared but has no data yet`);
  }
}
