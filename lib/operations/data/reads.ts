/**
 * Reads: QueryTable (answers Arrow IPC file bytes), CountTableRows (a bare integer),
 * Explain/AnalyzeTableQueryPlan (a JSON string) and GetTableStats.
 */
import type { CatalogServices } from '../../catalog/services.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, defined, engine, limits, queryInt, queryString, table } from './context.js';

export const readHandlers: HandlersOf<'lib/operations/data/reads.ts', CatalogServices> = {
  QueryTable: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).query(t.location, body(req), { maxBytes: limits(svc).maxResultBytes });
  },

  // The official client sends GET with no body (the spec: POST with a JSON body); on GET the
  // request fields may come as query parameters.
  CountTableRows: async (req, svc) => engine(svc).countRows((await table(req, svc)).location, readRequest(req)),

  // The router encodes a returned string as a JSON string literal, which is what clients parse.
  ExplainTableQueryPlan: async (req, svc) => engine(svc).explainPlan((await table(req, svc)).location, body(req)),

  AnalyzeTableQueryPlan: async (req, svc) => engine(svc).analyzePlan((await table(req, svc)).location, body(req)),

  GetTableStats: async (req, svc) => engine(svc).stats((await table(req, svc)).location, readRequest(req)),
};

/** Body fields, with `version`, `branch`, `tag` and `predicate` also accepted from the query (GET). */
function readRequest(req: OperationRequest): Record<string, unknown> {
  const q = req.query;
  const fromQuery = defined({
    version: queryInt(q, 'version'),
    branch: queryString(q, 'branch'),
    tag: queryString(q, 'tag'),
    predicate: queryString(q, 'predicate'),
  });
  return { ...fromQuery, ...req.body };
}
