import { optionalString } from '../catalog/params.js';
import type { CatalogServices } from '../catalog/services.js';
import { InvalidInputError } from '../errors.js';
import type { OperationRequest } from '../operations/types.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { validateName } from '../registry/keys.js';
import type { Registry } from '../registry/registry.js';
import { CREATE_HINT, notFound, q } from './errors.js';
import { govKeys } from './keys.js';
import { readPrincipal } from './principals.js';
import { requireProject } from './projects.js';
import { ROLES, type Grant, type GrantsRecord, type GrantScope, type Role } from './records.js';

/**
 * Grants: a role (admin / writer / reader) of a principal on a project, a namespace subtree or
 * one table. All of one principal's grants in a project are one record, so a request reads one
 * object; each record carries the project's uid, so it dies with the project.
 */

interface StoredGrants extends GrantsRecord {
  readonly projectUid?: string;
}

function parseGrant(body: OperationRequest['body']): { principal: string; grant: Grant } {
  const principal = optionalString(body.principal, 'principal');
  if (!principal) throw new InvalidInputError('principal is required');
  const role = body.role;
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    throw new InvalidInputError(`role must be one of ${ROLES.join(', ')}`);
  }
  const ids = (field: 'namespace' | 'table') => {
    const v = body[field];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.length === 0 || !v.every((p) => typeof p === 'string')) {
      throw new InvalidInputError(`${field} must be a non-empty array of names`);
    }
    v.forEach((p) => validateName(field, p));
    return v as string[];
  };
  const namespace = ids('namespace');
  const table = ids('table');
  if (namespace && table) throw new InvalidInputError('a grant is on a namespace or a table, not both');
  const scope: GrantScope = namespace ? { kind: 'namespace', id: namespace } : table ? { kind: 'table', id: table } : { kind: 'project' };
  return { principal, grant: { role: role as Role, scope } };
}

const sameGrant = (a: Grant, b: Grant) => a.role === b.role && JSON.stringify(a.scope) === JSON.stringify(b.scope);

export function grantView(principal: string, g: Grant) {
  return {
    principal,
    role: g.role,
    ...(g.scope.kind === 'namespace' ? { namespace: [...g.scope.id] } : {}),
    ...(g.scope.kind === 'table' ? { table: [...g.scope.id] } : {}),
  };
}

export async function grantRole(services: CatalogServices, project: string, body: OperationRequest['body']) {
  const { principal, grant } = parseGrant(body);
  const owner = await requireProject(services, project, CREATE_HINT.project);
  if (!(await readPrincipal(services.registry, principal))) throw notFound(`principal ${q(principal)}`, CREATE_HINT.principal);
  const key = govKeys.grants(project, principal);
  await services.registry.retrying(`grant ${grant.role} to ${q(principal)}`, async () => {
    const found = await services.registry.read<StoredGrants>(key);
    const current = found && found.value.projectUid === owner.value.uid ? found.value.grants : [];
    if (current.some((g) => sameGrant(g, grant))) return;
    const next: StoredGrants = { kind: 'grants', project, principal, projectUid: owner.value.uid, grants: [...current, grant] };
    if (found) await services.registry.replace(key, next, found.etag);
    else await services.registry.create(key, next);
  });
  return grantView(principal, grant);
}

export async function revokeRole(services: CatalogServices, project: string, body: OperationRequest['body']) {
  const { principal, grant } = parseGrant(body);
  await requireProject(services, project);
  const key = govKeys.grants(project, principal);
  const revoked = await services.registry.retrying(`revoke ${grant.role} from ${q(principal)}`, async () => {
    const found = await services.registry.read<StoredGrants>(key);
    if (!found || !found.value.grants.some((g) => sameGrant(g, grant))) return false;
    const next = { ...found.value, grants: found.value.grants.filter((g) => !sameGrant(g, grant)) };
    await services.registry.replace(key, next, found.etag);
    return true;
  });
  return { ...grantView(principal, grant), revoked };
}

export async function listGrants(services: CatalogServices, project: string, query: URLSearchParams) {
  const owner = await requireProject(services, project);
  const only = query.get('principal') ?? undefined;
  const out: ReturnType<typeof grantView>[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix: govKeys.grantsPrefix(project), startAfter, limit: 1000 });
    for (const obj of page.objects) {
      const rec = (await services.registry.read<StoredGrants>(obj.key))?.value;
      if (!rec || rec.projectUid !== owner.value.uid || (only && rec.principal !== only)) continue;
      out.push(...rec.grants.map((g) => grantView(rec.principal, g)));
    }
    if (!page.truncated || page.objects.length === 0) break;
    startAfter = page.objects[page.objects.length - 1].key;
  }
  if (owner.value.createdBy && (!only || only === owner.value.createdBy)) {
    out.unshift({ principal: owner.value.createdBy, role: 'admin' as Role });
  }
  return { grants: out };
}

/** The grants of one principal in one project that still belong to it (same project uid). */
export async function grantsOf(registry: Registry, project: string, projectUid: string | undefined, principal: string): Promise<readonly Grant[]> {
  let found;
  try {
    found = await registry.read<StoredGrants>(govKeys.grants(project, principal));
  } catch (err) {
    if (err instanceof ConditionFailedError) return [];
    throw err;
  }
  return found && found.value.projectUid === projectUid ? found.value.grants : [];
}
