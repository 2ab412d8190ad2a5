/**
 * Writes: CreateTable, InsertIntoTable, MergeInsertIntoTable (Arrow IPC bodies, parameters in
 * the query) and UpdateTable, DeleteFromTable, RestoreTable (JSON bodies). Each decodes its
 * request and calls lib/catalog/data/writes.ts, which serializes the writes per table and
 * writes a declared table's first version.
 */
import { mode } from '../../catalog/params.js';
import type { CatalogServices } from '../../catalog/services.js';
import { createTableWithData, deleteRows, insertRows, mergeRows, updateRows } from '../../catalog/data/writes.js';
import { decodeIpc } from '../../data/arrow.js';
import { InvalidInputError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, defined, engine, queryBool, queryJsonMap, queryString, table } from './context.js';

export const writeHandlers: HandlersOf<'lib/operations/data/writes.ts', CatalogServices> = {
  CreateTable: async (req, svc) => {
    const createMode = mode(queryString(req.query, 'mode'), 'mode', ['create', 'exist_ok', 'overwrite'] as const, 'create');
    const properties = queryJsonMap(req.query, 'properties') ?? {};
    // Validated but not applied: the server writes with its own storage access. Honouring a
    // caller's endpoint or credential overrides would let a request point the server's
    // credentials at a store of the caller's choosing.
    queryJsonMap(req.query, 'storage_options');
    // Bad Arrow is a shape error: refuse it before anything is written (docs/rules.md rule 1).
    decodeIpc(req.bytes);
    return createTableWithData(svc, { id: req.id, mode: createMode, properties, identity: req.identity }, req.bytes);
  },

  InsertIntoTable: async (req, svc) => {
    const insertMode = mode(queryString(req.query, 'mode'), 'mode', ['append', 'overwrite'] as const, 'append');
    const branch = queryString(req.query, 'branch');
    return insertRows(svc, await table(req, svc), req.bytes, insertMode, branch);
  },

  MergeInsertIntoTable: async (req, svc) => {
    const request = mergeParams(req);
    return mergeRows(svc, await table(req, svc), req.bytes, request);
  },

  UpdateTable: async (req, svc) => updateRows(svc, await table(req, svc), body(req)),

  DeleteFromTable: async (req, svc) => deleteRows(svc, await table(req, svc), body(req)),

  RestoreTable: async (req, svc) => engine(svc).restore((await table(req, svc)).location, body(req)),
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
