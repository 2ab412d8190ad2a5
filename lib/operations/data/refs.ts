/** Tags and branches. The two list operations take paging from the query (the client's way) or the body. */
import type { CatalogServices } from '../../catalog/services.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, defined, engine, queryInt, queryString, table } from './context.js';

export const refHandlers: HandlersOf<'lib/operations/data/refs.ts', CatalogServices> = {
  ListTableTags: async (req, svc) => engine(svc).listTags((await table(req, svc)).location, paged(req)),
  GetTableTagVersion: async (req, svc) => engine(svc).getTagVersion((await table(req, svc)).location, body(req)),
  CreateTableTag: async (req, svc) => engine(svc).createTag((await table(req, svc)).location, body(req)),
  UpdateTableTag: async (req, svc) => engine(svc).updateTag((await table(req, svc)).location, body(req)),
  DeleteTableTag: async (req, svc) => engine(svc).deleteTag((await table(req, svc)).location, body(req)),

  ListTableBranches: async (req, svc) => engine(svc).listBranches((await table(req, svc)).location, paged(req)),
  CreateTableBranch: async (req, svc) => engine(svc).createBranch((await table(req, svc)).location, body(req)),
  DeleteTableBranch: async (req, svc) => engine(svc).deleteBranch((await table(req, svc)).location, body(req)),
};

/**
 * `page_token` and `limit` from the query fill in what the body does not give. A negative
 * `limit` means "everything", as in the catalog's own listings.
 */
function paged(req: OperationRequest): Record<string, unknown> {
  const limit = queryInt(req.query, 'limit', Number.MIN_SAFE_INTEGER);
  const fromQuery = defined({
    page_token: queryString(req.query, 'page_token') || undefined,
    limit: limit === undefined || limit < 0 ? undefined : limit,
  });
  const fromBody = body(req);
  if (typeof fromBody.limit === 'number' && fromBody.limit < 0) delete fromBody.limit;
  return { ...fromQuery, ...fromBody };
}
