import type { CatalogServices } from '../services.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import type { Registry } from '../../registry/registry.js';
import { CREATE_HINT, notFound, q } from './errors.js';
import { govKeys } from '../../registry/principal-keys.js';
import { readPrincipal } from './principals.js';
import { requireProject } from './projects.js';
import type { Grant, GrantsRecord, GrantScope, Role } from '../../registry/principal-records.js';
import { keys } from '../../registry/keys.js';
import type { NamespaceRecord, NamespaceTrashRecord, ProjectRecord, TableRecord } from '../../registry/records.js';

/**
 * Grants: a role (admin / writer / reader) of a principal on a project, a namespace subtree or
 * one table. All of one principal's grants in a project are one record, so a request reads one
 * object; each record carries the project's uid, so it dies with the project.
 */

export interface StoredGrants extends GrantsRecord {
  readonly projectUid?: string;
}

/**
 * Whether a stored grants record belongs to this project, not to an earlier one of the same name
 * (deleted, then created again: a new uid). The start-up default project has no uid
 * (lib/registry/layout.ts) and cannot be deleted, so its records carry none either and belong to
 * it; a record written for a project with a uid never matches one without (docs/governance.md,
 * "Grants in the default project").
 */
export const belongsTo = (stored: StoredGrants, project: ProjectRecord): boolean => stored.projectUid === project.uid;

/** GrantRole's and RevokeRole's input, decoded (lib/operations/handlers-control.ts). */
export interface GrantInput {
  readonly principal: string;
  readonly grant: Grant;
}

/** Same role on the same name (the uid aside: granting again replaces a stale grant, revoking removes it). */
const sameGrant = (a: Grant, b: Grant) => a.role === b.role && JSON.stringify(a.scope) === JSON.stringify(b.scope);

export function grantView(principal: string, g: Grant) {
  return {
    principal,
    role: g.role,
    ...(g.scope.kind === 'namespace' ? { namespace: [...g.scope.id] } : {}),
    ...(g.scope.kind === 'table' ? { table: [...g.scope.id] } : {}),
  };
}

export async function grantRole(services: CatalogServices, project: string, input: GrantInput) {
  const { principal, grant: named } = input;
  const owner = await requireProject(services, project, CREATE_HINT.project);
  if (!(await readPrincipal(services.registry, principal))) throw notFound(`principal ${q(principal)}`, CREATE_HINT.principal);
  // A grant on a namespace or table is bound to the object there now; none there: refused.
  const uid = named.scope.kind === 'project' ? undefined : await liveUid(services.registry, project, named.scope);
  if (named.scope.kind !== 'project' && uid === undefined) {
    throw notFound(`${named.scope.kind} ${JSON.stringify(named.scope.id)} of project ${q(project)}`, '; a grant is made on an object that exists');
  }
  const grant: Grant = uid === undefined ? named : { ...named, uid };
  const key = govKeys.grants(project, principal);
  await services.registry.retrying(`grant ${grant.role} to ${q(principal)}`, async () => {
    const found = await services.registry.read<StoredGrants>(key);
    const current = found && belongsTo(found.value, owner.value) ? found.value.grants : [];
    if (current.some((g) => sameGrant(g, grant) && g.uid === grant.uid)) return;
    // The same role on the same name, bound to an object no longer there, is replaced.
    const kept = current.filter((g) => !sameGrant(g, grant));
    const next: StoredGrants = { kind: 'grants', project, principal, projectUid: owner.value.uid, grants: [...kept, grant] };
    if (found) await services.registry.replace(key, next, found.etag);
    else await services.registry.create(key, next);
  });
  return grantView(principal, grant);
}

export async function revokeRole(services: CatalogServices, project: string, input: GrantInput) {
  const { principal, grant } = input;
  await requireProject(services, project);
  const key = govKeys.grants(project, principal);
  const revoked = await services.registry.retrying(`revoke ${grant.role} from ${q(principal)}`, async () => {
    const found = await services.registry.read<StoredGrants>(key);
    if (!found?.value.grants.some((g) => sameGrant(g, grant))) return false;
    const next = { ...found.value, grants: found.value.grants.filter((g) => !sameGrant(g, grant)) };
    await services.registry.replace(key, next, found.etag);
    return true;
  });
  return { ...grantView(principal, grant), revoked };
}

export async function listGrants(services: CatalogServices, project: string, filter: { readonly principal?: string } = {}) {
  const owner = await requireProject(services, project);
  const only = filter.principal;
  const out: (ReturnType<typeof grantView> & { stale?: true })[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix: govKeys.grantsPrefix(project), startAfter, limit: 1000 });
    for (const obj of page.objects) {
      const rec = (await services.registry.read<StoredGrants>(obj.key))?.value;
      if (!rec || !belongsTo(rec, owner.value) || (only && rec.principal !== only)) continue;
      // A grant whose object no longer holds the name counts for nothing: say so (revoke or re-grant it).
      const bound = await boundGrants(services.registry, project, rec.grants, rec.grants.map((g) => (g.scope.kind === 'project' ? [] : g.scope.id)));
      out.push(...rec.grants.map((g) => (bound.includes(g) ? grantView(rec.principal, g) : { ...grantView(rec.principal, g), stale: true as const })));
    }
    if (!page.truncated || page.objects.length === 0) break;
    startAfter = page.objects[page.objects.length - 1].key;
  }
  if (owner.value.createdBy && (!only || only === owner.value.createdBy)) {
    out.unshift({ principal: owner.value.createdBy, role: 'admin' as Role });
  }
  return { grants: out };
}

/**
 * One principal's stored grants in one project, as read (the project's uid checked later, so the
 * read can run beside the project record's; lib/governance/guard.ts).
 */
export async function readGrants(registry: Registry, project: string, principal: string): Promise<StoredGrants | undefined> {
  try {
    return (await registry.read<StoredGrants>(govKeys.grants(project, principal)))?.value;
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
}

/**
 * The grants of a record that still belong to the project (`belongsTo`). Grants must be read the
 * same way here, where the guard decides, as where GrantRole writes and ListGrants lists them:
 * the guard once also required a uid, so every grant in the default project was silently ignored.
 */
export const grantsIn = (stored: StoredGrants | undefined, project: ProjectRecord): readonly Grant[] =>
  stored && belongsTo(stored, project) ? stored.grants : [];

// ---- Grants bound to their object's uid (issue 24; docs/governance.md, "Destinations, force and tenants")

/** The uid of the live (active) object a namespace or table scope names, if any. */
async function liveUid(registry: Registry, project: string, scope: Exclude<GrantScope, { kind: 'project' }>): Promise<string | undefined> {
  if (scope.kind === 'namespace') {
    const found = await registry.read<NamespaceRecord>(keys.namespace(project, scope.id));
    return found?.value.state === 'active' ? found.value.uid : undefined;
  }
  const found = await registry.read<TableRecord>(keys.table(project, scope.id));
  return found && (found.value.state === undefined || found.value.state === 'active') ? found.value.uid : undefined;
}

/**
 * Whether the object a grant was made on still holds its name: the record there carries the
 * grant's uid, or — nothing there — the name's trash holds that uid (a recoverable drop keeps its
 * grants, docs/rules.md rule 5, so the owner can see the deadline and undrop). A record of another uid
 * (a re-created name) or no trace at all (destroyed, renamed away) and the grant counts for nothing.
 */
async function stillBound(registry: Registry, project: string, grant: Grant & { scope: Exclude<GrantScope, { kind: 'project' }> }): Promise<boolean> {
  const { scope, uid } = grant;
  if (scope.kind === 'table') {
    const found = await registry.read<TableRecord>(keys.table(project, scope.id));
    if (found) return found.value.uid === uid;
    return (await registry.store.head(keys.trash(project, scope.id, uid!))) !== undefined;
  }
  const found = await registry.read<NamespaceRecord>(keys.namespace(project, scope.id));
  if (found) return found.value.uid === uid;
  const page = await registry.store.list({ prefix: keys.namespaceTrashOf(project, scope.id), limit: 1000 });
  for (const object of page.objects) {
    if ((await registry.read<NamespaceTrashRecord>(object.key))?.value.namespace.uid === uid) return true;
  }
  return false;
}

/** Whether a scope decides anything about the object at `id` (it is `id` or one of its namespaces). */
const covers = (scope: GrantScope, id: readonly string[]) =>
  scope.kind !== 'project' && scope.id.length <= id.length && scope.id.every((part, i) => part === id[i]) && (scope.kind === 'namespace' || scope.id.length === id.length);

/**
 * `grants` without those bound to an object that no longer holds its name, among the grants
 * that bear on the objects at `ids` (a request's target and destination). Only those are read
 * (in parallel, one read each); the rest cannot decide this request and are kept as they are.
 */
export async function boundGrants(registry: Registry, project: string, grants: readonly Grant[], ids: readonly (readonly string[])[]): Promise<readonly Grant[]> {
  const checks = grants.map((g) =>
    g.uid !== undefined && g.scope.kind !== 'project' && ids.some((id) => covers(g.scope, id))
      ? stillBound(registry, project, g as Grant & { scope: Exclude<GrantScope, { kind: 'project' }> })
      : true,
  );
  const keep = await Promise.all(checks);
  return grants.filter((_, i) => keep[i]);
}
