/**
 * The orphan scan: lists each warehouse's storage and reports the objects nothing reaches, with
 * their size and age. Report-first (docs/rules.md rule 13): it deletes only with `delete: true`, and then
 * re-checks every candidate first.
 *
 * Reachable, for a warehouse W of project P (every warehouse of every project in the registry):
 *   - everything under a dataset root: the location of a table record bound to W, or of a
 *     location claim on W (pending, held or purging: a claim protects its bytes), or (once
 *     recoverable drops exist) of a trash record;
 *   - inside a dataset root, what its committed manifests name (every version, every branch):
 *     data files, deletion files, index directories; plus the manifests themselves and the
 *     `_versions/latest_version_hint.json` Lance keeps beside them.
 *   - everything under another warehouse's storage root nested inside W's;
 *   - the `__manifest/` table LanceDB's own connection keeps in a directory holding a dataset.
 *
 * Never candidates, whatever the manifests say (each has a test that fails without it):
 *   `_refs/…` (tags pin versions: `_refs/tags/*.json`; branches), `.lance-reserved`,
 *   `data/<stem>/*.blob` (blob-column sidecars, not named by the fragment's data files),
 *   staging manifests (anything in `_versions/` that is not a committed manifest) younger than
 *   the grace period (a commit may still copy one into place; older ones are candidates, since
 *   CreateTableVersion leaves them), and anything younger than the grace period (writes in flight). Any other file in a dataset directory that
 *   no manifest names is a candidate. `_transactions/*.txn` are counted, never candidates (the sweep removes a version's own with it).
 *
 * Refused: a dataset whose manifests name external base paths (shallow clones, imported files)
 * reads files the scan cannot attribute, so no candidate of its warehouse is reported and the
 * report is incomplete. An unreadable manifest, registry record or storage listing also makes the
 * report incomplete, never silently narrower: what it would have covered yields no candidates.
 */
import type { CatalogServices } from '../catalog/services.js';
import { sharedRootProblem } from '../catalog/storage-claims.js';
import { parseManifestName } from '../catalog/dataset/manifests.js';
import { compareKeys, type ObjectInfo, type ObjectStore } from '../ports/object-store.js';
import { keys, parseLocationClaimKey, parseTreeKey } from '../registry/keys.js';
import type { TableRecord, WarehouseRecord } from '../registry/records.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { type Cursor, decodeCursor, encodeCursor, forProject, listProjects, listWarehouses, walk } from './estate.js';
import { isManifestKey, listAll } from './dataset-refs.js';
import { readManifestRefs } from './lance-manifest.js';
import { finishReport, type MaintenancePass, type PassOptions, type PassReport } from './pass.js';

export interface OrphanSettings {
  /** Objects younger than this are never candidates (writes in flight). */
  readonly graceMs: number;
  /** Objects per storage LIST. */
  readonly pageSize: number;
}

export const DEFAULT_GRACE_MS = 7 * 24 * 3_600_000;

/** Why an object is not a candidate; counted in the summary as `excluded.<reason>`. */
export type Exclusion = 'lancedb-directory-manifest' | 'tag-or-branch' | 'lance-reserved' | 'blob-sidecar' | 'staging-manifest' | 'young' | 'refused-dataset' | 'unreadable-dataset';

export type Classification =
  | { readonly kind: 'reachable' }
  | { readonly kind: 'transaction' }
  | { readonly kind: 'excluded'; readonly reason: Exclusion }
  | { readonly kind: 'candidate'; readonly reason: CandidateReason; readonly dataset?: string };

/**
 * `stale-staging-manifest`: a staging manifest older than the grace period. CreateTableVersion
 * leaves the staging file in place once it is copied to its final name (no DELETE on the commit
 * path; docs/managed-versioning.md), so the scan is what takes them.
 */
export type CandidateReason = 'unreferenced-file' | 'unreferenced-folder' | 'stale-staging-manifest';

export interface OrphanCandidate {
  readonly project: string;
  readonly warehouse: string;
  readonly key: string;
  readonly size: number;
  readonly lastModified: string;
  readonly ageDays: number;
  readonly reason: CandidateReason;
  readonly dataset?: string;
  deleted?: boolean;
  /** With `delete: true`, why a candidate was kept after its re-check. */
  kept?: string;
}

/** What one dataset's manifests reach, or why they cannot be used. */
type DatasetRefs = { readonly kind: 'ok'; readonly reached: Set<string> } | { readonly kind: 'external' | 'unreadable'; readonly why: string };

export function orphanScanWith(settings: Partial<OrphanSettings> = {}): MaintenancePass {
  const graceMs = settings.graceMs ?? DEFAULT_GRACE_MS;
  const pageSize = settings.pageSize ?? 1000;
  return (services, options) => run(services, options, graceMs, pageSize);
}

/** The scheduled pass, with the default grace period. */
export const orphanScan: MaintenancePass = orphanScanWith();

class Paused {
  constructor(readonly cursor: Cursor) {}
}

async function run(services: CatalogServices, options: PassOptions, graceMs: number, pageSize: number): Promise<PassReport> {
  const startedAt = services.now().toISOString();
  const problems: string[] = [];
  const candidates: OrphanCandidate[] = [];
  const summary: Record<string, number> = { projects: 0, warehouses: 0, objects: 0, bytes: 0, candidates: 0, candidateBytes: 0, transactions: 0, refusedDatasets: 0 };
  const resume = decodeCursor(options.cursor);
  let complete = true;
  let cursor: Cursor | undefined;

  let projects: string[];
  let allWarehouses: WarehouseRecord[];
  try {
    projects = await listProjects(services);
    allWarehouses = (await Promise.all(projects.map((p) => listWarehouses(forProject(services, p), p)))).flat();
  } catch (err) {
    return report(services, startedAt, false, undefined, summary, [], [`the registry could not be read: ${message(err)}; nothing was scanned`]);
  }

  try {
    for (const project of projects) {
      if (resume && compareKeys(project, resume.project) < 0) continue;
      summary.projects++;
      const svc = forProject(services, project);
      for (const warehouse of allWarehouses.filter((w) => w.project === project)) {
        const here = resume?.project === project ? resume : undefined;
        if (here && compareKeys(warehouse.name, here.phase) < 0) continue;
        summary.warehouses++;
        // The deleting doors' backstop (docs/governance.md, "Storage allotment"): a root shared
        // with another warehouse or the platform, or outside the declared storage, is not
        // scanned at all, so no host directory's files are ever listed as candidates.
        const shared = await sharedRootProblem(svc, warehouse, { declared: svc.storage !== undefined }).catch(
          (err: unknown) => `its storage claims could not be read (${message(err)})`,
        );
        if (shared) {
          complete = false;
          summary.refusedWarehouses = (summary.refusedWarehouses ?? 0) + 1;
          problems.push(`warehouse ${where(warehouse)}: refused, ${shared}; not scanned`);
          continue;
        }
        const scan = new WarehouseScan(svc, warehouse, allWarehouses, graceMs);
        try {
          await scan.loadRoots();
        } catch (err) {
          complete = false;
          problems.push(`warehouse ${where(warehouse)}: the registry records of its tables could not be read (${message(err)}); not scanned`);
          continue;
        }
        const found: OrphanCandidate[] = [];
        let stopped: Paused | undefined;
        try {
          await scan.walkStorage(here?.phase === warehouse.name ? here.after : undefined, pageSize, found, summary, (after) => {
            if (options.deadline !== undefined && Date.now() >= options.deadline) throw new Paused({ project, phase: warehouse.name, after });
          });
        } catch (err) {
          if (err instanceof Paused) stopped = err;
          else {
            complete = false;
            problems.push(`warehouse ${where(warehouse)}: its storage could not be listed (${message(err)}); no candidates reported for it`);
            continue;
          }
        }
        summary.refusedDatasets += scan.refused.length;
        if (scan.refused.length > 0 || scan.unreadable.length > 0) {
          complete = false;
          for (const r of scan.refused) problems.push(`dataset ${r} in warehouse ${where(warehouse)} has external base paths: refused, and no candidates are reported for this warehouse`);
          for (const r of scan.unreadable) problems.push(`dataset ${r} in warehouse ${where(warehouse)}: its manifests could not be read; nothing inside it was reported`);
        }
        if (scan.refused.length === 0) candidates.push(...found);
        if (stopped) throw stopped;
      }
    }
  } catch (err) {
    if (!(err instanceof Paused)) throw err;
    cursor = err.cursor;
  }

  if (options.delete && !options.dryRun) await deleteCandidates(services, candidates, allWarehouses, graceMs);
  summary.candidates = candidates.length;
  summary.candidateBytes = candidates.reduce((n, c) => n + c.size, 0);
  if (options.delete && !options.dryRun) summary.deleted = candidates.filter((c) => c.deleted).length;
  return report(services, startedAt, complete, cursor && encodeCursor(cursor), summary, candidates, problems);
}

/** One warehouse: its dataset roots, its storage walk, and the classification of each object. */
class WarehouseScan {
  readonly refused: string[] = [];
  readonly unreadable: string[] = [];
  private roots = new Set<string>();
  /** Directories holding a dataset root: LanceDB keeps its own `__manifest/` table beside it. */
  private rootParents = new Set<string>();
  private nested: string[] = [];
  private readonly store: ObjectStore;
  private current?: { root: string; refs: DatasetRefs };

  constructor(
    private readonly svc: CatalogServices,
    private readonly warehouse: WarehouseRecord,
    allWarehouses: readonly WarehouseRecord[],
    private readonly graceMs: number,
  ) {
    this.store = svc.storageFor(warehouse.storage);
    // Another warehouse whose root lies inside this one's: its objects are its own.
    this.nested = allWarehouses
      .filter((w) => w !== warehouse)
      .map((w) => nestedPrefix(warehouse.storage, w.storage))
      .filter((p): p is string => p !== undefined);
  }

  /** Dataset roots of this warehouse: table records' locations and location claims. Strict reads. */
  async loadRoots(): Promise<void> {
    const project = this.svc.project;
    const roots = new Set<string>();
    for await (const obj of walk(this.svc, keys.subtree(project, []))) {
      if (parseTreeKey(project, obj.key)?.kind !== 'table') continue;
      const table = await this.svc.registry.read<TableRecord>(obj.key); // throws when unreadable
      if (table && table.value.warehouse === this.warehouse.name) roots.add(table.value.path);
    }
    for await (const obj of walk(this.svc, keys.locationClaimsPrefix(project))) {
      const claim = parseLocationClaimKey(project, obj.key);
      if (claim && claim.warehouse === this.warehouse.name) roots.add(claim.path);
    }
    this.roots = roots;
    this.rootParents = new Set([...roots].map((r) => (r.includes('/') ? r.slice(0, r.lastIndexOf('/')) : '')));
  }

  async walkStorage(
    startAfter: string | undefined,
    pageSize: number,
    found: OrphanCandidate[],
    summary: Record<string, number>,
    checkDeadline: (after: string) => void,
  ): Promise<void> {
    let after = startAfter;
    for (;;) {
      const page = await this.store.list({ startAfter: after, limit: pageSize });
      for (const obj of page.objects) {
        summary.objects++;
        summary.bytes += obj.size;
        const c = await this.classify(obj);
        if (c.kind === 'transaction') summary.transactions++;
        else if (c.kind === 'excluded') summary[`excluded.${c.reason}`] = (summary[`excluded.${c.reason}`] ?? 0) + 1;
        else if (c.kind === 'candidate') found.push(this.candidate(obj, c));
      }
      const last = page.objects[page.objects.length - 1];
      if (!page.truncated || !last) return;
      after = last.key;
      checkDeadline(after);
    }
  }

  candidate(obj: ObjectInfo, c: Extract<Classification, { kind: 'candidate' }>): OrphanCandidate {
    return {
      project: this.svc.project,
      warehouse: this.warehouse.name,
      key: obj.key,
      size: obj.size,
      lastModified: obj.lastModified.toISOString(),
      ageDays: Math.round(((this.svc.now().getTime() - obj.lastModified.getTime()) / 86_400_000) * 100) / 100,
      reason: c.reason,
      ...(c.dataset !== undefined ? { dataset: c.dataset } : {}),
    };
  }

  /** Where `obj` stands; the order of the checks is the order of precedence. */
  async classify(obj: ObjectInfo): Promise<Classification> {
    if (this.nested.some((p) => obj.key.startsWith(p))) return { kind: 'reachable' };
    const root = this.rootOf(obj.key);
    const young = this.svc.now().getTime() - obj.lastModified.getTime() < this.graceMs;
    if (root === undefined) {
      // LanceDB's connection writes a `__manifest` table (its directory namespace) in the
      // directory it opens a dataset from: kept while a dataset lives there.
      const m = /^(?:(.*)\/)?__manifest\//.exec(obj.key);
      if (m && this.rootParents.has(m[1] ?? '')) return { kind: 'excluded', reason: 'lancedb-directory-manifest' };
      return young ? { kind: 'excluded', reason: 'young' } : { kind: 'candidate', reason: 'unreferenced-folder' };
    }
    const rel = obj.key.slice(root.length + 1);
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    if (name === '.lance-reserved') return { kind: 'excluded', reason: 'lance-reserved' };
    if (rel.startsWith('_refs/')) return { kind: 'excluded', reason: 'tag-or-branch' };
    if (/^_transactions\/[^/]+\.txn$/.test(rel)) return { kind: 'transaction' };
    const versions = /^(?:tree\/.+\/)?_versions\/([^/]+)$/.exec(rel);
    if (versions) {
      if (parseManifestName(versions[1]) || versions[1] === 'latest_version_hint.json') return { kind: 'reachable' };
      // No manifest names a staging file: once past the grace period no commit is copying it.
      return young ? { kind: 'excluded', reason: 'staging-manifest' } : { kind: 'candidate', reason: 'stale-staging-manifest', dataset: root };
    }
    if (/^data\/[^/]+\/[^/]+\.blob$/.test(rel)) return { kind: 'excluded', reason: 'blob-sidecar' };
    const indexDir = /^(_indices\/[^/]+)\//.exec(rel)?.[1];
    // Anything else in a dataset directory is reachable only if a manifest names it.
    const known = indexDir ?? rel;
    const refs = await this.refsOf(root);
    if (refs.kind !== 'ok') return { kind: 'excluded', reason: refs.kind === 'external' ? 'refused-dataset' : 'unreadable-dataset' };
    if (refs.reached.has(known)) return { kind: 'reachable' };
    return young ? { kind: 'excluded', reason: 'young' } : { kind: 'candidate', reason: 'unreferenced-file', dataset: root };
  }

  /** The dataset root `key` lies under, if any (the deepest, should roots nest). */
  private rootOf(key: string): string | undefined {
    const parts = key.split('/');
    for (let i = parts.length - 1; i >= 1; i--) {
      const dir = parts.slice(0, i).join('/');
      if (this.roots.has(dir)) return dir;
    }
    return undefined;
  }

  /** Every file the dataset's committed manifests name (all versions, all branches). Cached per dataset. */
  private async refsOf(root: string): Promise<DatasetRefs> {
    if (this.current?.root === root) return this.current.refs;
    let refs: DatasetRefs;
    try {
      const reached = new Set<string>();
      let external = false;
      for await (const obj of listAll(this.store, `${root}/`)) {
        const rel = obj.key.slice(root.length + 1);
        if (!isManifestKey(rel)) continue;
        const body = await this.store.get(obj.key);
        if (!body) continue; // removed by Lance's own cleanup meanwhile
        const r = readManifestRefs(body.body);
        external ||= r.externalBases;
        for (const f of [...r.files, ...r.indexDirs]) reached.add(f);
      }
      refs = external ? { kind: 'external', why: 'external base paths' } : { kind: 'ok', reached };
    } catch (err) {
      refs = { kind: 'unreadable', why: message(err) };
    }
    if (refs.kind === 'external') this.refused.push(root);
    if (refs.kind === 'unreadable') this.unreadable.push(`${root} (${refs.why})`);
    this.current = { root, refs };
    return refs;
  }
}

/** The key prefix, within `outer`'s store, of `inner`'s root when it lies inside `outer`'s. */
function nestedPrefix(outer: StorageRoot, inner: StorageRoot): string | undefined {
  if (outer.kind === 'file' && inner.kind === 'file') {
    const o = outer.path.replace(/\/+$/, '');
    const i = inner.path.replace(/\/+$/, '');
    return i.startsWith(`${o}/`) ? `${i.slice(o.length + 1)}/` : undefined;
  }
  if (outer.kind === 's3' && inner.kind === 's3' && outer.bucket === inner.bucket) {
    const o = outer.prefix.replace(/\/+$/, '');
    const i = inner.prefix.replace(/\/+$/, '');
    if (o === '') return i === '' ? undefined : `${i}/`;
    return i.startsWith(`${o}/`) ? `${i.slice(o.length + 1)}/` : undefined;
  }
  return undefined;
}

/**
 * Deletes candidates that are still candidates: each is re-classified against freshly read
 * roots and manifests (a table registered, a claim taken or a commit made since the scan makes
 * it reachable again), and its age re-read from storage, before its delete.
 */
async function deleteCandidates(
  services: CatalogServices,
  candidates: OrphanCandidate[],
  allWarehouses: readonly WarehouseRecord[],
  graceMs: number,
): Promise<void> {
  const fresh = new Map<string, WarehouseScan>();
  for (const c of candidates) {
    try {
      const id = `${c.project}\u0000${c.warehouse}`;
      let scan = fresh.get(id);
      if (!scan) {
        const warehouse = allWarehouses.find((w) => w.project === c.project && w.name === c.warehouse)!;
        scan = new WarehouseScan(forProject(services, c.project), warehouse, allWarehouses, graceMs);
        await scan.loadRoots();
        fresh.set(id, scan);
      }
      const store = services.storageFor(allWarehouses.find((w) => w.project === c.project && w.name === c.warehouse)!.storage);
      const now = await store.head(c.key);
      if (!now) {
        c.kept = 'gone already';
        continue;
      }
      const again = await scan.classify(now);
      if (again.kind !== 'candidate') {
        c.kept = `no longer a candidate (${again.kind === 'excluded' ? again.reason : again.kind})`;
        continue;
      }
      await store.delete(c.key);
      c.deleted = true;
    } catch (err) {
      c.kept = `not deleted: ${message(err)}`;
    }
  }
}

function report(
  services: CatalogServices,
  startedAt: string,
  complete: boolean,
  cursor: string | undefined,
  summary: Record<string, number>,
  candidates: OrphanCandidate[],
  problems: string[],
): PassReport {
  return finishReport(services, { pass: 'orphans', startedAt, complete, cursor, summary, items: candidates.map((x) => ({ ...x })), problems });
}

const where = (w: WarehouseRecord) => JSON.stringify(`${w.project}/${w.name}`);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
