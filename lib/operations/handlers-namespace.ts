import { createNamespace } from '../catalog/namespaces/create.js';
import { describeNamespace } from '../catalog/namespaces/describe.js';
import { dropNamespace } from '../catalog/namespaces/drop.js';
import { listNamespaces } from '../catalog/namespaces/list.js';
import { namespaceExists } from '../catalog/namespaces/exists.js';
import { mode, optionalString, pageLimit, stringMap } from '../catalog/params.js';
import type { CatalogServices } from '../catalog/services.js';
import { force, purge } from './force.js';
import type { HandlersOf } from '../contract/request.js';

/** Namespace operations: decode the spec's request shapes, call the catalog. */
export const namespaceHandlers: HandlersOf<'lib/operations/handlers-namespace.ts', CatalogServices> = {
  CreateNamespace: (req, svc) =>
    createNamespace(svc, {
      id: req.id,
      mode: mode(req.body.mode, 'mode', ['create', 'exist_ok', 'overwrite'] as const, 'create'),
      properties: stringMap(req.body.properties, 'properties'),
    }),

  ListNamespaces: (req, svc) =>
    listNamespaces(svc, {
      id: req.id,
      pageToken: optionalString(req.query.get('page_token') ?? undefined, 'page_token'),
      limit: pageLimit(req.query.get('limit') ?? undefined),
    }),

  DescribeNamespace: (req, svc) => describeNamespace(svc, req.id),

  DropNamespace: (req, svc) =>
    dropNamespace(svc, {
      id: req.id,
      mode: mode(req.body.mode, 'mode', ['fail', 'skip'] as const, 'fail'),
      behavior: mode(req.body.behavior, 'behavior', ['restrict', 'cascade'] as const, 'restrict'),
      force: force(req, svc),
      purge: purge(req),
      principal: req.caller?.principal ?? 'anonymous',
    }),

  NamespaceExists: (req, svc) => namespaceExists(svc, req.id),
};
