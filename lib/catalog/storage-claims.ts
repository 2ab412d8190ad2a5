import { InvalidTableStateError } from '../errors.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { keys } from '../registry/keys.js';
import type { ProjectRecord, RootClaim, StorageClaimsRecord, WarehouseRecord } from '../registry/records.js';
import type { StorageRoot } from '../ports/storage-root.js';
import type { Versioned } from '../ports/object-store.js';
import { formatStorageRoot, rootInside, rootsOverlap } from '../registry/storage-roots.js';
import type { CatalogServices } from './services.js';
import { resolveStorageRoot } from './warehouses.js';

/**
 * The storage-claims index: ONE registry record listing the storage root of every warehouse of
 * every project (docs/protocols.md, "Storage roots never overlap"). A warehouse create adds its
 * root to it with a compare-and-swap after checking it against every root already there, so two
 * racing creates of overlapping roots cannot both pass: the second write's etag is stale, its
 * retry re-reads and sees the first. Claim-records keyed by root could not do this (put-if-absent
 * catches equal keys, not containment); a single record can, and warehouse creates are rare.
 *
 * The index is built from the warehouse records the first time anyone needs it, so warehouses
 * created before it existed (possibly overlapping) are in it; the deleting doors consult it.
 */

/** A claim whose warehouse record never appeared this long after: its create crashed. */
export const STALE_CLAIM_MS = 10 * 60_000;

/** The message every overlap refusal uses: it names no other project's warehouse (no oracle). */
const OVERLAP = 'overlaps the storage of another warehouse (of this or another project) or storage reserved by the platform';

/**
 * The index as it stands or, when it does not exist yet, as it would be built, without writing
 * it: what the overlap checks read, since read-only roles run them too (the orphan scan, a
 * per-operation read function) and may not create registry objects.
 */
async function currentStorageClaims(services: CatalogServices): Promise<StorageClaimsRecord> {
  const found = await services.registry.read<StorageClaimsRecord>(keys.storageClaims());
  return found ? found.value : { kind: 'storage-claims', claims: await everyWarehouseRoot(services) };
}

/** The index, built from every warehouse record (read strictly) and written when it does not exist yet: for the doors that change it. */
export async function readStorageClaims(services: CatalogServices): Promise<Versioned<StorageClaimsRecord>> {
  for (;;) {
    const found = await services.registry.read<StorageClaimsRecord>(keys.storageClaims());
    if (found) return found;
    const value: StorageClaimsRecord = { kind: 'storage-claims', claims: await everyWarehouseRoot(services) };
    try {
      return { value, etag: await services.registry.create(keys.storageClaims(), value) };
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err; // another request built it first
    }
  }
}

/** A root as this process compares it (the local default warehouse is stored relative). */
export const resolvedRoot = (services: CatalogServices, root: StorageRoot) => resolveStorageRoot(root, services.fileRootBase);

/** The platform's own reserved locations that `root` overlaps, if any. */
export function reservedOverlap(services: CatalogServices, root: StorageRoot): StorageRoot | undefined {
  return (services.reservedRoots ?? []).find((r) => rootsOverlap(r, root));
}

/**
 * Claims `storage` for warehouse `project/warehouse`: the conditional write described above.
 * Refuses (19) a root overlapping any other claim or a reserved root, and (2) a name already
 * claimed. A claim left by a crashed create (no warehouse record after STALE_CLAIM_MS) is dropped
 * on the way. Returns the claim, for `releaseStorageClaim` if the warehouse record then fails.
 */
export async function claimStorageRoot(
  services: CatalogServices,
  target: { project: string; warehouse: string; storage: StorageRoot },
  nameTaken: () => Error,
): Promise<RootClaim> {
  const root = resolvedRoot(services, target.storage);
  if (reservedOverlap(services, root)) throw new InvalidTableStateError(`storage_root ${formatStorageRoot(root)} ${OVERLAP}`);
  return services.registry.retrying(`claim storage root ${formatStorageRoot(root)}`, async () => {
    const index = await readStorageClaims(services);
    const now = services.now();
    const kept: RootClaim[] = [];
    for (const claim of index.value.claims) {
      const sameName = claim.project === target.project && claim.warehouse === target.warehouse;
      if (!sameName && !rootsOverlap(resolvedRoot(services, claim.storage), root)) {
        kept.push(claim);
        continue;
      }
      if (await isStale(services, claim, now)) continue;
      if (sameName) throw nameTaken();
      throw new InvalidTableStateError(`storage_root ${formatStorageRoot(root)} ${OVERLAP}`);
    }
    const claim: RootClaim = { project: target.project, warehouse: target.warehouse, storage: target.storage, id: services.newId(), claimedAt: now.toISOString() };
    await services.registry.replace(keys.storageClaims(), { ...index.value, claims: [...kept, claim] }, index.etag);
    return claim;
  });
}

async function isStale(services: CatalogServices, claim: RootClaim, now: Date): Promise<boolean> {
  if (Date.parse(claim.claimedAt) + STALE_CLAIM_MS > now.getTime()) return false;
  return !(await services.registry.read(keys.warehouse(claim.project, claim.warehouse)));
}

/** Removes warehouse `project/warehouse`'s claim `id` (absent: whichever it holds). */
export async function releaseStorageClaim(services: CatalogServices, project: string, warehouse: string, id?: string): Promise<void> {
  await services.registry.retrying(`release the storage claim of warehouse ${JSON.stringify(warehouse)}`, async () => {
    const index = await services.registry.read<StorageClaimsRecord>(keys.storageClaims());
    if (!index) return;
    const claims = index.value.claims.filter((c) => !(c.project === project && c.warehouse === warehouse && (id === undefined || c.id === id)));
    if (claims.length === index.value.claims.length) return;
    await services.registry.replace(keys.storageClaims(), { ...index.value, claims }, index.etag);
  });
}

/**
 * What overlaps warehouse `w`'s root: another claim, a reserved root, or (with `declared`) the
 * root lying outside the storage this deployment declares. Undefined when the root is its own.
 */
export async function sharedRootProblem(
  services: CatalogServices,
  w: Pick<WarehouseRecord, 'project' | 'name' | 'storage'>,
  options: { declared?: boolean } = {},
): Promise<string | undefined> {
  const root = resolvedRoot(services, w.storage);
  if (reservedOverlap(services, root)) return `${formatStorageRoot(root)} ${OVERLAP}`;
  if (options.declared && !insideDeploymentStorage(services, root)) {
    return `${formatStorageRoot(root)} is outside the storage this deployment declares (RASK_STORAGE_ROOTS)`;
  }
  const index = await currentStorageClaims(services);
  const other = index.claims.find(
    (c) => !(c.project === w.project && c.warehouse === w.name) && rootsOverlap(resolvedRoot(services, c.storage), root),
  );
  return other ? `${formatStorageRoot(root)} ${OVERLAP}` : undefined;
}

/**
 * The backstop of every door that deletes data (docs/governance.md, "Storage allotment"): refuses
 * (19) when warehouse `w`'s root is shared, so no drop, purge or orphan deletion through an alias
 * warehouse can reach another warehouse's bytes.
 */
export async function refuseSharedRoot(
  services: CatalogServices,
  w: Pick<WarehouseRecord, 'project' | 'name' | 'storage'>,
  what: string,
  options: { declared?: boolean } = {},
): Promise<void> {
  const problem = await sharedRootProblem(services, w, options);
  if (problem) throw new InvalidTableStateError(`refusing to ${what}: the warehouse's storage root ${problem}`);
}

/** Inside a declared storage root, or the platform's own default warehouse root. */
export function insideDeploymentStorage(services: CatalogServices, root: StorageRoot): boolean {
  const storage = services.storage;
  if (!storage) return false;
  const platform = storage.platformWarehouse && resolvedRoot(services, storage.platformWarehouse);
  return storage.roots.some((r) => rootInside(root, r)) || (platform !== undefined && rootInside(root, platform));
}

/** Whether `w` is the default warehouse the platform created at start-up (by its root). */
export function isPlatformWarehouse(services: CatalogServices, w: Pick<WarehouseRecord, 'storage'>): boolean {
  const platform = services.storage?.platformWarehouse;
  if (!platform) return false;
  const [a, b] = [resolvedRoot(services, platform), resolvedRoot(services, w.storage)];
  return rootInside(a, b) && rootInside(b, a);
}

/** Every warehouse of every project, read strictly (an unreadable record stops the caller). */
export async function everyWarehouseRoot(services: CatalogServices): Promise<RootClaim[]> {
  const out: RootClaim[] = [];
  const at = services.now().toISOString();
  for (const projectKey of await childKeys(services, keys.projectsPrefix())) {
    const p = await services.registry.read<ProjectRecord>(projectKey);
    if (!p) continue;
    for (const whKey of await childKeys(services, keys.warehousesPrefix(p.value.name))) {
      const w = await services.registry.read<WarehouseRecord>(whKey);
      if (!w) continue;
      if (!w.value.storage || typeof w.value.storage !== 'object') throw new InvalidTableStateError(`registry record ${whKey} has no storage root`);
      out.push({ project: w.value.project, warehouse: w.value.name, storage: w.value.storage, id: `existing:${whKey}`, claimedAt: w.value.createdAt ?? at });
    }
  }
  return out;
}

async function childKeys(services: CatalogServices, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.store.list({ prefix, startAfter, limit: 1000 });
    for (const o of page.objects) if (!o.key.slice(prefix.length).includes('/')) out.push(o.key);
    if (!page.truncated || page.objects.length === 0) return out;
    startAfter = page.objects[page.objects.length - 1].key;
  }
}
