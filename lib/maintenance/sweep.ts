/**
 * The sweep (issue #9 item 2, docs/rules.md rule 12): one ordered pass per table —
 * compact → fold new rows into indices → clean up old versions. A policy may skip a step,
 * never reorder them. docs/maintenance.md describes the pass; this comment says why it is
 * built the way it is.
 *
 * What is never touched (skipped, with the reason in the report):
 * - a table mid-rename (record state moving / arriving / moved): its record may change under us;
 * - a table mid-purge (location claim `purging`): its bytes are being deleted;
 * - a declared-only table: no dataset yet, and a client may be writing the first version now;
 * - a trashed table (recoverable drop): nobody may rewrite bytes someone can still restore. A
 *   table in trash has no table record (lib/catalog/protocols/trash.ts), so the walk never meets
 *   it; test/maintenance/trash.test.ts proves every pass leaves its bytes alone.
 *
 * Cleanup never crosses a tagged version. Lance's own cleanup refuses the whole call when a
 * tagged version is older than its cutoff, and the Node SDK cannot ask it to skip tagged
 * versions instead, so cleanup runs in two stages:
 * 1. Lance's cleanup (reclaims versions AND their unreferenced files) with its cutoff lowered
 *    below the oldest tagged version, the oldest retained version and every branch's fork
 *    point, minus a safety margin for the clock difference between this process and LanceDB;
 * 2. for the untagged versions that stage 1 could not reach (newer than a tagged one but past
 *    the policy's age), their manifests are removed (never the latest, never a tagged one, never
 *    a fork point, never one of the `retain_versions` newest), as BatchDeleteTableVersions
 *    does, and the files only they named (no remaining manifest of any branch names them) are
 *    deleted at once (reclaimFiles).
 * The report names the tags that limited stage 1.
 *
 * Concurrency: LanceDB's compaction commits through Lance's own conflict resolution, which
 * rebases over concurrent appends (test/maintenance/sweep.test.ts runs four writers against a
 * sweep and counts every row). A commit conflict that Lance gives up on is retried here.
 */
import { announce } from './announce.js';
import { sweepFanOut } from './fan-out-passes.js';
import { isMain, listTags } from '../catalog/dataset/lance-refs.js';
import { versionsPrefix } from '../catalog/dataset/manifests.js';
import type { ObjectInfo } from '../ports/object-store.js';
import { readChain } from '../catalog/dataset/version-chain.js';
import { newestManifest } from '../catalog/dataset/rewrite-estimates.js';
import { listAll, namedPaths, unreferenced } from './dataset-refs.js';
import { readFragmentRows, readManifestRefs } from '../catalog/dataset/lance-manifest.js';
import { finishReport, type MaintenancePass, type PassOptions } from './pass.js';
import { desiredRequest } from './desired-index.js';
import type { MaintenancePolicy } from './policy.js';
import { writeReport } from './reports.js';
import { lastSweepKey, precheck, type LastSweepRecord, type StepReport, type SweepItem } from './table-checks.js';
import { forEachTable, type TableUnit } from './walker.js';

export { skipReason, type SkipReason, type StepReport, type SweepItem } from './table-checks.js';

const DAY_MS = 86_400_000;
/** Lance computes its cutoff from its own clock a moment after ours: keep stage 1 this far below a protected version. */
export const CUTOFF_SAFETY_MS = 1000;
const COMMIT_ATTEMPTS = 4;


/** The data-plane calls the sweep makes; injectable so a test can gate them deterministically. */
export interface SweepData {
  datasetState: typeof import('../adapters/lance/maintenance.js').datasetState;
  compactAndFold: typeof import('../adapters/lance/maintenance.js').compactAndFold;
  pruneBefore: typeof import('../adapters/lance/maintenance.js').pruneBefore;
  rebuildIndex: typeof import('../adapters/lance/maintenance.js').rebuildIndex;
}

const VECTOR = /^(IVF|HNSW)/i;

/**
 * The index step when the policy disables compaction: the SDK's fold is inside its compaction
 * call, so an index the policy declares (its definition is known) and that is scalar or FTS is
 * rebuilt over every row instead. Others are left for a sweep that may compact, with the reason.
 */
async function foldByRebuild(
  unit: TableUnit,
  options: PassOptions,
  data: SweepData,
  policy: MaintenancePolicy,
  state: import('../adapters/lance/maintenance.js').DatasetState,
): Promise<StepReport> {
  const rebuilt: string[] = [];
  const blocked: { name: string; reason: string }[] = [];
  for (const index of state.indices) {
    if (!index.num_unindexed_rows) continue;
    const desired = policy.indices.find((d) => d.name === index.index_name);
    if (!desired) {
      blocked.push({ name: index.index_name, reason: 'not declared in the policy, so its definition is unknown; the SDK folds it only while compacting, which the policy disables' });
    } else if (VECTOR.test(desired.type)) {
      blocked.push({ name: index.index_name, reason: 'a vector index is folded only while compacting (a rebuild re-trains it), which the policy disables' });
    } else if (!options.dryRun) {
      await data.rebuildIndex(unit.location, desiredRequest(desired));
      rebuilt.push(index.index_name);
    } else {
      rebuilt.push(index.index_name);
    }
  }
  const status = rebuilt.length === 0 ? 'skipped' : options.dryRun ? 'would-run' : 'done';
  return { status, method: 'rebuild', rebuilt, ...(blocked.length ? { blocked } : {}), ...(rebuilt.length === 0 ? { reason: 'no index can be folded without compaction' } : {}) };
}

/**
 * How many of the latest version's fragments hold fewer live rows than `target`, read from its
 * manifest. Unreadable (no manifest, a format this reader does not know): undefined, and the
 * sweep compacts as it would without a target, saying why.
 */
async function fragmentSizes(unit: TableUnit, target: number): Promise<{ small: number; report: Record<string, unknown> } | undefined> {
  try {
    const manifest = await newestManifest(unit.store, unit.record.path);
    if (!manifest) return undefined;
    const rows = readFragmentRows(manifest);
    const small = rows.filter((n) => n < target).length;
    return { small, report: { fragments: rows.length, small_fragments: small } };
  } catch {
    return undefined;
  }
}

async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const message = (err as Error).message ?? '';
      if (attempt >= COMMIT_ATTEMPTS || !/conflict|retry|concurrent/i.test(message)) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** The fork points of branches taken from main: Lance keeps them, and so must stage 2. */
async function branchForkPoints(unit: TableUnit): Promise<Set<number>> {
  const prefix = `${unit.record.path}/_refs/branches/`;
  const page = await unit.store.list({ prefix });
  const out = new Set<number>();
  for (const info of page.objects) {
    if (!info.key.endsWith('.json')) continue;
    const obj = await unit.store.get(info.key);
    if (!obj) continue;
    const ref = JSON.parse(obj.body.toString('utf8')) as { parentBranch?: string | null; parentVersion?: number };
    if (isMain(ref.parentBranch ?? undefined) && typeof ref.parentVersion === 'number') out.add(ref.parentVersion);
  }
  return out;
}

interface CleanupPlan {
  readonly cutoff: Date;
  /** Lance's cleanup cutoff (stage 1), or undefined when nothing below the protections is old enough. */
  readonly stage1Cutoff?: Date;
  /** Every unprotected version past the policy's age: stage 2 removes the manifests stage 1 left. */
  readonly stage2: readonly number[];
  readonly protectedTags: readonly { name: string; version: number }[];
  /** Tags that held stage 1's cutoff below the policy's. */
  readonly limitedBy: readonly { name: string; version: number }[];
}

async function planCleanup(
  unit: TableUnit,
  policy: MaintenancePolicy,
  versions: readonly { version: number; timestamp: Date }[],
  now: Date,
  safetyMs: number,
): Promise<CleanupPlan> {
  const cutoff = new Date(now.getTime() - policy.older_than_days * DAY_MS);
  const tags = (await listTags(unit.store, unit.record.path)).filter((t) => !t.branch);
  const forks = await branchForkPoints(unit);
  const latest = versions[versions.length - 1]?.version;
  const retained = new Set(versions.slice(-policy.retain_versions).map((v) => v.version));
  const tagged = new Set(tags.map((t) => t.version));
  const isProtected = (v: number) => v === latest || retained.has(v) || tagged.has(v) || forks.has(v);

  // Stage 1's cutoff: the policy's, lowered below every protected version.
  let stage1 = cutoff.getTime();
  const limitedBy: { name: string; version: number }[] = [];
  for (const v of versions) {
    if (!isProtected(v.version)) continue;
    const below = v.timestamp.getTime() - safetyMs;
    if (below < stage1) {
      stage1 = below;
    }
  }
  for (const t of tags) {
    const v = versions.find((x) => x.version === t.version);
    if (v && v.timestamp.getTime() < cutoff.getTime()) limitedBy.push({ name: t.name, version: t.version });
  }
  const stage1Cutoff = versions.some((v) => !isProtected(v.version) && v.timestamp.getTime() < stage1) ? new Date(stage1) : undefined;
  // Stage 2 removes whichever of these stage 1 left (all of them when stage 1 does not run).
  const stage2 = versions.filter((v) => !isProtected(v.version) && v.timestamp.getTime() < cutoff.getTime()).map((v) => v.version);
  return { cutoff, stage1Cutoff, stage2, protectedTags: tags.map((t) => ({ name: t.name, version: t.version })), limitedBy };
}

/** Stage 2: remove the manifests of `doomed` versions, re-checking tags and the latest first. */
async function removeManifests(unit: TableUnit, doomed: readonly number[]): Promise<{ removed: number; bytes: number; files: number }> {
  if (doomed.length === 0) return { removed: 0, bytes: 0, files: 0 };
  const chain = (await readChain(unit.store, versionsPrefix(unit.record.path), { descending: true })).entries;
  const latest = chain[0]?.version;
  // A tag created since the plan was made still wins.
  const tagged = new Set((await listTags(unit.store, unit.record.path)).filter((t) => !t.branch).map((t) => t.version));
  let removed = 0;
  let bytes = 0;
  // What the removed manifests named; undefined once one cannot be read or reads other bases.
  let named: Set<string> | undefined = new Set<string>();
  for (const entry of chain) {
    if (!doomed.includes(entry.version) || entry.version === latest || tagged.has(entry.version)) continue;
    const body = await unit.store.get(entry.info.key);
    if (named && body) {
      try {
        const refs = readManifestRefs(body.body);
        if (refs.externalBases) named = undefined;
        else for (const p of namedPaths(refs)) named.add(p);
      } catch {
        named = undefined;
      }
    }
    await unit.store.delete(entry.info.key);
    removed++;
    bytes += entry.info.size;
  }
  const reclaimed = named?.size ? await reclaimFiles(unit, named) : { files: 0, bytes: 0 };
  return { removed, bytes: bytes + reclaimed.bytes, files: reclaimed.files };
}

/**
 * Deletes the files (data, deletion, transaction) and index directories that the manifests
 * stage 2 removed named and that no remaining manifest (any version, any branch) names. Lance's cleanup does this for the versions
 * it removes itself; without it these files would wait 7 days as "unverified" (docs/maintenance.md).
 * A manifest that cannot be read leaves everything in place, for the orphan scan to report.
 */
async function reclaimFiles(unit: TableUnit, candidates: ReadonlySet<string>): Promise<{ files: number; bytes: number }> {
  const root = unit.record.path;
  const objects: ObjectInfo[] = [];
  for await (const obj of listAll(unit.store, `${root}/`)) objects.push(obj);
  const doomed = await unreferenced(unit.store, root, objects, candidates).catch(() => undefined);
  let bytes = 0;
  for (const obj of doomed ?? []) {
    await unit.store.delete(obj.key);
    bytes += obj.size;
  }
  return { files: doomed?.length ?? 0, bytes };
}

/** One table's sweep, in order; also what a `maintenance_sweep` job runs (lib/maintenance/table-jobs.ts). */
export async function sweepTable(
  unit: TableUnit,
  options: PassOptions,
  data: SweepData,
  now: () => Date,
  safetyMs: number,
): Promise<{ item: SweepItem; material: boolean }> {
  const checked = await precheck(unit, now);
  if ('skip' in checked) return { item: checked.skip, material: false };
  const { meta, policy } = checked;
  const lastKey = lastSweepKey(unit);

  const before = await data.datasetState(unit.location);
  const unindexed = before.indices.reduce((n, i) => n + (i.num_unindexed_rows ?? 0), 0);
  let compact: StepReport;
  let indices: StepReport;
  let fragmentsRemoved = 0;
  let foldedByRebuild = 0;
  // `target_rows_per_fragment` is the compaction trigger (the SDK's compaction takes no target):
  // compact only when more than one fragment is smaller than it, or when indices need a fold,
  // since the SDK folds only inside its compaction call.
  const sizes = policy.compact_enabled ? await fragmentSizes(unit, policy.target_rows_per_fragment) : undefined;
  const foldWanted = policy.optimize_indices_enabled && before.indices.length > 0 && unindexed > 0;
  const mayCompact = policy.compact_enabled && (sizes === undefined || sizes.small > 1 || foldWanted);
  const target = sizes ? { target_rows_per_fragment: policy.target_rows_per_fragment, ...sizes.report } : {};
  if (!policy.compact_enabled) {
    compact = { status: 'skipped', reason: 'disabled by the effective policy' };
  } else if (!mayCompact) {
    compact = { status: 'skipped', reason: 'fragments already at target', ...target };
  } else if (options.dryRun) {
    compact = { status: 'would-run', fragments: before.fragments, ...target };
  } else {
    const result = await withRetry(() => data.compactAndFold(unit.location));
    fragmentsRemoved = result.fragmentsRemoved;
    compact = {
      status: 'done',
      fragments_removed: result.fragmentsRemoved,
      fragments_added: result.fragmentsAdded,
      files_removed: result.filesRemoved,
      files_added: result.filesAdded,
      ...target,
      ...(sizes && sizes.small <= 1 ? { reason: 'fragments are at target; run to fold unindexed rows into indices (the SDK folds only while compacting)' } : {}),
      ...(sizes === undefined ? { reason: 'fragment sizes could not be read from the manifest; compacted as if every fragment were small' } : {}),
    };
  }
  // The SDK folds index rows inside its compaction call and offers no other fold (lib/adapters/lance/maintenance.ts).
  if (!policy.optimize_indices_enabled) {
    indices = mayCompact && !options.dryRun
      ? { status: 'ran-with-compaction', reason: 'disabled by the effective policy, but the Node SDK folds index rows inside its compaction call' }
      : { status: 'skipped', reason: 'disabled by the effective policy' };
  } else if (before.indices.length === 0 || unindexed === 0) {
    indices = { status: 'nothing-to-do', indices: before.indices.length, unindexed_rows: unindexed };
  } else if (!policy.compact_enabled) {
    indices = await foldByRebuild(unit, options, data, policy, before);
    foldedByRebuild = (indices.rebuilt as string[] | undefined)?.length ?? 0;
  } else {
    indices = { status: options.dryRun ? 'would-run' : 'done', unindexed_rows_before: unindexed };
  }

  let cleanup: StepReport;
  let versionsRemoved = 0;
  let bytesRemoved = 0;
  if (!policy.cleanup_enabled) {
    cleanup = { status: 'skipped', reason: 'disabled by the effective policy' };
  } else {
    // Re-read after any rewrite: its commit is the new latest version, which cleanup must keep.
    const mid = options.dryRun || (!mayCompact && foldedByRebuild === 0) ? before : await data.datasetState(unit.location);
    const plan = await planCleanup(unit, policy, mid.versions, now(), safetyMs);
    const report = {
      cutoff: plan.cutoff.toISOString(),
      protected_tags: plan.protectedTags,
      ...(plan.limitedBy.length ? { limited_by_tags: plan.limitedBy } : {}),
    };
    if (options.dryRun) {
      const would = plan.stage2.length;
      cleanup = { status: would > 0 ? 'would-run' : 'nothing-to-do', versions: would, ...report };
    } else {
      // Stage 1 is Lance's cleanup, which compacts first: only when this sweep may compact
      // (the policy allows it and the fragments are not at target).
      if (plan.stage1Cutoff && mayCompact) {
        const pruned = await withRetry(() => data.pruneBefore(unit.location, plan.stage1Cutoff!));
        versionsRemoved += pruned.versionsRemoved;
        bytesRemoved += pruned.bytesRemoved;
        fragmentsRemoved += pruned.fragmentsRemoved;
      }
      const manifests = await removeManifests(unit, plan.stage2);
      versionsRemoved += manifests.removed;
      bytesRemoved += manifests.bytes;
      cleanup = {
        status: versionsRemoved > 0 ? 'done' : 'nothing-to-do',
        versions_removed: versionsRemoved,
        bytes_removed: bytesRemoved,
        manifest_only_versions: manifests.removed,
        files_removed: manifests.files,
        ...report,
      };
    }
  }
  const after = options.dryRun ? before : await data.datasetState(unit.location);
  const material = fragmentsRemoved > 0 || versionsRemoved > 0 || foldedByRebuild > 0;
  if (material && !options.dryRun) {
    await unit.services.registry.store.put(lastKey, JSON.stringify({ kind: 'last-sweep', uid: unit.record.uid, at: now().toISOString() } satisfies LastSweepRecord));
  }
  return {
    item: {
      ...meta,
      rows_before: before.rows,
      rows_after: after.rows,
      version_before: before.version,
      version_after: after.version,
      fragments_before: before.fragments,
      fragments_after: after.fragments,
      versions_removed: versionsRemoved,
      bytes_removed: bytesRemoved,
      steps: { compact, optimize_indices: indices, cleanup },
    },
    material,
  };
}

/**
 * Builds the sweep pass over the given data-plane calls (the default loads LanceDB lazily).
 * `safetyMs` is how far below a protected version stage 1's cutoff stays (tests set 0 to show
 * stage 1 on datasets written a moment ago; with a tag, 0 risks Lance refusing the call).
 */
export function makeSweep(data?: SweepData, safetyMs = CUTOFF_SAFETY_MS): MaintenancePass {
  return async (services, options) => {
    if (options.fanOut && !options.dryRun) return sweepFanOut(services, options);
    const startedAt = services.now().toISOString();
    const calls = data ?? (await import('../adapters/lance/maintenance.js'));
    const items: SweepItem[] = [];
    let material = false;
    const walk = await forEachTable(services, options, async (unit) => {
      const result = await sweepTable(unit, options, calls, () => services.now(), safetyMs);
      items.push(result.item);
      material ||= result.material;
    });
    const swept = items.filter((i) => !i.skipped);
    const sum = (f: (i: SweepItem) => number | undefined) => swept.reduce((n, i) => n + (f(i) ?? 0), 0);
    const report = finishReport(services, {
      pass: 'sweep',
      startedAt,
      complete: walk.complete,
      cursor: walk.cursor,
      // A dry run sweeps, compacts and removes nothing: its summary counts what a real run would
      // do (`*_would_*`) instead of after-figures and removals it did not make.
      summary: options.dryRun
        ? {
            tables_visited: walk.visited,
            tables_swept: 0,
            tables_would_sweep: swept.length,
            tables_skipped: items.length - swept.length,
            fragments_before: sum((i) => i.fragments_before),
            fragments_would_compact: sum((i) => (i.steps?.compact.status === 'would-run' ? i.fragments_before : 0)),
            versions_would_remove: sum((i) => Number(i.steps?.cleanup.versions ?? 0)),
            problems: walk.problems.length,
          }
        : {
            tables_visited: walk.visited,
            tables_swept: swept.length,
            tables_skipped: items.length - swept.length,
            fragments_before: sum((i) => i.fragments_before),
            fragments_after: sum((i) => i.fragments_after),
            versions_removed: sum((i) => i.versions_removed),
            bytes_removed: sum((i) => i.bytes_removed),
            problems: walk.problems.length,
          },
      items,
      problems: walk.problems,
    });
    if (options.dryRun) return { ...report, material };
    const reportKey = await writeReport(services.registry, report, material || walk.problems.length > 0);
    if (material) await announce(services, report, reportKey);
    return { ...report, material, reportKey };
  };
}

export const sweep: MaintenancePass = makeSweep();
