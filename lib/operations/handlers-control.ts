import { z } from 'zod';
import type { CatalogServices } from '../catalog/services.js';
import { grantRole, listGrants, revokeRole, type GrantInput } from '../catalog/control/grants.js';
import {
  createApiKey,
  createPrincipal,
  KEY_EXPIRY_FORM,
  KEY_EXPIRY_RULE,
  listApiKeys,
  listPrincipals,
  PRINCIPAL_NAME,
  PRINCIPAL_NAME_RULE,
  revokeApiKey,
} from '../catalog/control/principals.js';
import { createProject, deleteProject, describeProject, listProjects, updateProject } from '../catalog/control/projects.js';
import {
  bindNamespace,
  createWarehouse,
  deleteWarehouse,
  describeWarehouse,
  listWarehouses,
  setWarehouseActive,
  updateWarehouse,
} from '../catalog/control/warehouses.js';
import { validateName, type NameKind } from '../registry/keys.js';
import { ROLES, type GrantScope, type Role } from '../registry/principal-records.js';
import { parseStorageRoot } from '../registry/storage-roots.js';
import type { StorageRoot } from '../ports/storage-root.js';
import type { HandlerMap, OperationRequest } from '../contract/request.js';
import { checkedBy, decode, optionalBoolean, optionalInteger, optionalString, pageQuery, pathParam, queryFields, stringMap } from './decode.js';
import { force } from './force.js';

/**
 * The control-plane doors (lib/contract/control-operations.ts): each decodes its request here
 * and calls lib/catalog/control with typed input (issue 25, "one shape per operation"). The
 * guard has already scoped `svc.project` to the project the request addresses (field, query,
 * base URI or default). Fields are listed in the order the doors have always checked them: the
 * first one wrong is the 400.
 */

/** A name the registry accepts (lib/registry/keys.ts states the rule and its message). */
const name = (kind: NameKind) =>
  checkedBy((value): string => {
    validateName(kind, value);
    return value;
  });

/** `storage_root`: required, `s3://bucket/prefix` or an absolute local directory. */
const storageRoot = checkedBy(parseStorageRoot);

/** `storage_roots` (extra allotment): absent, or at most 100 storage roots. */
const storageRoots = z
  .array(z.unknown(), { error: 'storage_roots must be an array of at most 100 storage roots' })
  .max(100, { error: 'storage_roots must be an array of at most 100 storage roots' })
  .pipe(z.array(storageRoot))
  .optional() as z.ZodType<StorageRoot[] | undefined>;

const createProjectInput = z.object({
  name: name('project'),
  description: optionalString('description'),
  protected: optionalBoolean('protected'),
  storageRoots: storageRoots,
});

const updateProjectInput = z.object({
  description: optionalString('description'),
  defaultWarehouse: optionalString('default_warehouse').pipe(name('warehouse').optional()),
  storageRoots: storageRoots,
  protected: optionalBoolean('protected'),
});

const createWarehouseInput = z.object({
  name: name('warehouse'),
  storageRoot,
  managedVersioning: optionalBoolean('managed_versioning'),
  trashGraceDays: optionalInteger('trash_grace_days', { min: 0 }),
  protected: optionalBoolean('protected'),
});

const updateWarehouseInput = z.object({
  managedVersioning: optionalBoolean('managed_versioning'),
  trashGraceDays: optionalInteger('trash_grace_days', { min: 0 }),
  storageRoot: z.undefined({ error: 'storage_root cannot change: tables store locations under it; create another warehouse' }),
  protected: optionalBoolean('protected'),
});

const ONE_TOP_LEVEL = 'namespace must name one top-level namespace (a string or a one-element array)';
const bindInput = z.object({
  namespace: z
    .union([z.string().transform((s) => [s]), z.array(z.unknown())], { error: ONE_TOP_LEVEL })
    .refine((id) => id.length === 1 && typeof id[0] === 'string', { error: ONE_TOP_LEVEL })
    .transform((id) => id[0])
    .pipe(name('namespace')),
  properties: stringMap('properties'),
});

const createPrincipalInput = z.object({
  name: z.string({ error: PRINCIPAL_NAME_RULE }).regex(PRINCIPAL_NAME, { error: PRINCIPAL_NAME_RULE }),
  platformAdmin: optionalBoolean('platform_admin'),
});

const createApiKeyInput = z.object({
  expiresAt: z.string({ error: KEY_EXPIRY_RULE }).regex(KEY_EXPIRY_FORM, { error: KEY_EXPIRY_RULE }).nullish().transform((v) => v ?? undefined),
});

const scopeIds = (field: 'namespace' | 'table') =>
  z
    .array(z.string(), { error: `${field} must be a non-empty array of names` })
    .min(1, { error: `${field} must be a non-empty array of names` })
    .pipe(z.array(name(field)))
    .nullish()
    .transform((v) => v ?? undefined);

const grantInput: z.ZodType<GrantInput> = z
  .object({
    principal: optionalString('principal').refine((p) => !!p, { error: 'principal is required' }),
    role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` }),
    namespace: scopeIds('namespace'),
    table: scopeIds('table'),
  })
  .refine((g) => !(g.namespace && g.table), { error: 'a grant is on a namespace or a table, not both' })
  .transform(({ principal, role, namespace, table }) => {
    const scope: GrantScope = namespace ? { kind: 'namespace', id: namespace } : table ? { kind: 'table', id: table } : { kind: 'project' };
    return { principal: principal!, grant: { role: role as Role, scope } };
  });

/** The JSON body's fields under the names the schemas use (the wire's snake_case → camelCase). */
const body = (req: OperationRequest, fields: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(fields).map(([key, wire]) => [key, req.body[wire]]));

const page = (req: OperationRequest) => {
  const q = queryFields(req, 'page_token', 'limit');
  return decode(pageQuery, { pageToken: q.page_token, limit: q.limit });
};

export const controlHandlers: HandlerMap<CatalogServices> = {
  CreateProject: (req, svc) =>
    createProject(
      svc,
      req.caller,
      decode(createProjectInput, body(req, { name: 'name', description: 'description', protected: 'protected', storageRoots: 'storage_roots' })),
    ),
  ListProjects: (req, svc) => listProjects(svc, page(req)),
  DescribeProject: (req, svc) => describeProject(svc, pathParam(req, 'project')),
  UpdateProject: (req, svc) => {
    const project = decode(name('project'), pathParam(req, 'project'));
    const input = decode(
      updateProjectInput,
      body(req, { description: 'description', defaultWarehouse: 'default_warehouse', storageRoots: 'storage_roots', protected: 'protected' }),
    );
    return updateProject(svc, project, input, req.caller);
  },
  DeleteProject: (req, svc) => deleteProject(svc, pathParam(req, 'project'), { force: force(req, svc) }),

  CreateWarehouse: (req, svc) =>
    createWarehouse(
      svc,
      svc.project,
      decode(
        createWarehouseInput,
        body(req, { name: 'name', storageRoot: 'storage_root', managedVersioning: 'managed_versioning', trashGraceDays: 'trash_grace_days', protected: 'protected' }),
      ),
      req.caller,
    ),
  ListWarehouses: (req, svc) => listWarehouses(svc, svc.project, page(req)),
  DescribeWarehouse: (req, svc) => describeWarehouse(svc, svc.project, pathParam(req, 'warehouse')),
  UpdateWarehouse: (req, svc) => {
    const warehouse = pathParam(req, 'warehouse');
    const input = decode(
      updateWarehouseInput,
      body(req, { managedVersioning: 'managed_versioning', trashGraceDays: 'trash_grace_days', storageRoot: 'storage_root', protected: 'protected' }),
    );
    return updateWarehouse(svc, svc.project, warehouse, input, req.caller);
  },
  DeleteWarehouse: (req, svc) => {
    const warehouse = pathParam(req, 'warehouse');
    const forced = force(req, svc);
    const purge = decode(optionalBoolean('purge'), req.body.purge) ?? false;
    return deleteWarehouse(svc, svc.project, warehouse, { force: forced, purge });
  },
  DeactivateWarehouse: (req, svc) => setWarehouseActive(svc, svc.project, pathParam(req, 'warehouse'), false),
  ActivateWarehouse: (req, svc) => setWarehouseActive(svc, svc.project, pathParam(req, 'warehouse'), true),
  BindNamespace: (req, svc) => {
    const warehouse = pathParam(req, 'warehouse');
    return bindNamespace(svc, svc.project, warehouse, decode(bindInput, body(req, { namespace: 'namespace', properties: 'properties' })));
  },

  CreatePrincipal: (req, svc) => createPrincipal(svc, decode(createPrincipalInput, body(req, { name: 'name', platformAdmin: 'platform_admin' }))),
  ListPrincipals: (req, svc) => listPrincipals(svc, page(req)),
  CreateApiKey: (req, svc) => {
    const principal = pathParam(req, 'principal');
    return createApiKey(svc, principal, decode(createApiKeyInput, body(req, { expiresAt: 'expires_at' })), req.caller);
  },
  ListApiKeys: (req, svc) => listApiKeys(svc, pathParam(req, 'principal')),
  RevokeApiKey: (req, svc) => {
    const principal = pathParam(req, 'principal');
    return revokeApiKey(svc, principal, pathParam(req, 'key_id'));
  },

  GrantRole: (req, svc) => grantRole(svc, svc.project, decode(grantInput, body(req, GRANT_FIELDS))),
  ListGrants: (req, svc) => listGrants(svc, svc.project, { principal: req.query.get('principal') ?? undefined }),
  RevokeRole: (req, svc) => revokeRole(svc, svc.project, decode(grantInput, body(req, GRANT_FIELDS))),
};

const GRANT_FIELDS = { principal: 'principal', role: 'role', namespace: 'namespace', table: 'table' } as const;
