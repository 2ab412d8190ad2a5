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
import { optRefName } from '../../data/names.js';
import { optSql, reqSql } from '../../data/sql-bounds.js';
import { type Json, optBool, parseDuration, reqInt, reqString } from '../../data/validate.js';
import { InvalidInputError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import type { DeleteInput, MergeInsertInput, RestoreInput, UpdateInput } from '../../ports/data-inputs.js';
import { engine, queryBool, queryJsonMap, queryString, table } from './context.js';
import { defined, writeTarget } from './inputs.js';

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
    const given = queryString(req.query, 'branch');
    const t = await table(req, svc);
    const branch = optRefName(given, 'branch');
    return insertRows(svc, t, req.bytes, insertMode, branch);
  },

  MergeInsertIntoTable: async (req, svc) => {
    const params = mergeParams(req);
    const t = await table(req, svc);
    return mergeRows(svc, t, req.bytes, mergeInput(params));
  },

  UpdateTable: async (req, svc) => {
    const t = await table(req, svc);
    return updateRows(svc, t, updateInput(req.body));
  },

  DeleteFromTable: async (req, svc) => {
    const t = await table(req, svc);
    return deleteRows(svc, t, deleteInput(req.body));
  },

  RestoreTable: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).restore(t.location, restoreInput(req.body));
  },
};

/** The merge flags travel in the query; `on` is repeated once per key column. */
function mergeParams(req: OperationRequest): Json {
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
 * The merge flags, decoded: a filter on its own means its clause (a client that sends one wants
 * the conditional action), and at least one clause is needed.
 */
export function mergeInput(body: Json): MergeInsertInput {
  const branch = optRefName(body.branch, 'branch');
  const on = (body.on as unknown[]).map((v, i) => reqString(v, `on[${i}]`));
  const updateFilter = optSql(body.when_matched_update_all_filt, 'when_matched_update_all_filt');
  const deleteFilter = optSql(body.when_not_matched_by_source_delete_filt, 'when_not_matched_by_source_delete_filt');
  const update = optBool(body.when_matched_update_all, 'when_matched_update_all') || updateFilter !== undefined;
  const insertAll = optBool(body.when_not_matched_insert_all, 'when_not_matched_insert_all') ?? false;
  const deleteBySource = optBool(body.when_not_matched_by_source_delete, 'when_not_matched_by_source_delete') || deleteFilter !== undefined;
  if (!update && !insertAll && !deleteBySource) {
    throw new InvalidInputError(
      'merge insert needs at least one of when_matched_update_all, when_not_matched_insert_all, when_not_matched_by_source_delete',
    );
  }
  const useIndex = optBool(body.use_index, 'use_index');
  const timeoutMs = parseDuration(body.timeout, 'timeout');
  return defined({
    branch: branch === 'main' ? undefined : branch,
    on,
    whenMatchedUpdateAll: update,
    whenMatchedUpdateAllFilt: updateFilter,
    whenNotMatchedInsertAll: insertAll,
    whenNotMatchedBySourceDelete: deleteBySource,
    whenNotMatchedBySourceDeleteFilt: deleteFilter,
    useIndex,
    timeoutMs,
  });
}

/** `updates`: [column, SQL expression] pairs, each column once; `predicate` picks the rows. */
export function updateInput(body: Json): UpdateInput {
  const target = writeTarget(body);
  const updates = body.updates;
  if (!Array.isArray(updates) || updates.length === 0) {
    throw new InvalidInputError('"updates" must be a non-empty array of [column, expression] pairs');
  }
  const valuesSql = new Map<string, string>();
  for (const [i, pair] of updates.entries()) {
    if (!Array.isArray(pair) || pair.length !== 2) {
      throw new InvalidInputError(`"updates[${i}]" must be a [column, expression] pair`);
    }
    const column = reqString(pair[0], `updates[${i}][0]`);
    if (valuesSql.has(column)) throw new InvalidInputError(`column "${column}" is updated twice`);
    valuesSql.set(column, reqSql(pair[1], `updates[${i}][1]`));
  }
  return { ...target, updates: valuesSql, ...defined({ predicate: optSql(body.predicate, 'predicate') }) };
}

export function deleteInput(body: Json): DeleteInput {
  const target = writeTarget(body);
  return { ...target, predicate: reqSql(body.predicate, 'predicate') };
}

export function restoreInput(body: Json): RestoreInput {
  const version = reqInt(body.version, 'version');
  return { ...writeTarget(body), version };
}
