/** Tags and branches. The two list operations take paging from the query (the client's way) or the body. */
import type { CatalogServices } from '../../catalog/services.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import type { Paging } from '../../ports/data-inputs.js';
import { defined, engine, queryInt, queryString, table } from './context.js';
import { paging } from './inputs.js';
import { branchInput, newBranchInput, tagInput, tagVersionInput } from './ref-input.js';

export const refHandlers: HandlersOf<'lib/operations/data/refs.ts', CatalogServices> = {
  ListTableTags: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).listTags(t.location, paged(req));
  },
  GetTableTagVersion: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).getTagVersion(t.location, tagInput(req.body));
  },
  CreateTableTag: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).createTag(t.location, tagVersionInput(req.body));
  },
  UpdateTableTag: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).updateTag(t.location, tagVersionInput(req.body));
  },
  DeleteTableTag: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).deleteTag(t.location, tagInput(req.body));
  },

  ListTableBranches: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).listBranches(t.location, paged(req));
  },
  CreateTableBranch: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).createBranch(t.location, newBranchInput(req.body));
  },
  DeleteTableBranch: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).deleteBranch(t.location, branchInput(req.body));
  },
};

/**
 * `page_token` and `limit` from the query fill in what the body does not give. A negative
 * `limit` means "everything", as in the catalog's own listings.
 */
function paged(req: OperationRequest): Paging {
  const limit = queryInt(req.query, 'limit', Number.MIN_SAFE_INTEGER);
  const fromQuery = defined({
    page_token: queryString(req.query, 'page_token') || undefined,
    limit: limit === undefined || limit < 0 ? undefined : limit,
  });
  const fromBody = { ...req.body };
  if (typeof fromBody.limit === 'number' && fromBody.limit < 0) delete fromBody.limit;
  return paging({ ...fromQuery, ...fromBody });
}
