/**
 * Indices: CreateTableIndex, CreateTableScalarIndex, ListTableIndices, DescribeTableIndexStats,
 * DropTableIndex. A build runs in the request or, when too large for one, is queued:
 * lib/catalog/data/indices.ts decides (docs/index-builds.md).
 */
import { createIndex } from '../../catalog/data/indices.js';
import type { CatalogServices } from '../../catalog/services.js';
import { InvalidInputError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, engine, queryString, table } from './context.js';

export const indexHandlers: HandlersOf<'lib/operations/data/indices.ts', CatalogServices> = {
  CreateTableIndex: async (req, svc) => createIndex(svc, await table(req, svc), body(req)),

  // Same request model; scalar types never reach the vector guard.
  CreateTableScalarIndex: async (req, svc) => createIndex(svc, await table(req, svc), body(req)),

  ListTableIndices: async (req, svc) => engine(svc).listIndices((await table(req, svc)).location, body(req)),

  DescribeTableIndexStats: async (req, svc) =>
    engine(svc).indexStats((await table(req, svc)).location, body(req, { index_name: indexName(req) })),

  DropTableIndex: async (req, svc) => {
    const branch = queryString(req.query, 'branch');
    const extra = branch === undefined ? { index_name: indexName(req) } : { index_name: indexName(req), branch };
    return engine(svc).dropIndex((await table(req, svc)).location, body(req, extra));
  },
};

/** `{index_name}` comes from the path; a body naming a different index is a contradiction. */
function indexName(req: OperationRequest): string {
  const fromPath = req.indexName ?? '';
  const fromBody = req.body.index_name;
  if (fromBody !== undefined && fromBody !== null && fromBody !== fromPath) {
    throw new InvalidInputError(`body index_name ${JSON.stringify(fromBody)} does not match the path's ${JSON.stringify(fromPath)}`);
  }
  if (fromPath === '') throw new InvalidInputError('the index name in the path is empty');
  return fromPath;
}
