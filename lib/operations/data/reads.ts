/**
 * Reads: QueryTable (answers Arrow IPC file bytes), CountTableRows (a bare integer),
 * Explain/AnalyzeTableQueryPlan (a JSON string) and GetTableStats. Each decodes its body
 * (query-input.ts, inputs.ts) and hands the engine the typed input.
 */
import type { CatalogServices } from '../../catalog/services.js';
import { optSql } from '../../data/sql-bounds.js';
import type { Json } from '../../data/validate.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { defined, engine, limits, queryInt, queryString, table } from './context.js';
import { readSelection } from './inputs.js';
import { explainInput, queryInput } from './query-input.js';

export const readHandlers: HandlersOf<'lib/operations/data/reads.ts', CatalogServices> = {
  QueryTable: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).query(t.location, queryInput(req.body), { maxBytes: limits(svc).maxResultBytes });
  },

  // The official client sends GET with no body (the spec: POST with a JSON body); on GET the
  // request fields may come as query parameters.
  CountTableRows: async (req, svc) => {
    const t = await table(req, svc);
    const body = readRequest(req);
    const predicate = optSql(body.predicate, 'predicate');
    return engine(svc).countRows(t.location, { ...readSelection(body), ...defined({ predicate }) });
  },

  // The router encodes a returned string as a JSON string literal, which is what clients parse.
  ExplainTableQueryPlan: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).explainPlan(t.location, explainInput(req.body));
  },

  AnalyzeTableQueryPlan: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).analyzePlan(t.location, queryInput(req.body));
  },

  GetTableStats: async (req, svc) => {
    const t = await table(req, svc);
    return engine(svc).stats(t.location, readSelection(readRequest(req)));
  },
};

/** Body fields, with `version`, `branch`, `tag` and `predicate` also accepted from the query (GET). */
function readRequest(req: OperationRequest): Json {
  const q = req.query;
  const fromQuery = defined({
    version: queryInt(q, 'version'),
    branch: queryString(q, 'branch'),
    tag: queryString(q, 'tag'),
    predicate: queryString(q, 'predicate'),
  });
  return { ...fromQuery, ...req.body };
}
