/**
 * The DataEngine (lib/ports/data-engine.ts) as the data-plane handlers drive it: each method takes
 * the spec's request body, decodes it with the handlers' own decoders (lib/operations/data/*,
 * lib/data/index-request.ts) and calls the engine with the typed input. Tests written against
 * request bodies thereby exercise decoding and engine together, exactly as a request does,
 * without an HTTP server (issue 25 item 2: the engine takes typed inputs).
 */
import { readIndexRequest } from '../../lib/data/index-request.js';
import { optSql } from '../../lib/data/sql-bounds.js';
import { asObject, type Json, optBool, optEnum, optInt, reqString } from '../../lib/data/validate.js';
import type { BackfillRequest, DataEngine } from '../../lib/ports/data-engine.js';
import { branchOf, paging, readSelection, writeTarget } from '../../lib/operations/data/inputs.js';
import { explainInput, queryInput } from '../../lib/operations/data/query-input.js';
import { branchInput, newBranchInput, tagInput, tagVersionInput } from '../../lib/operations/data/ref-input.js';
import { addColumnsInput, alterColumnsInput, dropColumnsInput, fieldMetadataInput } from '../../lib/operations/data/schema-input.js';
import { deleteInput, mergeInput, restoreInput, updateInput } from '../../lib/operations/data/writes.js';

const json = (request: unknown): Json => asObject(request);

export function wireEngine(engine: DataEngine) {
  return asynchronous({
    engine,
    createTable: (location: string, ipc: Buffer, mode?: string) =>
      engine.createTable(location, ipc, optEnum(mode, 'mode', ['create', 'exist_ok', 'overwrite'] as const) ?? 'create'),
    insert: (location: string, ipc: Buffer, mode?: string, options: { branch?: string } = {}) =>
      engine.insert(location, ipc, optEnum(mode, 'mode', ['append', 'overwrite'] as const) ?? 'append', writeTarget(options)),
    mergeInsert: (location: string, ipc: Buffer, request: object) => {
      const body = json(request);
      const on = body.on;
      return engine.mergeInsert(location, ipc, mergeInput({ ...body, on: Array.isArray(on) ? on : [on] }));
    },
    update: (location: string, request: object) => engine.update(location, updateInput(json(request))),
    delete: (location: string, request: object) => engine.delete(location, deleteInput(json(request))),
    restore: (location: string, request: object) => engine.restore(location, restoreInput(json(request))),
    query: (location: string, request: object, options?: { maxBytes?: number }) => engine.query(location, queryInput(json(request)), options),
    explainPlan: (location: string, request: object) => engine.explainPlan(location, explainInput(json(request))),
    analyzePlan: (location: string, request: object) => engine.analyzePlan(location, queryInput(json(request))),
    countRows: (location: string, request: object = {}) => {
      const predicate = optSql(json(request).predicate, 'predicate');
      return engine.countRows(location, { ...readSelection(json(request)), ...(predicate === undefined ? {} : { predicate }) });
    },
    stats: (location: string, request: object = {}) => engine.stats(location, readSelection(json(request))),
    describe: (location: string, request: object = {}) => engine.describe(location, readSelection(json(request))),
    listVersions: (location: string, request: object = {}) => {
      const body = json(request);
      const descending = optBool(body.descending, 'descending') ?? false;
      const limit = optInt(body.limit, 'limit');
      const token = body.page_token == null || body.page_token === '' ? undefined : String(body.page_token);
      const after = token === undefined ? undefined : optInt(Number(token), 'page_token');
      const branch = branchOf(body);
      return engine.listVersions(location, { descending, ...(limit === undefined ? {} : { limit }), ...(after === undefined ? {} : { after }), ...(branch ? { branch } : {}) });
    },
    createIndex: (location: string, request: object) => engine.createIndex(location, readIndexRequest(json(request))),
    checkIndex: (location: string, request: object) => engine.checkIndex(location, readIndexRequest(json(request))),
    listIndices: (location: string, request: object = {}) => engine.listIndices(location, { ...readSelection(json(request)), ...paging(json(request)) }),
    indexStats: (location: string, request: object) => {
      const indexName = reqString(json(request).index_name, 'index_name');
      return engine.indexStats(location, { indexName, ...readSelection(json(request)) });
    },
    dropIndex: (location: string, request: object) => {
      const indexName = reqString(json(request).index_name, 'index_name');
      return engine.dropIndex(location, { indexName, ...writeTarget(json(request)) });
    },
    listTags: (location: string, request: object = {}) => engine.listTags(location, paging(json(request))),
    getTagVersion: (location: string, request: object) => engine.getTagVersion(location, tagInput(json(request))),
    createTag: (location: string, request: object) => engine.createTag(location, tagVersionInput(json(request))),
    updateTag: (location: string, request: object) => engine.updateTag(location, tagVersionInput(json(request))),
    deleteTag: (location: string, request: object) => engine.deleteTag(location, tagInput(json(request))),
    listBranches: (location: string, request: object = {}) => engine.listBranches(location, paging(json(request))),
    createBranch: (location: string, request: object) => engine.createBranch(location, newBranchInput(json(request))),
    deleteBranch: (location: string, request: object) => engine.deleteBranch(location, branchInput(json(request))),
    addColumns: (location: string, request: object) => engine.addColumns(location, addColumnsInput(json(request))),
    alterColumns: (location: string, request: object) => engine.alterColumns(location, alterColumnsInput(json(request))),
    dropColumns: (location: string, request: object) => engine.dropColumns(location, dropColumnsInput(json(request))),
    updateFieldMetadata: (location: string, request: object) => engine.updateFieldMetadata(location, fieldMetadataInput(json(request))),
    checkBackfill: (location: string, request: BackfillRequest) => engine.checkBackfill(location, request),
    backfill: (location: string, request: BackfillRequest) => engine.backfill(location, request),
  });
}

/** Every method answers a promise, as the engine's do: a refusal while decoding rejects, never throws. */
function asynchronous<T extends Record<string, unknown>>(methods: T): T {
  return Object.fromEntries(
    Object.entries(methods).map(([k, v]) => [k, typeof v === 'function' ? async (...args: unknown[]) => v(...args) : v]),
  ) as T;
}
