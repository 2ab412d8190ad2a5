import { forgetProject } from './project-cache.js';
import { NO_QUOTAS, reserveQuota } from '../quotas.js';
import { createNamespace } from '../namespaces/create.js';
import { readNamespace } from '../namespaces/record.js';
import { fmtId } from '../ids.js';
import type { CatalogServices } from '../services.js';
import { ConcurrentModificationError, InvalidInputError, InvalidTableStateError, NamespaceNotFoundError } from '../../errors.js';
import type { Caller } from '../../contract/request.js';
import type { StorageRoot } from '../../ports/storage-root.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { encodeSegment, keys, parseTreeKey, validateName } from '../../registry/keys.js';
import type { NamespaceRecord, ProjectRecord, WarehouseRecord } from '../../registry/records.js';
import { alreadyExists, CREATE_HINT, notEmpty, notFound, q } from './errors.js';
import { nextProtection, refuseProtectedDelete, withProtection } from './protection-flag.js';
import { requireProject, type PageInput } from './projects.js';
import { formatStorageRoot, rootsOverlap } from '../../registry/storage-roots.js';
import { claimStorageRoot, everyWarehouseRoot, readStorageClaims, refuseSharedRoot, releaseStorageClaim, resolvedRoot } from '../storage-claims.js';
import { canonicalRoot, requireAllotted } from './allotment.js';

/**
 * Warehouses: one storage root each, many per project. Creates need their project (404 naming
 * the door that creates it); deletes refuse while namespaces are bound (409 naming them); a
 * purge first proves that no other warehouse of any project and no reserved root shares the
 * storage (docs/rules.md rule 7), reading every record strictly (rule 8).
 */

export const isDeactivated = (project: ProjectRecord, warehouse: string) =>
  (project.deactivatedWarehouses ?? []).includes(warehouse);

function view(w: WarehouseRecord, project: ProjectRecord) {
  return {
    name: w.name,
    project: w.project,
    storage_root: formatStorageRoot(w.storage),
    managed_versioning: w.managedVersioning,
    trash_grace_days: w.trashGraceDays,
    protected: w.protection !== undefined,
    state: isDeactivated(project, w.name) ? 'deactivated' : 'active',
    created_at: w.createdAt,
  };
}

async function requireWarehouseRecord(services: CatalogServices, project: string, name: string) {
  validateName('warehouse', name);
  const found = await services.registry.read<WarehouseRecord>(keys.warehouse(project, name));
  if (!found) throw notFound(`warehouse ${q(name)} of project ${q(project)}`);
  return found;
}

/** CreateWarehouse's input, decoded (lib/operations/handlers-control.ts). */
export interface CreateWarehouseInput {
  readonly name: string;
  /** As parsed (lib/registry/storage-roots.ts); recorded by its real path. */
  readonly storageRoot: StorageRoot;
  readonly managedVersioning?: boolean;
  readonly trashGraceDays?: number;
  readonly protected?: boolean;
}

/** UpdateWarehouse's input, decoded: each field absent when the request does not change it. */
export interface UpdateWarehouseInput {
  readonly managedVersioning?: boolean;
  readonly trashGraceDays?: number;
  readonly protected?: boolean;
}

export async function createWarehouse(services: CatalogServices, project: string, input: CreateWarehouseInput, caller?: Caller) {
  const { name } = input;
  validateName('warehouse', name);
  const storage = await canonicalRoot(input.storageRoot);
  const managedVersioning = input.managedVersioning ?? true;
  // Omitted: the deployment's grace, as the default warehouse has it (not a grace of its own).
  const trashGraceDays = input.trashGraceDays ?? services.trashGraceDays ?? 0;
  try {
    services.storageFor(storage);
  } catch (err) {
    throw new InvalidInputError(`storage_root ${JSON.stringify(formatStorageRoot(input.storageRoot))} cannot be used by this deployment: ${(err as Error).message}`);
  }
  const owner = await requireProject(services, project, CREATE_HINT.project);
  // Storage is allotted, never claimed (docs/governance.md): inside the project's allotment (403),
  // then clear of every other warehouse's root and the platform's (409, the claims index).
  requireAllotted(services, owner.value, storage);
  const protection = nextProtection(services, caller, input.protected, undefined);
  const record: WarehouseRecord = withProtection({
    kind: 'warehouse',
    project,
    name,
    storage,
    managedVersioning,
    trashGraceDays,
    createdAt: services.now().toISOString(),
  } as WarehouseRecord, protection);
  const taken = () => alreadyExists(`warehouse ${q(name)} of project ${q(project)}`);
  if (await services.registry.read(keys.warehouse(project, name))) throw taken();
  const claim = await claimStorageRoot(services, { project, warehouse: name, storage }, taken);
  try {
    await services.registry.create(keys.warehouse(project, name), record);
  } catch (err) {
    await releaseStorageClaim(services, project, name, claim.id);
    if (err instanceof ConditionFailedError) throw taken();
    throw err;
  }
  // A project's first warehouse becomes where its top-level namespaces bind.
  if (!owner.value.defaultWarehouse && !(project === services.project && services.defaultWarehouse)) {
    await services.registry.retrying(`set the default warehouse of ${q(project)}`, async () => {
      const now = await requireProject(services, project);
      if (now.value.defaultWarehouse) return;
      await services.registry.replace(keys.project(project), { ...now.value, defaultWarehouse: name }, now.etag);
      forgetProject(services.registry, project);
    });
  }
  return view(record, owner.value);
}

export async function listWarehouses(services: CatalogServices, project: string, page: PageInput) {
  await requireProject(services, project);
  const listed = await services.registry.listNames(keys.warehousesPrefix(project), { startAfter: page.pageToken, limit: page.limit, encode: encodeSegment });
  return { warehouses: listed.names, page_token: listed.more ? listed.names[listed.names.length - 1] : null };
}

export async function describeWarehouse(services: CatalogServices, project: string, name: string) {
  const owner = await requireProject(services, project);
  return view((await requireWarehouseRecord(services, project, name)).value, owner.value);
}

/** The storage root never changes (tables store locations under it): the decoder refuses `storage_root`. */
export async function updateWarehouse(services: CatalogServices, project: string, name: string, input: UpdateWarehouseInput, caller?: Caller) {
  const { managedVersioning, trashGraceDays } = input;
  const owner = await requireProject(services, project);
  return services.registry.retrying(`update warehouse ${q(name)}`, async () => {
    const found = await requireWarehouseRecord(services, project, name);
    const next: WarehouseRecord = withProtection(
      {
        ...found.value,
        ...(managedVersioning !== undefined ? { managedVersioning } : {}),
        ...(trashGraceDays !== undefined ? { trashGraceDays } : {}),
      },
      nextProtection(services, caller, input.protected, found.value.protection),
    );
    await services.registry.replace(keys.warehouse(project, name), next, found.etag);
    return view(next, owner.value);
  });
}

/** Deactivate (quarantine) or activate: one compare-and-swap of the project's list. */
export async function setWarehouseActive(services: CatalogServices, project: string, name: string, active: boolean) {
  await requireWarehouseRecord(services, project, name);
  return services.registry.retrying(`${active ? 'activate' : 'deactivate'} warehouse ${q(name)}`, async () => {
    const owner = await requireProject(services, project);
    const others = (owner.value.deactivatedWarehouses ?? []).filter((w) => w !== name);
    const next: ProjectRecord = { ...owner.value, deactivatedWarehouses: active ? others : [...others, name] };
    await services.registry.replace(keys.project(project), next, owner.etag);
    forgetProject(services.registry, project);
    return { name, project, state: active ? 'active' : 'deactivated' };
  });
}

/** Every top-level namespace of the project, read strictly (an unreadable one throws). */
async function topLevelNamespaces(services: CatalogServices, project: string): Promise<NamespaceRecord[]> {
  const out: NamespaceRecord[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix: keys.childNamespacesPrefix(project, []), startAfter, limit: 1000 });
    for (const obj of page.objects) {
      if (!parseTreeKey(project, obj.key)) continue; // a drop mark beside a record (keys.ts)
      const found = await services.registry.read<NamespaceRecord>(obj.key);
      if (found) out.push(found.value);
    }
    if (!page.truncated || page.objects.length === 0) return out;
    startAfter = page.objects[page.objects.length - 1].key;
  }
}

export async function deleteWarehouse(
  services: CatalogServices,
  project: string,
  name: string,
  options: { force?: boolean; purge?: boolean } = {},
) {
  const purge = options.purge ?? false;
  const owner = await requireProject(services, project);
  const found = await requireWarehouseRecord(services, project, name);
  // Protection first (before any content check), so a protected warehouse is never purged.
  refuseProtectedDelete('warehouse', name, found.value, options.force ?? false, `/v1/warehouses/${name}/update`);
  const effectiveDefault = owner.value.defaultWarehouse ?? (project === services.project ? services.defaultWarehouse : undefined);

  const bound = (await topLevelNamespaces(services, project)).filter((ns) => ns.warehouse === name).map((ns) => ns.id[0]);
  if (bound.length) {
    throw notEmpty(`warehouse ${q(name)}`, `namespaces ${bound.slice(0, 5).map(q).join(', ')}${bound.length > 5 ? ', …' : ''} bound to it; drop them or bind them elsewhere first`);
  }
  const claims = await services.registry.store.list({ prefix: `${keys.locationClaimsPrefix(project)}${encodeSegment(name)}/`, limit: 1 });
  if (claims.objects.length) throw notEmpty(`warehouse ${q(name)}`, 'table locations still claimed (tables being created, renamed or purged)');
  if (effectiveDefault === name) {
    const rootTables = await services.registry.listNames(keys.tablesPrefix(project, []), { limit: 5, encode: encodeSegment });
    if (rootTables.names.length) throw notEmpty(`warehouse ${q(name)}`, `root-level tables ${rootTables.names.map(q).join(', ')}`);
    if (!owner.value.defaultWarehouse) {
      // The deployment's configured default (RASK_WAREHOUSE): start-up would re-create it.
      throw new InvalidTableStateError(
        `warehouse ${q(name)} is this deployment's default warehouse (RASK_WAREHOUSE) and cannot be deleted`,
      );
    }
  }

  if (purge) {
    await proveSoleOwnership(services, found.value);
    await purgeRoot(services, found.value);
  }
  // The claim this warehouse holds now, released by its id after the record goes: a create of the
  // same name that lands in between (and takes the root over) keeps its own claim.
  const held = (await readStorageClaims(services)).value.claims.find((c) => c.project === project && c.warehouse === name);
  await services.registry.retrying(`delete warehouse ${q(name)}`, async () => {
    const now = await services.registry.read<WarehouseRecord>(keys.warehouse(project, name));
    if (now) refuseProtectedDelete('warehouse', name, now.value, options.force ?? false, `/v1/warehouses/${name}/update`);
    if (now) await services.registry.remove(keys.warehouse(project, name), now.etag);
  });
  // After the record: a crash between the two leaves a claim without a warehouse, which keeps
  // the root reserved until the next create finds it stale (lib/catalog/storage-claims.ts).
  if (held) await releaseStorageClaim(services, project, name, held.id);
  await services.registry.retrying(`forget warehouse ${q(name)} in project ${q(project)}`, async () => {
    const now = await requireProject(services, project);
    const deactivated = (now.value.deactivatedWarehouses ?? []).filter((w) => w !== name);
    if (now.value.defaultWarehouse !== name && deactivated.length === (now.value.deactivatedWarehouses ?? []).length) return;
    const { defaultWarehouse, ...rest } = now.value;
    const next: ProjectRecord = { ...rest, deactivatedWarehouses: deactivated, ...(defaultWarehouse !== name && defaultWarehouse ? { defaultWarehouse } : {}) };
    await services.registry.replace(keys.project(project), next, now.etag);
    forgetProject(services.registry, project);
  });
  return { name, project, purged: purge };
}

/**
 * Rule 7 (docs/rules.md): no other warehouse, of this or any project, and no reserved root may share the
 * storage. Every project and warehouse record is read strictly: one that cannot be read stops
 * the purge (it might be the one sharing the bucket).
 */
export async function proveSoleOwnership(services: CatalogServices, target: WarehouseRecord): Promise<void> {
  // The claims index, and (when the deployment declares its storage) nothing outside it: a
  // warehouse recorded over a host directory before allotments existed is never emptied.
  await refuseSharedRoot(services, target, `purge ${formatStorageRoot(target.storage)}`, { declared: services.storage !== undefined });
  // And every record itself, read strictly, in case one was written without a claim (an older server).
  for (const w of await everyWarehouseRoot(services)) {
    if (w.project === target.project && w.warehouse === target.name) continue;
    if (rootsOverlap(resolvedRoot(services, w.storage), resolvedRoot(services, target.storage))) {
      // Generic: the other warehouse may be another project's (no cross-tenant names).
      throw new InvalidTableStateError(
        `refusing to purge ${formatStorageRoot(target.storage)}: another warehouse (of this or another project) shares its storage`,
      );
    }
  }
}

async function purgeRoot(services: CatalogServices, target: WarehouseRecord): Promise<void> {
  const store = services.storageFor(target.storage);
  for (;;) {
    const page = await store.list({ prefix: '', limit: 1000 });
    if (page.objects.length === 0) return;
    await Promise.all(page.objects.map((o) => store.delete(o.key)));
  }
}

/**
 * Binds a top-level namespace to this warehouse: creates it there when absent, or moves it
 * while it is empty. The move reuses the drop protocol's mark: the record is `dropping` while
 * emptiness is checked, so a child created meanwhile withdraws itself (docs/architecture.md).
 */
export async function bindNamespace(
  services: CatalogServices,
  project: string,
  warehouse: string,
  input: { readonly namespace: string; readonly properties?: Readonly<Record<string, string>> },
) {
  const id = [input.namespace];
  validateName('namespace', id[0]);
  await requireWarehouseRecord(services, project, warehouse);
  const scoped: CatalogServices = { ...services, project, defaultWarehouse: warehouse };
  const existing = await readNamespace(scoped, id);
  if (!existing) {
    // A namespace it creates is one more of the project's: it takes a quota slot like CreateNamespace (lib/catalog/quotas.ts).
    const hold = await reserveQuota(scoped, 'namespaces', keys.namespace(project, id), services.limits?.quotas ?? NO_QUOTAS);
    try {
      await createNamespace(scoped, { id, mode: 'create', properties: { ...input.properties } });
    } catch (err) {
      await hold?.failed(err);
      throw err;
    }
    return { namespace: id, warehouse, project, created: true };
  }
  if (existing.value.warehouse === warehouse) return { namespace: id, warehouse, project, created: false };
  const key = keys.namespace(project, id);
  const marked = await services.registry.retrying(`bind namespace ${fmtId(id)}`, async () => {
    const now = await readNamespace(scoped, id);
    if (now?.value.state !== 'active') throw new NamespaceNotFoundError(`namespace ${fmtId(id)} does not exist`);
    const record: NamespaceRecord = { ...now.value, state: 'dropping' };
    return { record, etag: await services.registry.replace(key, record, now.etag) };
  });
  const inside = await services.registry.store.list({ prefix: keys.subtree(project, id), limit: 1 });
  const next: NamespaceRecord = inside.objects.length
    ? { ...marked.record, state: 'active' }
    : { ...marked.record, state: 'active', warehouse };
  try {
    await services.registry.replace(key, next, marked.etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    throw new ConcurrentModificationError(`namespace ${fmtId(id)} changed while it was being bound; retry`);
  }
  if (inside.objects.length) {
    const parsed = parseTreeKey(project, inside.objects[0].key);
    throw notEmpty(`namespace ${fmtId(id)}`, `${parsed ? `${parsed.kind} ${fmtId(parsed.id)}` : 'objects'}; only an empty namespace can move to another warehouse`);
  }
  return { namespace: id, warehouse, project, created: false };
}
