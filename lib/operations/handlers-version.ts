import { InvalidInputError } from '../errors.js';
import { mode, optionalBoolean, optionalInteger, optionalString, pageLimit } from '../catalog/params.js';
import type { CatalogServices } from '../catalog/services.js';
import { createTableVersion } from '../catalog/tables/version-create.js';
import { deleteTableVersions, parseRanges } from '../catalog/tables/version-delete.js';
import { describeTableVersion, listTableVersions } from '../catalog/tables/versions.js';
import type { HandlersOf } from '../contract/request.js';

const required = <T>(value: T | undefined, field: string): T => {
  if (value === undefined) throw new InvalidInputError(`${field} is required`);
  return value;
};

/**
 * Managed versioning (the metadata bundle). BatchCreateTableVersions and BatchCommitTables are
 * deliberately absent: see docs/batch-commits.md and lib/contract/unsupported.ts.
 */
export const versionHandlers: HandlersOf<'lib/operations/handlers-version.ts', CatalogServices> = {
  // The client POSTs the body `null` and puts everything in the query (rest-conformance §2 #16).
  ListTableVersions: (req, svc) =>
    listTableVersions(svc, {
      id: req.id,
      branch: req.query.get('branch') ?? optionalString(req.body.branch, 'branch'),
      pageToken: req.query.get('page_token') ?? optionalString(req.body.page_token, 'page_token'),
      limit: pageLimit(req.query.get('limit') ?? req.body.limit ?? undefined),
      descending:
        optionalBoolean(req.query.get('descending') ?? undefined, 'descending') ??
        optionalBoolean(req.body.descending, 'descending') ??
        false,
    }),

  DescribeTableVersion: (req, svc) =>
    describeTableVersion(svc, {
      id: req.id,
      version: optionalInteger(req.body.version, 'version', { min: 0 }),
      branch: optionalString(req.body.branch, 'branch'),
    }),

  CreateTableVersion: (req, svc) =>
    createTableVersion(svc, {
      id: req.id,
      version: required(optionalInteger(req.body.version, 'version', { min: 0 }), 'version'),
      manifestPath: required(optionalString(req.body.manifest_path, 'manifest_path'), 'manifest_path'),
      manifestSize: optionalInteger(req.body.manifest_size, 'manifest_size', { min: 0 }),
      eTag: optionalString(req.body.e_tag, 'e_tag'),
      namingScheme:
        req.body.naming_scheme === undefined || req.body.naming_scheme === null
          ? undefined
          : mode(req.body.naming_scheme, 'naming_scheme', ['V1', 'V2'] as const, 'V2'),
      branch: optionalString(req.body.branch, 'branch'),
    }),

  BatchDeleteTableVersions: (req, svc) =>
    deleteTableVersions(svc, {
      id: req.id,
      branch: optionalString(req.body.branch, 'branch'),
      ranges: parseRanges(required(req.body.ranges ?? undefined, 'ranges')),
    }),
};
