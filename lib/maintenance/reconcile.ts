/**
 * Reconcile: reports drift between the registry and storage, and changes nothing unless asked
 * to repair (docs/rules.md rule 13). It walks every project and every warehouse the registry holds:
 *
 *   tree    every namespace and table record: a parent namespace that is gone; a namespace
 *           stuck `dropping`; a table stuck mid-rename (`moving`/`arriving`/`moved`); a table
 *           whose warehouse record is gone; a registered table whose location holds no dataset
 *           (no committed manifest). Declared tables may legitimately have none yet: counted;
 *           A table whose record says it has data but whose `data` marker is missing;
 *   markers every has-data marker (lib/catalog/protocols/markers.ts): one whose id holds no record
 *           or a record of another uid (a leftover);
 *   claims  every location claim: one no live record uses (stale); one stuck `purging`; a live
 *           table whose claim is missing, `pending` or `trashed` (claim-mismatch: a door a fault
 *           stopped, issue #35);
 *   jobs    every live job: running with an expired lease (the next worker claim reclaims it).
 *   storage every warehouse's root, once per pass (docs/governance.md, "Storage allotment"): one
 *           that overlaps another warehouse's root or a reserved platform location
 *           (`shared-root`, e.g. created before allotments existed: the deleting doors refuse
 *           it), lies outside the declared storage (`outside-storage`), or has no entry in the
 *           storage-claims index (`unclaimed-root`); an index entry without its warehouse
 *           (`stale-root-claim`, a crashed create or delete; the next create drops it).
 *
 * "Stuck" means the record has not been written for `stuckAfterMs` (its object's last-modified
 * time), so a protocol in flight is never reported, and never repaired under its own feet.
 *
 * Reads only: records are read raw (lib/catalog/protocols/move.ts readRaw, never the settling
 * reader, which finishes renames as it reads), storage is only listed. With `repair: true`
 * each finding is handed to the door that owns it, and what it changed is reported:
 *
 *   stuck rename         readSettled: the rename protocol's own help-on-read finishes or undoes it
 *   stuck dropping /     dropNamespace(restrict, skip): an empty namespace's drop is finished; a
 *   namespace w/o parent non-empty one is put back to active and reported (a cascade is explicit)
 *   stale claim          releaseClaim, after re-checking that no record uses it
 *   claim mismatch       settleTrashEntry (an unfinished drop/undrop), else the claim made `held`
 *   leftover marker      removeLeftoverMarker: re-checked under the current record, removed only
 *                        if no table there owns it (lib/catalog/protocols/marker-repair.ts)
 *   missing data marker  restoreDataMarker: written if the record still says it has data
 *   unrecorded data      recordFoundData: a managed table a client committed to directly, seen
 *                        so far only by read-only functions (which do not record it): the
 *                        marker and `dataMarker: data`, as a version lookup would write them
 *   stuck purging        the purge_table job DropTable queues when a purge is cut short, unless
 *                        one is already queued for it
 *   the others           no repair path: reported for an operator (deregister, re-register…)
 */
import { dropNamespace } from '../catalog/namespaces/drop.js';
import { readNamespace } from '../catalog/namespaces/record.js';
import type { CatalogServices } from '../catalog/services.js';
import { liveHolder, readClaim, releaseClaim, setClaimState } from '../catalog/protocols/claims.js';
import { settleTrashEntry } from '../catalog/protocols/trash.js';
import { PURGE_TABLE } from '../catalog/tables/drop.js';
import { checkMarker, dataMarkerMissing, recordFoundData, removeLeftoverMarker, restoreDataMarker } from '../catalog/protocols/marker-repair.js';
import type { MarkerKind } from '../catalog/protocols/markers.js';
import { hasData } from '../catalog/protocols/lookup.js';
import { isLive, readRaw, readSettled } from '../catalog/protocols/move.js';
import { NamespaceNotEmptyError } from '../errors.js';
import { sameId } from '../http/ids.js';
import { jobContext } from '../queue/context.js';
import { enqueue } from '../queue/jobs.js';
import type { JobRecord } from '../ports/job-record.js';
import { compareKeys, type ObjectInfo } from '../ports/object-store.js';
import type { WorkQueue } from '../ports/work-queue.js';
import { keys, parseDataMarkerKey, parseLocationClaimKey, parseTreeKey } from '../registry/keys.js';
import type { LocationClaimRecord, NamespaceRecord, RootClaim, StorageClaimsRecord, TableRecord, TrashRecord, WarehouseRecord } from '../registry/records.js';
import { formatStorageRoot, rootsOverlap } from '../registry/storage-roots.js';
import { everyWarehouseRoot, insideDeploymentStorage, reservedOverlap, resolvedRoot } from '../catalog/storage-claims.js';
import { type Cursor, decodeCursor, encodeCursor, forProject, inScope, listProjects, listWarehouses, walk } from './estate.js';
import { finishReport, type MaintenancePass, type PassOptions, type PassReport } from './pass.js';

export type FindingKind =
  | 'parent-missing'
  | 'stuck-dropping'
  | 'stuck-move'
  | 'warehouse-missing'
  | 'missing-dataset'
  | 'missing-marker'
  | 'unrecorded-data'
  | 'leftover-marker'
  | 'stale-claim'
  | 'claim-mismatch'
  | 'stuck-purging'
  | 'expired-lease'
  | 'shared-root'
  | 'outside-storage'
  | 'unclaimed-root'
  | 'stale-root-claim';

export interface Finding {
  readonly kind: FindingKind;
  readonly project: string;
  readonly warehouse?: string;
  /** The namespace or table id (a claim's first owner id; a job's table). */
  readonly id?: readonly string[];
  readonly path?: string;
  readonly job?: string;
  /** A table's uid (missing-marker); the uid a leftover marker names. */
  readonly uid?: string;
  /** Which has-data marker (leftover-marker, missing-marker). */
  readonly marker?: MarkerKind;
  readonly state?: string;
  /** When the record was last written. */
  readonly since?: string;
  readonly detail: string;
  /** With `repair: true`: what the owning door did, or why nothing was done. */
  repaired?: string;
}

export interface ReconcileSettings {
  /** A record unwritten for this long in a transitional state is stuck. */
  readonly stuckAfterMs: number;
}

export const DEFAULT_STUCK_AFTER_MS = 15 * 60_000;

const PHASES = ['tree', 'markers', 'claims', 'jobs'] as const;
type Phase = (typeof PHASES)[number];

/** Stops the walk at the deadline; carries the position to resume from. */
class Paused {
  constructor(readonly cursor: Cursor) {}
}

export function reconcileWith(settings: Partial<ReconcileSettings> = {}): MaintenancePass {
  const stuckAfterMs = settings.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  return (services, options) => run(services, options, stuckAfterMs);
}

/** The scheduled pass, with the default bound. */
export const reconcile: MaintenancePass = reconcileWith();

async function run(services: CatalogServices, options: PassOptions, stuckAfterMs: number): Promise<PassReport> {
  const startedAt = services.now().toISOString();
  const findings: Finding[] = [];
  const problems: string[] = [];
  const summary: Record<string, number> = { projects: 0, warehouses: 0, namespaces: 0, tables: 0, declaredWithoutData: 0, markers: 0, claims: 0, jobs: 0 };
  const resume = decodeCursor(options.cursor);
  let complete = true;
  let cursor: Cursor | undefined;

  const stuck = (lastModified: Date) => services.now().getTime() - lastModified.getTime() >= stuckAfterMs;
  const checkDeadline = (position: Cursor) => {
    if (options.deadline !== undefined && Date.now() >= options.deadline) throw new Paused(position);
  };

  let projects: string[];
  try {
    projects = await listProjects(services);
  } catch (err) {
    return report(services, startedAt, false, undefined, summary, findings, [`the registry's project list could not be read: ${message(err)}`]);
  }

  // Once per pass (not again on a resumed one): it reads every warehouse record and the index.
  if (!resume) {
    try {
      findings.push(...(await checkStorageRoots(services, projects)));
    } catch (err) {
      complete = false;
      problems.push(`the storage check stopped: ${message(err)}`);
    }
  }

  try {
    for (const project of projects) {
      if (resume && compareKeys(project, resume.project) < 0) continue;
      summary.projects++;
      const svc = forProject(services, project);
      let warehouses: Map<string, WarehouseRecord>;
      try {
        warehouses = new Map((await listWarehouses(svc, project)).map((w) => [w.name, w]));
      } catch (err) {
        complete = false;
        problems.push(`project ${JSON.stringify(project)}: its warehouses could not be read (${message(err)}); the project was not checked`);
        continue;
      }
      summary.warehouses += warehouses.size;
      const ctx: WalkContext = { svc, project, options, warehouses, findings, summary, stuck, checkDeadline, problems };
      for (const phase of PHASES) {
        const here = resume?.project === project ? resume : undefined;
        if (here && PHASES.indexOf(phase) < PHASES.indexOf(here.phase as Phase)) continue;
        const after = here?.phase === phase ? here.after : undefined;
        try {
          if (phase === 'tree') await checkTree(ctx, after);
          else if (phase === 'markers') await checkMarkers(ctx, after);
          else if (phase === 'claims') await checkClaims(ctx, after);
          else await checkJobs(ctx);
        } catch (err) {
          if (err instanceof Paused) throw err;
          complete = false;
          problems.push(`project ${JSON.stringify(project)}: the ${phase} check stopped: ${message(err)}`);
        }
        if (ctx.incomplete) complete = false;
      }
    }
  } catch (err) {
    if (!(err instanceof Paused)) throw err;
    cursor = err.cursor;
  }

  if (options.repair) await repairAll(services, findings);
  for (const f of findings) summary[f.kind] = (summary[f.kind] ?? 0) + 1;
  if (options.repair) summary.repaired = findings.filter((f) => f.repaired && !f.repaired.startsWith('no repair')).length;
  return report(services, startedAt, complete, cursor && encodeCursor(cursor), summary, findings, problems);
}

/**
 * The storage phase: every warehouse root (read strictly) against every other, the reserved
 * locations, the declared storage and the claims index. Names both sides: this is the operator's
 * report, not a tenant's answer.
 */
async function checkStorageRoots(services: CatalogServices, projects: readonly string[]): Promise<Finding[]> {
  const out: Finding[] = [];
  const all = await everyWarehouseRoot(services);
  const index = (await services.registry.read<StorageClaimsRecord>(keys.storageClaims()))?.value;
  const root = (w: RootClaim) => resolvedRoot(services, w.storage);
  const name = (w: RootClaim) => `warehouse ${JSON.stringify(w.warehouse)} of project ${JSON.stringify(w.project)}`;
  for (const w of all) {
    if (!projects.includes(w.project)) continue;
    const base = { project: w.project, warehouse: w.warehouse, path: formatStorageRoot(root(w)) };
    const others = all.filter((o) => o !== w && rootsOverlap(root(o), root(w)));
    for (const o of others) {
      out.push({ ...base, kind: 'shared-root', detail: `its storage root ${formatStorageRoot(root(w))} overlaps ${name(o)} (${formatStorageRoot(root(o))}); drops, purges and the orphan scan refuse both until one is deleted (without purge)` });
    }
    const reserved = reservedOverlap(services, root(w));
    if (reserved) out.push({ ...base, kind: 'shared-root', detail: `its storage root overlaps ${formatStorageRoot(reserved)}, which the platform reserves` });
    if (services.storage && !insideDeploymentStorage(services, root(w))) {
      out.push({ ...base, kind: 'outside-storage', detail: `its storage root lies outside the declared storage (${services.storage.roots.map(formatStorageRoot).join(', ')}); a purge and the orphan scan refuse it` });
    }
    if (index && !index.claims.some((c) => c.project === w.project && c.warehouse === w.warehouse)) {
      out.push({ ...base, kind: 'unclaimed-root', detail: 'the storage-claims index has no entry for it (written by an older server?); creates do not see its root' });
    }
  }
  for (const c of index?.claims ?? []) {
    if (!projects.includes(c.project) || all.some((w) => w.project === c.project && w.warehouse === c.warehouse)) continue;
    out.push({ kind: 'stale-root-claim', project: c.project, warehouse: c.warehouse, path: formatStorageRoot(root(c)), since: c.claimedAt, detail: 'the storage-claims index holds a root for a warehouse that does not exist; the next create after its grace period drops it' });
  }
  return out;
}

interface WalkContext {
  readonly svc: CatalogServices;
  readonly project: string;
  readonly options: PassOptions;
  readonly warehouses: Map<string, WarehouseRecord>;
  readonly findings: Finding[];
  readonly summary: Record<string, number>;
  readonly problems: string[];
  stuck(lastModified: Date): boolean;
  checkDeadline(position: Cursor): void;
  incomplete?: boolean;
}

/** Reads a record; an unreadable one is a problem (and an incomplete report), not a crash. */
async function readOrNote<T>(ctx: WalkContext, key: string): Promise<T | undefined> {
  try {
    return (await ctx.svc.registry.read<T>(key))?.value;
  } catch (err) {
    ctx.incomplete = true;
    ctx.problems.push(`record ${key} could not be read: ${message(err)}`);
    return undefined;
  }
}

async function checkTree(ctx: WalkContext, after: string | undefined): Promise<void> {
  const { svc, project } = ctx;
  const parents = new Map<string, boolean>();
  const parentExists = async (id: readonly string[]) => {
    if (id.length === 0) return true;
    const k = JSON.stringify(id);
    if (!parents.has(k)) parents.set(k, (await readNamespace(svc, id)) !== undefined);
    return parents.get(k)!;
  };
  for await (const obj of walk(svc, keys.subtree(project, []), after)) {
    await visitTreeObject(ctx, obj, parentExists);
    // After the unit, so every slice makes progress and resumes after what it finished.
    ctx.checkDeadline({ project, phase: 'tree', after: obj.key });
  }
}

async function visitTreeObject(ctx: WalkContext, obj: ObjectInfo, parentExists: (id: readonly string[]) => Promise<boolean>): Promise<void> {
  const { svc, project } = ctx;
  const parsed = parseTreeKey(project, obj.key);
  if (!parsed || !inScope(parsed.id, ctx.options.scope)) return;
  const since = obj.lastModified.toISOString();
  const parentId = parsed.id.slice(0, -1);
  if (parsed.kind === 'namespace') {
    const ns = await readOrNote<NamespaceRecord>(ctx, obj.key);
    if (!ns) return;
    ctx.summary.namespaces++;
    if (!(await parentExists(parentId))) {
      ctx.findings.push({ kind: 'parent-missing', project, id: parsed.id, since, detail: `namespace ${fmt(parsed.id)} has no parent namespace ${fmt(parentId)}` });
    } else if (ns.state === 'dropping' && ctx.stuck(obj.lastModified)) {
      ctx.findings.push({ kind: 'stuck-dropping', project, id: parsed.id, state: ns.state, since, detail: `namespace ${fmt(parsed.id)} has been dropping since ${since}` });
    }
    return;
  }
  const table = await readOrNote<TableRecord>(ctx, obj.key);
  if (!table) return;
  ctx.summary.tables++;
  const base = { project, warehouse: table.warehouse, id: parsed.id, path: table.path, since };
  if (!(await parentExists(parentId))) {
    ctx.findings.push({ kind: 'parent-missing', ...base, detail: `table ${fmt(parsed.id)} has no namespace ${fmt(parentId)}` });
    return;
  }
  if (!isLive(table)) {
    if (ctx.stuck(obj.lastModified)) {
      ctx.findings.push({ kind: 'stuck-move', ...base, state: table.state, detail: `table ${fmt(parsed.id)} has been ${table.state} (a rename) since ${since}` });
    }
    return;
  }
  // A live table's location is claimed `held` by it (docs/protocols.md, "Location claims"). A
  // door stopped by a fault whose outcome it could not know leaves a claim missing, `pending` or
  // still `trashed` (an undrop that stopped after its record; issue #35). Young records are
  // doors in flight.
  if (ctx.stuck(obj.lastModified)) {
    const claim = await readOrNote<LocationClaimRecord>(ctx, keys.locationClaim(project, table.warehouse, table.path));
    if (!claim || (claim.uid === table.uid && (claim.state !== 'held' || !claim.ids.some((x) => sameId(x, parsed.id))))) {
      ctx.findings.push({
        kind: 'claim-mismatch',
        ...base,
        uid: table.uid,
        state: claim?.state ?? 'missing',
        detail: `table ${fmt(parsed.id)} is live but its location claim is ${claim ? `${claim.state} under ${fmt(claim.ids[0] ?? [])}` : 'missing'}`,
      });
    }
  }
  // A young record may be a rename's destination whose marker is being written with it.
  if (table.dataMarker === 'data' && ctx.stuck(obj.lastModified) && (await dataMarkerMissing(svc, parsed.id, table.uid))) {
    ctx.findings.push({
      kind: 'missing-marker',
      ...base,
      uid: table.uid,
      marker: 'data',
      detail: `table ${fmt(parsed.id)} has data but no data marker: ListTables include_declared=false hides it`,
    });
  }
  const warehouse = ctx.warehouses.get(table.warehouse);
  if (!warehouse) {
    ctx.findings.push({ kind: 'warehouse-missing', ...base, detail: `table ${fmt(parsed.id)} is bound to warehouse ${JSON.stringify(table.warehouse)}, which is not in the registry` });
    return;
  }
  let data: boolean;
  try {
    data = await hasData(svc.storageFor(warehouse.storage), table.path);
  } catch (err) {
    ctx.incomplete = true;
    ctx.problems.push(`the location of table ${fmt(parsed.id)} could not be listed: ${message(err)}`);
    return;
  }
  if (data) {
    // Data the record does not know of (a client committed straight to storage, and only
    // read-only functions looked since: docs/protocols.md, "Repair on read"): hidden by listings.
    if (table.dataMarker === 'none' && ctx.stuck(obj.lastModified)) {
      ctx.findings.push({
        kind: 'unrecorded-data',
        ...base,
        uid: table.uid,
        detail: `table ${fmt(parsed.id)} has committed versions its record does not know of: ListTables include_declared=false hides it`,
      });
    }
    return;
  }
  if (table.origin === 'registered') {
    ctx.findings.push({ kind: 'missing-dataset', ...base, detail: `registered table ${fmt(parsed.id)}: its location ${table.path} holds no dataset (no committed manifest)` });
  } else {
    ctx.summary.declaredWithoutData++;
  }
}

async function checkMarkers(ctx: WalkContext, after: string | undefined): Promise<void> {
  const { svc, project } = ctx;
  for (const kind of ['data', 'maybe'] as const) {
    const prefix = keys.dataMarkersSubtree(project, kind, []);
    // Resuming: a kind walked entirely before the cursor's key is done.
    if (after !== undefined && !after.startsWith(prefix) && compareKeys(after, prefix) > 0) continue;
    const startAfter = after?.startsWith(prefix) ? after : undefined;
    for await (const obj of walk(svc, prefix, startAfter)) {
      await visitMarker(ctx, kind, obj);
      ctx.checkDeadline({ project, phase: 'markers', after: obj.key });
    }
  }
}

async function visitMarker(ctx: WalkContext, kind: MarkerKind, obj: ObjectInfo): Promise<void> {
  const { svc, project } = ctx;
  const id = parseDataMarkerKey(project, kind, obj.key);
  if (!id || !inScope(id, ctx.options.scope)) return;
  ctx.summary.markers++;
  // A create writes its marker before its record: a young marker may be one in flight.
  if (!ctx.stuck(obj.lastModified)) return;
  const found = await svc.registry.store.get(obj.key);
  if (!found) return;
  const check = await checkMarker(svc, id, found.body);
  if (check.ok) return;
  const since = obj.lastModified.toISOString();
  const why = check.holder ? `the table there is another one (uid ${check.holder.uid})` : 'no table is there';
  ctx.findings.push({
    kind: 'leftover-marker',
    project,
    id,
    marker: kind,
    ...(check.uid !== undefined ? { uid: check.uid } : {}),
    since,
    detail: `${kind} marker of ${fmt(id)} names table uid ${check.uid ?? '(unreadable)'} but ${why}: a listing shows the name`,
  });
}

async function checkClaims(ctx: WalkContext, after: string | undefined): Promise<void> {
  const { svc, project } = ctx;
  for await (const obj of walk(svc, keys.locationClaimsPrefix(project), after)) {
    await visitClaim(ctx, obj);
    ctx.checkDeadline({ project, phase: 'claims', after: obj.key });
  }
}

async function visitClaim(ctx: WalkContext, obj: ObjectInfo): Promise<void> {
  const { svc, project } = ctx;
  if (!parseLocationClaimKey(project, obj.key)) return;
  const claim = await readOrNote<LocationClaimRecord>(ctx, obj.key);
  if (!claim?.ids.some((id) => inScope(id, ctx.options.scope))) return;
  ctx.summary.claims++;
  if (!ctx.stuck(obj.lastModified)) return;
  const since = obj.lastModified.toISOString();
  const base = { project, warehouse: claim.warehouse, id: claim.ids[0], path: claim.path, state: claim.state, since };
  if (claim.state === 'purging') {
    ctx.findings.push({ kind: 'stuck-purging', ...base, detail: `location ${claim.path} of a dropped table has been purging since ${since}` });
    return;
  }
  // A recoverable drop keeps its location claimed (`trashed`) while its trash record lives.
  if (claim.state === 'trashed' && (await inTrash(svc, claim))) {
    ctx.summary.trashed = (ctx.summary.trashed ?? 0) + 1;
    return;
  }
  // Any record at the location counts, mid-rename included: a raw read, never a settling one.
  const holder = await liveHolder(claim, (id) => readRaw(svc, id));
  if (!holder) {
    ctx.findings.push({ kind: 'stale-claim', ...base, detail: `location ${claim.path} is claimed (${claim.state}) but no table record uses it` });
  }
}

async function checkJobs(ctx: WalkContext): Promise<void> {
  const now = ctx.svc.now().getTime();
  let startAfter: string | undefined;
  do {
    const page = await queueFor(ctx.svc).listLive({ startAfter, limit: 100 });
    for (const id of page.unreadable) {
      ctx.incomplete = true;
      ctx.problems.push(`job ${id} of project ${JSON.stringify(ctx.project)} could not be read`);
    }
    for (const { value: job } of page.jobs) {
      if (job.table && !inScope(job.table.id, ctx.options.scope)) continue;
      ctx.summary.jobs++;
      if (job.status !== 'Running' || (job.lease && Date.parse(job.lease.until) >= now)) continue;
      ctx.findings.push({
        kind: 'expired-lease',
        project: ctx.project,
        job: job.id,
        ...(job.table ? { id: job.table.id } : {}),
        since: job.lease?.until ?? job.updatedAt,
        detail: `job ${job.id} (${job.type}) is Running, but its worker ${job.lease?.owner ?? '?'} stopped renewing its lease at ${job.lease?.until ?? '?'}`,
      });
    }
    startAfter = page.next;
  } while (startAfter !== undefined);
}

/** The project's job queue (the services are scoped to it: estate.forProject). */
function queueFor(svc: CatalogServices): WorkQueue {
  return jobContext(svc).queue;
}

// ---- repair: each finding goes to the door that owns it ----

async function repairAll(services: CatalogServices, findings: Finding[]): Promise<void> {
  for (const f of findings) {
    try {
      f.repaired = await repairOne(forProject(services, f.project), f);
    } catch (err) {
      f.repaired = `repair failed: ${message(err)}`;
    }
  }
}

async function repairOne(svc: CatalogServices, f: Finding): Promise<string> {
  switch (f.kind) {
    case 'stuck-move': {
      await readSettled(svc, f.id!);
      const after = await readRaw(svc, f.id!);
      return after ? `rename settled: ${fmt(f.id!)} is ${after.value.state ?? 'active'}` : `rename settled: ${fmt(f.id!)} no longer holds the table`;
    }
    case 'stuck-dropping':
    case 'parent-missing': {
      if (f.path !== undefined) return 'no repair path: a table without its namespace must be deregistered or dropped explicitly';
      try {
        await dropNamespace(svc, { id: f.id!, mode: 'skip', behavior: 'restrict' });
        return `namespace drop finished: ${fmt(f.id!)} removed (it was empty)`;
      } catch (err) {
        if (!(err instanceof NamespaceNotEmptyError)) throw err;
        return `namespace ${fmt(f.id!)} restored to active, not dropped: ${err.message}; drop it with cascade to remove it`;
      }
    }
    case 'leftover-marker':
      return removeLeftoverMarker(svc, f.marker!, f.id!);
    case 'missing-marker':
      return restoreDataMarker(svc, f.id!, f.uid!);
    case 'unrecorded-data':
      return recordFoundData(svc, f.id!, f.uid!);
    case 'claim-mismatch':
      return settleClaimOfLiveTable(svc, f.id!, f.uid!);
    case 'stale-claim': {
      const key = keys.locationClaim(svc.project, f.warehouse!, f.path!);
      const claim = (await svc.registry.read<LocationClaimRecord>(key))?.value;
      if (!claim || claim.state === 'purging') return 'no change: the claim changed meanwhile';
      if (claim.state === 'trashed' && (await inTrash(svc, claim))) return 'no change: the location belongs to a table in trash';
      if (await liveHolder(claim, (id) => readRaw(svc, id))) return 'no change: a table uses the location now';
      await releaseClaim(svc, claimOwner(claim));
      return `claim on ${claim.path} released`;
    }
    case 'stuck-purging': {
      const key = keys.locationClaim(svc.project, f.warehouse!, f.path!);
      const claim = (await svc.registry.read<LocationClaimRecord>(key))?.value;
      if (claim?.state !== 'purging') return 'no change: the claim changed meanwhile';
      if (await purgeQueued(svc, claim.uid)) return 'no change: a purge_table job for it is already queued';
      const owner = claimOwner(claim);
      // The job DropTable queues when it cannot finish deleting (lib/catalog/tables/drop.ts).
      const job = await enqueue(jobContext(svc), {
        type: PURGE_TABLE,
        params: { record: owner },
        summary: { table: owner.id.join('.'), path: owner.path },
      });
      return `purge_table job ${job.id} queued to finish deleting ${claim.path} and release its claim`;
    }
    case 'expired-lease':
      return 'no repair needed here: the next worker pass reclaims the job (a new attempt) or fails it when out of attempts';
    default:
      return 'no repair path: reported for an operator';
  }
}

/**
 * A live table whose claim is not `held` by it: an interrupted drop or undrop with a trash record
 * is finished by the trash's own repair (trash.ts, settleTrashEntry: fence, claim held, trash
 * record gone); otherwise the claim is made `held` under the live id. Re-read first: the table
 * may have changed since the walk.
 */
async function settleClaimOfLiveTable(svc: CatalogServices, id: readonly string[], uid: string): Promise<string> {
  const live = await readSettled(svc, id);
  if (!live || live.value.uid !== uid) return 'no change: the table changed meanwhile';
  const claim = (await readClaim(svc, live.value)).claim?.value;
  for (const at of [...(claim?.uid === uid ? claim.ids : []), id]) {
    const trash = await svc.registry.read<TrashRecord>(keys.trash(svc.project, at, uid));
    const settled = trash && (await settleTrashEntry(svc, trash));
    if (settled && settled !== 'stale') return `unfinished drop or undrop settled: ${fmt(id)} is live, its claim held, its trash record removed`;
  }
  if (!(await setClaimState(svc, live.value, 'held', [id]))) return 'no repair path: the location is claimed by another table (reported for an operator)';
  return `claim on ${live.value.path} is held by ${fmt(id)}`;
}

/** The claim's owner as the claim doors need it (they read only id, uid, warehouse, path). */
function claimOwner(claim: LocationClaimRecord): TableRecord {
  return {
    kind: 'table',
    id: [...claim.ids[0]],
    uid: claim.uid,
    warehouse: claim.warehouse,
    path: claim.path,
    managedVersioning: false,
    properties: {},
    origin: 'declared',
    createdAt: claim.createdAt,
  };
}

async function purgeQueued(svc: CatalogServices, uid: string): Promise<boolean> {
  let startAfter: string | undefined;
  do {
    const page = await queueFor(svc).listLive({ startAfter, limit: 100 });
    const match = (j: JobRecord) => j.type === PURGE_TABLE && (j.params.record as TableRecord | undefined)?.uid === uid;
    if (page.jobs.some((j) => match(j.value))) return true;
    startAfter = page.next;
  } while (startAfter !== undefined);
  return false;
}

function report(
  services: CatalogServices,
  startedAt: string,
  complete: boolean,
  cursor: string | undefined,
  summary: Record<string, number>,
  findings: Finding[],
  problems: string[],
): PassReport {
  return finishReport(services, { pass: 'reconcile', startedAt, complete, cursor, summary, items: findings.map((x) => ({ ...x })), problems });
}

const fmt = (id: readonly string[]) => JSON.stringify(id);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Whether a `trashed` claim's table is still in trash (its bytes may be restored: never release them). */
async function inTrash(svc: CatalogServices, claim: LocationClaimRecord): Promise<boolean> {
  const project = svc.project;
  for (const id of claim.ids) {
    if (await svc.registry.read(keys.trash(project, id, claim.uid))) return true;
  }
  return false;
}
