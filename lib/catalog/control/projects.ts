import { forgetProject } from './project-cache.js';
import type { CatalogServices } from '../services.js';
import { InvalidInputError } from '../../errors.js';
import { jobContext } from '../../queue/context.js';
import type { Caller } from '../../contract/request.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { encodeSegment, keys, validateName } from '../../registry/keys.js';
import type { ProjectRecord, WarehouseRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import { alreadyExists, CREATE_HINT, notEmpty, notFound, q } from './errors.js';
import { nextProtection, refuseProtectedDelete, withProtection } from './protection-flag.js';
import { allottedRoots, checkAllotment } from './allotment.js';
import { formatStorageRoot } from '../../registry/storage-roots.js';
import type { StorageRoot } from '../../ports/storage-root.js';

/** Projects: the tenants. Creates are top-down and deletes bottom-up with no cascade at all. */

export async function readProject(services: CatalogServices, name: string): Promise<Versioned<ProjectRecord> | undefined> {
  return services.registry.read<ProjectRecord>(keys.project(name));
}

export async function requireProject(services: CatalogServices, name: string, hint = ''): Promise<Versioned<ProjectRecord>> {
  const found = await readProject(services, name);
  if (!found) throw notFound(`project ${q(name)}`, hint);
  return found;
}

export function projectView(p: ProjectRecord, effectiveDefault?: string, services?: CatalogServices) {
  return {
    name: p.name,
    ...(p.description !== undefined ? { description: p.description } : {}),
    default_warehouse: p.defaultWarehouse ?? effectiveDefault ?? null,
    deactivated_warehouses: [...(p.deactivatedWarehouses ?? [])],
    protected: p.protection !== undefined,
    created_at: p.createdAt,
    ...(p.createdBy ? { created_by: p.createdBy } : {}),
    // Where its warehouses may lie (docs/governance.md, "Storage allotment").
    ...(services ? { storage_allotment: allottedRoots(services, p).map(formatStorageRoot) } : {}),
  };
}

/** CreateProject's input, decoded (lib/operations/handlers-control.ts). */
export interface CreateProjectInput {
  readonly name: string;
  readonly description?: string;
  /** Set (`true`) or leave unprotected; absent says nothing (lib/catalog/control/protection-flag.ts). */
  readonly protected?: boolean;
  /** Extra allotment (platform administrators only), as parsed; absent when the body does not mention it. */
  readonly storageRoots?: readonly StorageRoot[];
}

/** UpdateProject's input, decoded: each field absent when the body does not change it. */
export interface UpdateProjectInput {
  readonly description?: string;
  readonly defaultWarehouse?: string;
  readonly protected?: boolean;
  readonly storageRoots?: readonly StorageRoot[];
}

/** A listing door's page: where to start and how many (absent: everything). */
export interface PageInput {
  readonly pageToken?: string;
  readonly limit?: number;
}

/** Writes the record with its creator in it: the creator's admin grant is part of the same write. */
export async function createProject(services: CatalogServices, caller: Caller | undefined, input: CreateProjectInput) {
  const { name, description } = input;
  validateName('project', name);
  const protection = nextProtection(services, caller, input.protected, undefined);
  const storageRoots = await checkAllotment(services, input.storageRoots, caller);
  const record: ProjectRecord = withProtection({
    kind: 'project',
    name,
    createdAt: services.now().toISOString(),
    uid: services.newId(),
    // Every table it will hold keeps its has-data marker (lib/catalog/protocols/markers.ts).
    tableMarkers: true,
    ...(description !== undefined ? { description } : {}),
    ...(storageRoots?.length ? { storageRoots } : {}),
    ...(caller && caller.via !== 'auth-off' ? { createdBy: caller.principal } : {}),
  } as ProjectRecord, protection);
  try {
    await services.registry.create(keys.project(name), record);
    forgetProject(services.registry, name);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw alreadyExists(`project ${q(name)}`);
    throw err;
  }
  return projectView(record, undefined, services);
}

export async function listProjects(services: CatalogServices, page: PageInput) {
  const listed = await services.registry.listNames(keys.projectsPrefix(), { startAfter: page.pageToken, limit: page.limit, encode: encodeSegment });
  return { projects: listed.names, page_token: listed.more ? listed.names[listed.names.length - 1] : null };
}

export async function describeProject(services: CatalogServices, name: string) {
  validateName('project', name);
  const found = await requireProject(services, name);
  return projectView(found.value, services.project === name ? services.defaultWarehouse || undefined : undefined, services);
}

export async function updateProject(services: CatalogServices, name: string, input: UpdateProjectInput, caller?: Caller) {
  validateName('project', name);
  const { description, defaultWarehouse } = input;
  const storageRoots = await checkAllotment(services, input.storageRoots, caller);
  if (defaultWarehouse !== undefined) {
    validateName('warehouse', defaultWarehouse);
    const wh = await services.registry.read<WarehouseRecord>(keys.warehouse(name, defaultWarehouse));
    if (!wh) throw notFound(`warehouse ${q(defaultWarehouse)} of project ${q(name)}`, CREATE_HINT.warehouse);
  }
  return services.registry.retrying(`update project ${q(name)}`, async () => {
    const found = await requireProject(services, name);
    const next: ProjectRecord = withProtection(
      {
        ...found.value,
        ...(description !== undefined ? { description } : {}),
        ...(defaultWarehouse !== undefined ? { defaultWarehouse } : {}),
        // Replaces the extra allotment; warehouses already inside a withdrawn root keep working.
        ...(storageRoots !== undefined ? { storageRoots } : {}),
      },
      nextProtection(services, caller, input.protected, found.value.protection),
    );
    await services.registry.replace(keys.project(name), next, found.etag);
    forgetProject(services.registry, name);
    return projectView(next, undefined, services);
  });
}

/**
 * Refuses while anything lives in the project (warehouses, namespaces, tables, claims, queued
 * jobs), naming it: a project delete never cascades (docs/rules.md rule 2). What remains afterwards
 * (grants, finished jobs) is bookkeeping and goes with it; grants carry the project's uid, so
 * any left by a crash never apply to a re-created project of the same name.
 */
export async function deleteProject(services: CatalogServices, name: string, options: { force?: boolean } = {}) {
  validateName('project', name);
  const found = await requireProject(services, name);
  refuseProtectedDelete('project', name, found.value, options.force ?? false, `/v1/projects/${name}/update`);
  if (!found.value.uid) {
    // Only the start-up default project has no uid (lib/registry/layout.ts writes it).
    throw new InvalidInputError(`project ${q(name)} is this deployment's default project and cannot be deleted`);
  }
  const contents = await describeProjectContents(services, name);
  if (contents) throw notEmpty(`project ${q(name)}`, contents);
  await services.registry.retrying(`delete project ${q(name)}`, async () => {
    const now = await requireProject(services, name);
    // Protected meanwhile (the check above read an older record): refuse like the check would have.
    refuseProtectedDelete('project', name, now.value, options.force ?? false, `/v1/projects/${name}/update`);
    await services.registry.remove(keys.project(name), now.etag);
    forgetProject(services.registry, name);
  });
  await removeLeftovers(services, name);
  return {};
}

async function describeProjectContents(services: CatalogServices, name: string): Promise<string | undefined> {
  const store = services.registry.store;
  const warehouses = await services.registry.listNames(keys.warehousesPrefix(name), { limit: 5, encode: encodeSegment });
  if (warehouses.names.length) {
    return `warehouses ${warehouses.names.map(q).join(', ')}${warehouses.more ? ', …' : ''}; delete them first (POST /v1/warehouses/{name}/delete)`;
  }
  const tree = await store.list({ prefix: keys.subtree(name, []), limit: 1 });
  if (tree.objects.length) return `catalog objects such as ${tree.objects[0].key}`;
  // Through the project's own queue: on AWS its jobs are in DynamoDB, not in the registry.
  const jobs = await jobContext({ ...services, project: name }).queue.listLive({ limit: 1 });
  if (jobs.jobs.length || jobs.unreadable.length) return 'queued or running jobs';
  return undefined;
}

async function removeLeftovers(services: CatalogServices, name: string): Promise<void> {
  const store = services.registry.store;
  const prefix = `p/${encodeSegment(name)}/`;
  for (;;) {
    const page = await store.list({ prefix, limit: 100 });
    if (page.objects.length === 0) return;
    await Promise.all(page.objects.map((o) => store.delete(o.key)));
  }
}
