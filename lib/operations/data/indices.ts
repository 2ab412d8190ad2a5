/**
 * Indices: CreateTableIndex, CreateTableScalarIndex, ListTableIndices, DescribeTableIndexStats,
 * DropTableIndex. An index request is decoded by lib/data/index-request.ts (shared with the index
 * builder and the `create_index` job); a build runs in the request or, when too large for one, is
 * queued: lib/catalog/data/indices.ts decides (docs/index-builds.md).
 */
import { createIndex, dropIndex } from '../../catalog/data/indices.js';
import type { CatalogServices } from '../../catalog/services.js';
import { readIndexRequest } from '../../data/index-request.js';
import { reqString } from '../../data/validate.js';
import { InvalidInputError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { engine, queryString, table } from './context.js';
import { paging, readSelection, writeTarget } from './inputs.js';

export const indexHandlers: HandlersOf<'lib/operations/data/indices.ts', CatalogServices> = {
  CreateTableIndex: async (req, svc) => {
    const t = await table(req, svc);
    return createIndex(svc, t, readIndexRequest(req.body));
  },

  // Same request model; scalar types never reach the vector guard.
  CreateTableScalarIndex: async (req, svc) => {
    const t = await table(req, svc);
    return createIndex(svc, t, readIndexRequest(req.body));
  },

  ListTableIndices: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).listIndices(t.location, { ...readSelection(req.body), ...paging(req.body) });
  },

  DescribeTableIndexStats: async (req, svc) => {
    const t = await table(req, svc);
    const indexName = reqString(pathIndexName(req), 'index_name');
    return engine(svc).indexStats(t.location, { indexName, ...readSelection(req.body) });
  },

  DropTableIndex: async (req, svc) => {
    const branch = queryString(req.query, 'branch');
    const name = pathIndexName(req);
    const t = await table(req, svc);
    const indexName = reqString(name, 'index_name');
    return dropIndex(svc, t, { indexName, ...writeTarget(branch === undefined ? req.body : { ...req.body, branch }) });
  },
};

/** `{index_name}` comes from the path; a body naming a different index is a contradiction. */
function pathIndexName(req: OperationRequest): string {
  const fromPath = req.indexName ?? '';
  const fromBody = req.body.index_name;
  if (fromBody !== undefined && fromBody !== null && fromBody !== fromPath) {
    throw new InvalidInputError(`body index_name ${JSON.stringify(fromBody)} does not match the path's ${JSON.stringify(fromPath)}`);
  }
  if (fromPath === '') throw new InvalidInputError('the index name in the path is empty');
  return fromPath;
}
