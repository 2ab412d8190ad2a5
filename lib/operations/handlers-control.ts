import * as z from 'zod/mini';
import type { CatalogServices } from '../catalog/services.js';
import { listChanges } from '../catalog/control/changes.js';
import { requestChanges } from '../catalog/control/requests.js';
import { jobContext } from '../queue/context.js';
import { listJobs } from '../queue/list.js';
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
import { getProjectLimits, setProjectLimits } from '../catalog/control/limits.js';
import { getPrincipalLimits, setPrincipalLimits } from '../catalog/control/principal-limits.js';
import { InvalidInputError } from '../errors.js';
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
import type { HandlersOf, OperationRequest } from '../contract/request.js';
import { checkedBy, decode, optionalBoolean, optionalInteger, optionalString, pageQuery, pathParam, queryFields, stringMap, type Schema } from './decode.js';
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

const AT_MOST_100 = 'storage_roots must be an array of at most 100 storage roots';
/** `storage_roots` (extra allotment): absent, or at most 100 storage roots. */
const storageRoots: Schema<StorageRoot[] | undefined> = z.optional(
  z.pipe(z.array(z.unknown(), { error: AT_MOST_100 }).check(z.maxLength(100, { error: AT_MOST_100 })), z.array(storageRoot)),
);

/** `GET /v1/changes?since=&limit=` (docs/events.md, "The feed"). */
const jobsQuery = z.object({ limit: optionalInteger('limit', { min: 1 }) });

const changesQuery = z.object({
  since: optionalString('since'),
  before: optionalString('before'),
  order: optionalString('order'),
  limit: optionalInteger('limit', { min: 1 }),
});

const createProjectInput = z.object({
  name: name('project'),
  description: optionalString('description'),
  protected: optionalBoolean('protected'),
  storageRoots,
});

const updateProjectInput = z.object({
  description: optionalString('description'),
  defaultWarehouse: z.pipe(optionalString('default_warehouse'), z.optional(name('warehouse'))),
  storageRoots,
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
  namespace: z.pipe(
    z.union([z.pipe(z.string(), z.transform((s: string) => [s])), z.array(z.unknown())], { error: ONE_TOP_LEVEL }).check(
      z.refine((id: unknown[]) => id.length === 1 && typeof id[0] === 'string', { error: ONE_TOP_LEVEL }),
    ),
    z.pipe(z.transform((id: unknown[]) => id[0]), name('namespace')),
  ),
  properties: stringMap('properties'),
});

const createPrincipalInput = z.object({
  name: z.string({ error: PRINCIPAL_NAME_RULE }).check(z.regex(PRINCIPAL_NAME, { error: PRINCIPAL_NAME_RULE })),
  platformAdmin: optionalBoolean('platform_admin'),
});

const createApiKeyInput = z.object({
  expiresAt: z.pipe(
    z.nullish(z.string({ error: KEY_EXPIRY_RULE }).check(z.regex(KEY_EXPIRY_FORM, { error: KEY_EXPIRY_RULE }))),
    z.transform((v: string | null | undefined) => v ?? undefined),
  ),
});

const scopeIds = (field: 'namespace' | 'table'): Schema<string[] | undefined> => {
  const error = `${field} must be a non-empty array of names`;
  return z.pipe(
    z.nullish(z.pipe(z.array(z.string({ error }), { error }).check(z.minLength(1, { error })), z.array(name(field)))),
    z.transform((v: string[] | null | undefined) => v ?? undefined),
  );
};

const grantInput: Schema<GrantInput> = z.pipe(
  z
    .object({
      principal: z.pipe(optionalString('principal'), z.string({ error: 'principal is required' }).check(z.minLength(1, { error: 'principal is required' }))),
      role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` }),
      namespace: scopeIds('namespace'),
      table: scopeIds('table'),
    })
    .check(z.refine((g) => !(g.namespace && g.table), { error: 'a grant is on a namespace or a table, not both' })),
  z.transform(({ principal, role, namespace, table }): GrantInput => {
    const scope: GrantScope = namespace ? { kind: 'namespace', id: namespace } : table ? { kind: 'table', id: table } : { kind: 'project' };
    return { principal, grant: { role: role as Role, scope } };
  }),
);

/** A quota in SetProjectLimits: a whole number (0 = no quota), null for the deployment's default, or absent. */
const quotaValue = (field: string) =>
  checkedBy((v: unknown): number | null | undefined => {
    if (v === undefined || v === null) return v;
    if (Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 100_000_000) return v as number;
    throw new InvalidInputError(`${field} must be a whole number from 0 (no quota) to 100000000, or null (the deployment's default)`);
  });
const RATE_FORM = 'rate must be {"per_second": 0-100000, "burst"?: 1-1000000} or null (the deployment\'s default)';
const whole = (v: unknown, min: number, max: number) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const rateValue = checkedBy((v: unknown): { perSecond: number; burst?: number } | null | undefined => {
  if (v === undefined || v === null) return v;
  const r = v as { per_second?: unknown; burst?: unknown };
  if (typeof v !== 'object' || Array.isArray(v) || !whole(r.per_second, 0, 100_000) || (r.burst !== undefined && !whole(r.burst, 1, 1_000_000)) || Object.keys(v).some((k) => k !== 'per_second' && k !== 'burst')) {
    throw new InvalidInputError(RATE_FORM);
  }
  return { perSecond: r.per_second as number, ...(r.burst !== undefined ? { burst: r.burst as number } : {}) };
});
const setLimitsInput = z.object({ namespaces: quotaValue('namespaces'), tables: quotaValue('tables'), rate: rateValue });
const LIMIT_FIELDS = new Set(['namespaces', 'tables', 'rate', 'project']);
const setPrincipalLimitsInput = z.object({ keys: quotaValue('keys'), rate: rateValue });
const PRINCIPAL_LIMIT_FIELDS = new Set(['keys', 'rate']);

/** The JSON body's fields under the names the schemas use (the wire's snake_case → camelCase). */
const body = (req: OperationRequest, fields: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(fields).map(([key, wire]) => [key, req.body[wire]]));

const page = (req: OperationRequest) => {
  const q = queryFields(req, 'page_token', 'limit');
  return decode(pageQuery, { pageToken: q.page_token, limit: q.limit });
};

export const controlHandlers: HandlersOf<'lib/operations/handlers-control.ts', CatalogServices> = {
  CreateProject: async (req, svc) =>
    createProject(
      svc,
      req.caller,
      decode(createProjectInput, body(req, { name: 'name', description: 'description', protected: 'protected', storageRoots: 'storage_roots' })),
    ),
  ListProjects: async (req, svc) => listProjects(svc, page(req)),
  DescribeProject: async (req, svc) => describeProject(svc, pathParam(req, 'project')),
  UpdateProject: async (req, svc) => {
    const project = decode(name('project'), pathParam(req, 'project'));
    const input = decode(
      updateProjectInput,
      body(req, { description: 'description', defaultWarehouse: 'default_warehouse', storageRoots: 'storage_roots', protected: 'protected' }),
    );
    return updateProject(svc, project, input, req.caller);
  },
  DeleteProject: async (req, svc) => deleteProject(svc, pathParam(req, 'project'), { force: force(req, svc) }),

  CreateWarehouse: async (req, svc) =>
    createWarehouse(
      svc,
      svc.project,
      decode(
        createWarehouseInput,
        body(req, { name: 'name', storageRoot: 'storage_root', managedVersioning: 'managed_versioning', trashGraceDays: 'trash_grace_days', protected: 'protected' }),
      ),
      req.caller,
    ),
  ListWarehouses: async (req, svc) => listWarehouses(svc, svc.project, page(req)),
  GetProjectLimits: async (_req, svc) => getProjectLimits(svc),
  SetProjectLimits: async (req, svc) => {
    // A misspelt field would otherwise set nothing and answer 200.
    const unknown = Object.keys(req.body).filter((f) => !LIMIT_FIELDS.has(f));
    if (unknown.length > 0) throw new InvalidInputError(`unknown field ${JSON.stringify(unknown[0])}: SetProjectLimits takes namespaces, tables and rate`);
    return setProjectLimits(svc, decode(setLimitsInput, body(req, { namespaces: 'namespaces', tables: 'tables', rate: 'rate' })));
  },
  GetPrincipalLimits: async (req, svc) => getPrincipalLimits(svc, pathParam(req, 'principal')),
  SetPrincipalLimits: async (req, svc) => {
    const unknown = Object.keys(req.body).filter((f) => !PRINCIPAL_LIMIT_FIELDS.has(f));
    if (unknown.length > 0) throw new InvalidInputError(`unknown field ${JSON.stringify(unknown[0])}: SetPrincipalLimits takes keys and rate`);
    return setPrincipalLimits(svc, pathParam(req, 'principal'), decode(setPrincipalLimitsInput, body(req, { keys: 'keys', rate: 'rate' })));
  },
  ListChanges: async (req, svc) => listChanges(svc, svc.project, decode(changesQuery, queryFields(req, 'since', 'before', 'order', 'limit'))),
  GetRequestChanges: async (req, svc) => requestChanges(svc, pathParam(req, 'request_id'), req.caller?.principal ?? 'anonymous'),
  ListJobs: async (req, svc) =>
    listJobs(jobContext(svc), decode(jobsQuery, queryFields(req, 'limit')), svc.mayRead ? (table) => svc.mayRead!('table', table) : undefined),
  DescribeWarehouse: async (req, svc) => describeWarehouse(svc, svc.project, pathParam(req, 'warehouse')),
  UpdateWarehouse: async (req, svc) => {
    const warehouse = pathParam(req, 'warehouse');
    const input = decode(
      updateWarehouseInput,
      body(req, { managedVersioning: 'managed_versioning', trashGraceDays: 'trash_grace_days', storageRoot: 'storage_root', protected: 'protected' }),
    );
    return updateWarehouse(svc, svc.project, warehouse, input, req.caller);
  },
  DeleteWarehouse: async (req, svc) => {
    const warehouse = pathParam(req, 'warehouse');
    const forced = force(req, svc);
    const purge = decode(optionalBoolean('purge'), req.body.purge) ?? false;
    return deleteWarehouse(svc, svc.project, warehouse, { force: forced, purge });
  },
  DeactivateWarehouse: async (req, svc) => setWarehouseActive(svc, svc.project, pathParam(req, 'warehouse'), false),
  ActivateWarehouse: async (req, svc) => setWarehouseActive(svc, svc.project, pathParam(req, 'warehouse'), true),
  BindNamespace: async (req, svc) => {
    const warehouse = pathParam(req, 'warehouse');
    return bindNamespace(svc, svc.project, warehouse, decode(bindInput, body(req, { namespace: 'namespace', properties: 'properties' })));
  },

  CreatePrincipal: async (req, svc) => createPrincipal(svc, decode(createPrincipalInput, body(req, { name: 'name', platformAdmin: 'platform_admin' }))),
  ListPrincipals: async (req, svc) => listPrincipals(svc, page(req)),
  CreateApiKey: async (req, svc) => {
    const principal = pathParam(req, 'principal');
    return createApiKey(svc, principal, decode(createApiKeyInput, body(req, { expiresAt: 'expires_at' })), req.caller);
  },
  ListApiKeys: async (req, svc) => listApiKeys(svc, pathParam(req, 'principal')),
  RevokeApiKey: async (req, svc) => {
    const principal = pathParam(req, 'principal');
    return revokeApiKey(svc, principal, pathParam(req, 'key_id'));
  },

  GrantRole: async (req, svc) => grantRole(svc, svc.project, decode(grantInput, body(req, GRANT_FIELDS))),
  ListGrants: async (req, svc) => listGrants(svc, svc.project, { principal: req.query.get('principal') ?? undefined }),
  RevokeRole: async (req, svc) => revokeRole(svc, svc.project, decode(grantInput, body(req, GRANT_FIELDS))),
};

const GRANT_FIELDS = { principal: 'principal', role: 'role', namespace: 'namespace', table: 'table' } as const;
