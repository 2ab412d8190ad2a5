import { optionalBoolean, optionalInteger, optionalString, pageLimit, stringMap } from '../catalog/params.js';
import type { CatalogServices } from '../catalog/services.js';
import { declareTable } from '../catalog/tables/declare.js';
import { describeTable } from '../catalog/tables/describe.js';
import { listAllTables, listTables, tableExists } from '../catalog/tables/list.js';
import type { HandlerMap, OperationRequest } from './types.js';

/** DescribeTable's three flags travel in the query (client) and the body (spec); query wins. */
const flag = (req: OperationRequest, name: string) =>
  optionalBoolean(req.query.get(name) ?? undefined, name) ?? optionalBoolean(req.body[name], name);

/** Table catalog entries (the metadata bundle). */
export const tableHandlers: HandlerMap<CatalogServices> = {
  DeclareTable: (req, svc) =>
    declareTable(svc, {
      id: req.id,
      location: optionalString(req.body.location, 'location'),
      properties: stringMap(req.body.properties, 'properties'),
      vendCredentials: optionalBoolean(req.body.vend_credentials, 'vend_credentials'),
      identity: req.identity,
    }),

  DescribeTable: (req, svc) =>
    describeTable(svc, {
      id: req.id,
      withTableUri: flag(req, 'with_table_uri'),
      loadDetailedMetadata: flag(req, 'load_detailed_metadata'),
      checkDeclared: flag(req, 'check_declared'),
      vendCredentials: optionalBoolean(req.body.vend_credentials, 'vend_credentials'),
      version: optionalInteger(req.body.version, 'version', { min: 0 }),
      tag: optionalString(req.body.tag, 'tag'),
      branch: optionalString(req.body.branch, 'branch'),
      identity: req.identity,
    }),

  TableExists: (req, svc) => tableExists(svc, req.id, optionalInteger(req.body.version, 'version', { min: 0 })),

  ListTables: (req, svc) =>
    listTables(svc, {
      namespace: req.id,
      pageToken: req.query.get('page_token') ?? undefined,
      limit: pageLimit(req.query.get('limit') ?? undefined),
      includeDeclared: optionalBoolean(req.query.get('include_declared') ?? undefined, 'include_declared') ?? true,
    }),

  ListAllTables: (req, svc) =>
    listAllTables(svc, {
      delimiter: req.delimiter,
      pageToken: req.query.get('page_token') ?? undefined,
      limit: pageLimit(req.query.get('limit') ?? undefined),
      includeDeclared: optionalBoolean(req.query.get('include_declared') ?? undefined, 'include_declared') ?? true,
    }),
};
