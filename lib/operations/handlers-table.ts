import { InvalidInputError } from '../errors.js';
import { mode, optionalBoolean, optionalInteger, optionalString, pageLimit, stringMap } from '../catalog/params.js';
import type { CatalogServices } from '../catalog/services.js';
import { declareTable } from '../catalog/tables/declare.js';
import { describeTable } from '../catalog/tables/describe.js';
import { deregisterTable, dropTable } from '../catalog/tables/drop.js';
import { listAllTables, listTables, tableExists } from '../catalog/tables/list.js';
import { registerTable } from '../catalog/tables/register.js';
import { renameTable } from '../catalog/tables/rename.js';
import type { AccessMode } from '../ports/credential-vendor.js';
import type { HandlersOf, OperationRequest } from '../contract/request.js';
import { force, purge } from './force.js';

/** DescribeTable's three flags travel in the query (client) and the body (spec); query wins. */
const flag = (req: OperationRequest, name: string) =>
  optionalBoolean(req.query.get(name) ?? undefined, name) ?? optionalBoolean(req.body[name], name);

/**
 * `x-rask-access: readwrite` (or `read`): what the caller will do with the credentials
 * DescribeTable vends. A client sets it on its connection (`headers`) when it opens tables to
 * write them; without it a describe vends read-only.
 */
function accessHeader(req: OperationRequest): AccessMode | undefined {
  const value = req.headers?.['x-rask-access']?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (value === 'read' || value === 'readwrite') return value;
  throw new InvalidInputError(`header x-rask-access must be read or readwrite, not ${JSON.stringify(value)}`);
}

function requiredString(value: unknown, field: string): string {
  const s = optionalString(value, field);
  if (s === undefined) throw new InvalidInputError(`${field} is required`);
  return s;
}

function optionalStringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new InvalidInputError(`${field} must be an array of strings`);
  }
  return value as string[];
}

/** Table catalog entries (the metadata bundle). */
export const tableHandlers: HandlersOf<'lib/operations/handlers-table.ts', CatalogServices> = {
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
      access: accessHeader(req),
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

  RegisterTable: (req, svc) =>
    registerTable(svc, {
      id: req.id,
      location: optionalString(req.body.location, 'location'),
      mode: mode(req.body.mode, 'mode', ['create', 'overwrite'] as const, 'create'),
      properties: stringMap(req.body.properties, 'properties'),
      force: force(req, svc),
    }),

  DeregisterTable: (req, svc) => deregisterTable(svc, req.id, { force: force(req, svc) }),

  DropTable: (req, svc) => dropTable(svc, req.id, { force: force(req, svc), purge: purge(req), principal: req.caller?.principal }),

  RenameTable: (req, svc) =>
    renameTable(svc, {
      id: req.id,
      newName: requiredString(req.body.new_table_name, 'new_table_name'),
      newNamespace: optionalStringArray(req.body.new_namespace_id, 'new_namespace_id'),
      force: force(req, svc),
    }),

  ListAllTables: (req, svc) =>
    listAllTables(svc, {
      delimiter: req.delimiter,
      pageToken: req.query.get('page_token') ?? undefined,
      limit: pageLimit(req.query.get('limit') ?? undefined),
      includeDeclared: optionalBoolean(req.query.get('include_declared') ?? undefined, 'include_declared') ?? true,
    }),
};
