/**
 * The sweep and the index build in fan-out mode (./fan-out.ts): walk, rule out the tables the
 * registry alone says to leave alone (./table-checks.ts), queue one job per remaining table.
 * Kept apart from ./sweep.ts and ./index-builder.ts, which load LanceDB for the in-process
 * passes, so that the scheduled Lambdas (functions/maintenance-sweep.ts, maintenance-index.ts)
 * bundle no data-plane code and need no LanceDB layer; the jobs function runs the per-table work.
 */
import { compactionBytes, newestManifest } from '../catalog/dataset/rewrite-estimates.js';
import type { JobEstimate } from '../queue/tiers.js';
import { type FanOutCheck, fanOutPass } from './fan-out.js';
import type { MaintenancePass } from './pass.js';
import type { MaintenancePolicy } from './policy.js';
import { precheck, skipReason } from './table-checks.js';
import type { TableUnit } from './walker.js';

/**
 * The sweep's fan-out: skips a table the sweep itself would skip before opening it (state, purge,
 * no data, policy, interval), and queues the others' jobs with what their compaction rewrites.
 */
export const sweepFanOut: MaintenancePass = (services, options) =>
  fanOutPass(services, options, 'sweep', async (unit) => {
    const checked = await precheck(unit, () => services.now());
    return 'skip' in checked ? checked : { estimate: await sweepEstimate(unit, checked.policy) };
  });

/** The index build's fan-out: skips a table mid-rename, mid-purge or declared only. */
export const indexFanOut: MaintenancePass = (services, options) =>
  fanOutPass(services, options, 'index', async (unit): Promise<FanOutCheck> => {
    const skip = await skipReason(unit);
    return skip ? { skip: { project: unit.project, table: unit.id, ...skip } } : {};
  });

/**
 * What the sweep job of `unit` is estimated to rewrite: the bytes its compaction merges (none
 * when the policy turns compaction off: cleanup alone is cheap), by which the queue routes it
 * (docs/jobs.md, "Routing"). Undefined when the newest manifest cannot say.
 */
export async function sweepEstimate(unit: TableUnit, policy?: MaintenancePolicy): Promise<JobEstimate | undefined> {
  const effective = policy ?? (await unit.policy()).policy;
  if (!effective.compact_enabled) return { bytes: 0 };
  const manifest = await newestManifest(unit.store, unit.record.path);
  const bytes = manifest && compactionBytes(manifest, effective.target_rows_per_fragment);
  return bytes === undefined ? undefined : { bytes };
}
