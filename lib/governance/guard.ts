import { cachedProject } from '../catalog/control/project-cache.js';
import { fmtId, validateId } from '../catalog/ids.js';
import type { CatalogServices } from '../catalog/services.js';
import {
  NamespaceNotFoundError,
  PermissionDeniedError,
  TableNotFoundError,
  UnauthenticatedError,
  type CatalogError,
} from '../errors.js';
import type { HttpRequest } from '../contract/http.js';
import { presentedKeys } from '../auth/api-key.js';
import type { OperationDef } from '../contract/operations.js';
import type { Caller } from '../contract/request.js';
import type { Admission } from './admission.js';
import type { CredentialVendor } from '../ports/credential-vendor.js';
import { keys } from '../registry/keys.js';
import type { NamespaceRecord, ProjectRecord } from '../registry/records.js';
import { CREATE_HINT, notFound, q } from '../catalog/control/errors.js';
import { boundGrants, grantsIn, readGrants } from '../catalog/control/grants.js';
import type { Grant } from '../registry/principal-records.js';
import type { GuardSettings } from './settings.js';
import { authorize, preparePolicyEngine, type AuthzDecision, type ResourceChain } from './policy-engine.js';
import { readPrincipal } from '../catalog/control/principals.js';
import { identify } from './identify.js';
import { destinationOf } from './destinations.js';
import { asksForce, unprotectRight } from './force-right.js';
import { namespaceChain, PLATFORM_UID, projectChain, projectUid, scopeUid, tableChain, targetKind, warehouseUid } from './resources.js';
import { projectScope } from './scope.js';
import { trace, tracing } from '../trace.js';

/**
 * The request guard: authentication, then (after the router has decoded the request) the
 * create doors' parent checks, authorization with Cedar, the project's existence and the
 * warehouse quarantine, in the check order of docs/rules.md rule 1: 401 → 400 → 404 (parent) → 403 → handler (409,
 * write). It hands the handler services scoped to the request's project, whose credential
 * vendor downgrades to read-only for callers who may not write the table.
 */

const UNAUTHENTICATED =
  'missing or invalid credentials: send an API key as x-api-key or Authorization: Bearer <key>, or a valid OIDC token as Authorization: Bearer <token>';

const AMBIGUOUS =
  'ambiguous credentials: the request carries both x-api-key and Authorization: Bearer; send exactly one';

/*
 * Which doors are destructive (a denial answers exactly like "does not exist"), which create a
 * namespace or table (parent checks), and what a control-plane door is decided on (its scope:
 * the platform, the `{project}` parameter, the object `{id}` names, or the addressed project)
 * are columns of the operation table (lib/contract/operation-columns.ts).
 */

/**
 * A request guard that admits decoded requests (lib/governance/admission.ts); the operations
 * layer decodes them for the router (lib/operations/admission.ts).
 */
export interface Guard {
  authenticate(http: HttpRequest, operation: OperationDef): Promise<Caller>;
  admit(admission: Admission, services: CatalogServices): Promise<CatalogServices>;
}

/** The guard for one app; `services` is the process's (unscoped) services, for key lookups. */
export function guardFor(settings: GuardSettings, services: CatalogServices): Guard {
  return {
    authenticate: (http) => authenticate(settings, http, services),
    admit: (admission, s) => admit(settings, admission, s),
  };
}

async function authenticate(settings: GuardSettings, http: HttpRequest, services: CatalogServices | undefined): Promise<Caller> {
  if (settings.mode === 'off') return { principal: 'anonymous', platformAdmin: true, via: 'auth-off' };
  if (settings.mode === 'authorizer') {
    // API Gateway's authorizer already checked the credential; its context is the identity.
    const principal = http.authorizer?.principal;
    if (!principal) throw new UnauthenticatedError(UNAUTHENTICATED);
    const expiresAt = http.authorizer?.expiresAt;
    return {
      principal,
      platformAdmin: http.authorizer?.platformAdmin === 'true',
      via: (http.authorizer?.via as Caller['via']) ?? 'api-key',
      ...(expiresAt ? { expiresAt } : {}),
    };
  }
  if (!services) throw new UnauthenticatedError(UNAUTHENTICATED);
  const presented = presentedKeys(http.headers);
  // Two credentials could prove two principals: refused rather than one silently chosen.
  if (presented.length > 1) throw new UnauthenticatedError(AMBIGUOUS);
  const caller = await identify(settings, services, presented);
  if (!caller) throw new UnauthenticatedError(UNAUTHENTICATED);
  return caller;
}

/** What an operation acts on, and in which project. */
interface Target {
  readonly project?: string;
  readonly chain: ResourceChain;
  /** Spec ids of namespaces and tables (for parent checks and the quarantine). */
  readonly kind: 'namespace' | 'table' | 'project' | 'control';
}

function targetOf(request: Admission, defaultProject: string): Target {
  const op = request.operation;
  const params = request.params;
  if (op.plane !== 'control') {
    const project = request.baseProject ?? defaultProject;
    const kind = targetKind(op);
    if (kind === 'namespace') return { project, kind, chain: namespaceChain(project, request.id) };
    if (kind === 'table') return { project, kind, chain: tableChain(project, request.id) };
    return { project, kind, chain: projectChain(project) };
  }
  switch (op.operationId) {
    case 'CreateProject': {
      const name = request.createsProject ?? '';
      return { kind: 'control', chain: { resource: projectUid(name), ancestors: [PLATFORM_UID] } };
    }
    case 'ListProjects':
    case 'CreatePrincipal':
    case 'ListPrincipals':
      return { kind: 'control', chain: { resource: PLATFORM_UID, ancestors: [] } };
    case 'CreateApiKey':
    case 'ListApiKeys':
    case 'RevokeApiKey':
    case 'GetPrincipalLimits':
    case 'SetPrincipalLimits':
      return { kind: 'control', chain: { resource: { type: 'Principal', id: params.principal ?? '' }, ancestors: [PLATFORM_UID] } };
  }
  if (op.scope === 'object' && request.id.length > 0) {
    const project = projectScope(request.projects, defaultProject);
    const chain = targetKind(op) === 'table' ? tableChain(project, request.id) : namespaceChain(project, request.id);
    return { project, kind: 'control', chain };
  }
  if (op.scope === 'project-param') {
    const project = params.project ?? '';
    return { project, kind: 'control', chain: projectChain(project) };
  }
  const project = projectScope(request.projects, defaultProject);
  if (params.warehouse !== undefined) {
    return { project, kind: 'control', chain: { resource: warehouseUid(project, params.warehouse), ancestors: [projectUid(project), PLATFORM_UID] } };
  }
  return { project, kind: 'control', chain: projectChain(project) };
}

function deniedAs(request: Admission, target: Target, caller: Caller): CatalogError {
  const op = request.operation;
  if (op.destructive) {
    const params = request.params;
    switch (op.operationId) {
      case 'DropNamespace':
        return new NamespaceNotFoundError(`namespace ${fmtId(request.id)} does not exist`);
      case 'DeleteProject':
        return notFound(`project ${q(params.project ?? '')}`);
      case 'DeleteWarehouse':
      case 'DeactivateWarehouse':
      case 'ActivateWarehouse':
        return notFound(`warehouse ${q(params.warehouse ?? '')} of project ${q(target.project ?? '')}`);
      default:
        return new TableNotFoundError(`table ${fmtId(request.id)} does not exist`);
    }
  }
  return new PermissionDeniedError(
    `principal ${q(caller.principal)} may not ${op.action} on ${target.chain.resource.type.toLowerCase()} ${target.chain.resource.id} (${op.operationId})`,
  );
}

async function admit(settings: GuardSettings, request: Admission, base: CatalogServices): Promise<CatalogServices> {
  const op = request.operation;
  const caller = request.caller ?? { principal: 'anonymous', platformAdmin: true, via: 'auth-off' as const };
  // Shape (400) before anything is read: names in the path must be valid names.
  const kind = op.plane === 'control' ? 'control' : targetKind(op);
  if ((kind === 'namespace' || kind === 'table') && request.id.length > 0) validateId(kind, request.id);
  const target = targetOf(request, base.project);
  const project = target.project;
  // The project record and the caller's grants there are read side by side, whether or not the
  // project exists: a project that does not exist costs the same round trip as one that does
  // (docs/governance.md, "Destinations, force and tenants"). A platform administrator is
  // allowed everything: no grants to read.
  const readsGrants = settings.mode !== 'off' && project !== undefined && !caller.platformAdmin;
  // A caller the engine decides: its compilation (once per process, on the first request that
  // needs it) overlaps the reads below instead of following them.
  if (settings.mode !== 'off' && !caller.platformAdmin) void preparePolicyEngine();
  const [record, stored] = await Promise.all([
    project ? cachedProject(base.registry, project) : undefined,
    readsGrants ? readGrants(base.registry, project!, caller.principal) : undefined,
  ]);
  const effectiveDefault = record?.defaultWarehouse ?? (project === base.project ? base.defaultWarehouse : '');
  const destination = project ? destinationOf(request.destination, project) : undefined;
  const held = readsGrants && record ? heldGrants(record, caller.principal, grantsIn(stored, record)) : [];
  // A caller who holds nothing in the project (no grant there, or no project at all) is decided by
  // authorization before anything about the project is looked up, so a create door tells it
  // nothing about what exists there.
  const holdsNothing = settings.mode !== 'off' && !caller.platformAdmin && held.length === 0;

  // Create doors: a missing parent is a 404 that names the door creating it (docs/rules.md rule 6), and
  // it comes before authorization's 403 for a caller who holds something in the project. A
  // platform administrator is always authorized, so the door's own parent check keeps that
  // order for it without this extra registry read.
  const parents = () => checkParents(request, base, project, record, effectiveDefault, { catalogParent: !caller.platformAdmin });
  if (!holdsNothing) await parents();

  // Authorization (403); destructive doors deny as "not found".
  let canWrite = true;
  let mayOverrideProtection = true;
  let mayRead: CatalogServices['mayRead'];
  if (settings.mode !== 'off') {
    // Grants on a namespace or table count only while their object holds the name (grants.ts).
    const grants = held.length === 0 ? [] : await linksOf(base, project!, held, [request.id, ...(destination ? [destination.id] : [])]);
    const decide = async (action: OperationDef['action'], chain: ResourceChain, quarantined = false): Promise<AuthzDecision> => {
      const decision = await authorize({ principal: caller.principal, platformAdmin: caller.platformAdmin, action, target: chain, grants, quarantined });
      settings.log?.({
        message: 'authorization',
        requestId: request.requestId,
        operation: op.operationId,
        principal: caller.principal,
        action,
        resource: `${chain.resource.type}::${chain.resource.id}`,
        decision: decision.allowed ? 'allow' : 'deny',
        policies: decision.policies,
      });
      return decision;
    };
    if (op.scope === 'events') {
      // The change feed: decided per event, on the event's object (feedVisibility below). A caller
      // who holds nothing in the project is refused like any project read, before anything about
      // the project is looked up.
      if (!caller.platformAdmin && held.length === 0) throw deniedAs(request, target, caller);
      if (!caller.platformAdmin) mayRead = feedVisibility(base, project!, caller.principal, held);
    } else if (!(await decide(op.action, target.chain)).allowed) throw deniedAs(request, target, caller);
    // The destination of a door that creates elsewhere than `{id}` (lib/governance/destinations.ts).
    if (destination && !(await decide(destination.action, destination.chain)).allowed) {
      throw op.destructive
        ? deniedAs(request, target, caller)
        : new PermissionDeniedError(`principal ${q(caller.principal)} may not ${destination.action} on ${destination.chain.resource.type.toLowerCase()} ${destination.chain.resource.id} (${op.operationId})`);
    }
    if (target.kind === 'table' && project && (op.operationId === 'DescribeTable' || op.operationId === 'DeclareTable')) {
      canWrite = (await decide('table:write', target.chain)).allowed;
    }
    // Force needs no less than unprotecting (lib/governance/force-right.ts): asked only when
    // the request says `force`, so every other request pays nothing for it.
    const unprotect = project && asksForce(request) ? unprotectRight(op.operationId, target.kind === 'control' ? target.chain : projectChain(project)) : undefined;
    if (unprotect && !(await decide(unprotect.action, unprotect.chain)).allowed) mayOverrideProtection = false;
  }
  // Authorized without holding anything in a project (a principal's own keys): the parent
  // checks, now that they can tell the caller nothing it may not know.
  if (holdsNothing) await parents();
  // Only create doors tell the caller how to make the missing parent (docs/rules.md rule 6).
  if (project && !record && op.scope !== 'platform') throw notFound(`project ${q(project)}`, op.action.endsWith(':create') ? CREATE_HINT.project : '');

  // Quarantine (403): namespaces and tables bound to a deactivated warehouse.
  if (record && (record.deactivatedWarehouses ?? []).length && (target.kind === 'namespace' || target.kind === 'table')) {
    const warehouse = await bindingOf(base, project!, target.kind, request.id, effectiveDefault);
    if (warehouse && record.deactivatedWarehouses!.includes(warehouse)) {
      settings.log?.({ message: 'authorization', requestId: request.requestId, operation: op.operationId, principal: caller.principal, action: op.action, decision: 'deny', policies: ['quarantine'] });
      throw new PermissionDeniedError(
        `warehouse ${q(warehouse)} of project ${q(project!)} is deactivated: its namespaces and tables are quarantined until it is activated (POST /v1/warehouses/${warehouse}/activate)`,
      );
    }
  }

  // At debug, the guard's verdict on this request (docs/operations.md, "Logging"); the
  // authorization lines above give each action's decision when RASK_AUTH is on.
  if (tracing()) {
    trace('guard', {
      decision: 'admit',
      operation: op.operationId,
      principal: caller.principal,
      auth: settings.mode,
      ...(project ? { project } : {}),
      ...(canWrite ? {} : { credentials: 'read-only' }),
      ...(mayOverrideProtection ? {} : { force: 'not allowed' }),
    });
  }
  if (!project) return base;
  return {
    ...base,
    project,
    defaultWarehouse: effectiveDefault,
    vendor: canWrite ? base.vendor : readOnly(base.vendor),
    ...(mayOverrideProtection ? {} : { mayOverrideProtection: false }),
    ...(mayRead ? { mayRead } : {}),
  };
}

/**
 * Who sees which events of the change feed (docs/events.md, "Who sees what"): a table's events
 * need `table:read` on it, a namespace's `namespace:read`, grants, principals and refused requests
 * `project:manage`, the rest `project:read` — the same decisions the object's own read doors
 * make, with the caller's grants bound as they are now (an event of a dropped table is seen by
 * whoever may read the project's tables there).
 */
function feedVisibility(services: CatalogServices, project: string, principal: string, held: readonly Grant[]): NonNullable<CatalogServices['mayRead']> {
  return async (kind, id) => {
    const chain = kind === 'table' ? tableChain(project, id) : kind === 'namespace' ? namespaceChain(project, id) : projectChain(project);
    const action = kind === 'table' ? 'table:read' : kind === 'namespace' ? 'namespace:read' : kind === 'admin' ? 'project:manage' : 'project:read';
    const grants = await linksOf(services, project, held, kind === 'table' || kind === 'namespace' ? [id] : []);
    return (await authorize({ principal, platformAdmin: false, action, target: chain, grants, quarantined: false })).allowed;
  };
}

const readOnly = (vendor: CredentialVendor): CredentialVendor => ({
  vend: (request) => vendor.vend({ ...request, mode: 'read' }),
});

/** The caller's grants in the project, the creator's implicit admin grant included. */
function heldGrants(record: ProjectRecord, principal: string, grants: readonly Grant[]): readonly Grant[] {
  return record.createdBy === principal ? [...grants, { role: 'admin', scope: { kind: 'project' } }] : grants;
}

/** Grants as Cedar template links, without those whose object no longer holds the name at `ids`. */
async function linksOf(services: CatalogServices, project: string, held: readonly Grant[], ids: readonly (readonly string[])[]) {
  return (await boundGrants(services.registry, project, held, ids)).map((grant) => ({ grant, on: scopeUid(project, grant.scope) }));
}

async function checkParents(
  request: Admission,
  services: CatalogServices,
  project: string | undefined,
  record: ProjectRecord | undefined,
  effectiveDefault: string,
  options: { catalogParent: boolean },
): Promise<void> {
  const op = request.operation.operationId;
  const createsCatalogObject = request.operation.creates !== undefined;
  if ((createsCatalogObject || op === 'CreateWarehouse' || op === 'GrantRole') && project && !record) {
    throw notFound(`project ${q(project)}`, CREATE_HINT.project);
  }
  if (createsCatalogObject && project && request.id.length > 0) {
    const parent = request.id.slice(0, -1);
    if (parent.length > 0) {
      if (options.catalogParent) {
        const found = await services.registry.read<NamespaceRecord>(keys.namespace(project, parent));
        if (found?.value.state !== 'active') throw new NamespaceNotFoundError(`namespace ${fmtId(parent)} does not exist${CREATE_HINT.namespace}`);
      }
    } else if (!effectiveDefault) {
      throw notFound(`a warehouse for project ${q(project)}`, CREATE_HINT.warehouse);
    }
  }
  if ((op === 'CreateApiKey') && request.params.principal !== undefined) {
    if (!(await readPrincipal(services.registry, request.params.principal))) {
      throw notFound(`principal ${q(request.params.principal)}`, CREATE_HINT.principal);
    }
  }
  if (op === 'BindNamespace' && project && request.params.warehouse !== undefined) {
    if (!(await services.registry.read(keys.warehouse(project, request.params.warehouse)))) {
      throw notFound(`warehouse ${q(request.params.warehouse)} of project ${q(project)}`, CREATE_HINT.warehouse);
    }
  }
}

/** The warehouse a namespace or table is bound to: its top-level namespace's, or the default at the root. */
async function bindingOf(
  services: CatalogServices,
  project: string,
  kind: 'namespace' | 'table',
  id: readonly string[],
  effectiveDefault: string,
): Promise<string | undefined> {
  const depth = kind === 'table' ? id.length - 1 : id.length;
  if (depth <= 0) return effectiveDefault || undefined;
  const top = await services.registry.read<NamespaceRecord>(keys.namespace(project, id.slice(0, 1)));
  // A top-level namespace about to be created binds to the default warehouse.
  if (!top) return kind === 'namespace' && id.length === 1 ? effectiveDefault || undefined : undefined;
  return top.value.warehouse;
}
