/**
 * The sweep and the index build in fan-out mode (./fan-out.ts): walk, rule out the tables the
 * registry alone says to leave alone (./table-checks.ts), queue one job per remaining table.
 * Kept apart from ./sweep.ts and ./index-builder.ts, which load LanceDB for the in-process
 * passes, so that the scheduled Lambdas (functions/maintenance-sweep.ts, maintenance-index.ts)
 * bundle no data-plane code and need no LanceDB layer; the jobs function runs the per-table work.
 */
import { fanOutPass } from './fan-out.js';
import type { MaintenancePass } from './pass.js';
import { precheck, skipReason } from './table-checks.js';

/** The sweep's fan-out: skips a table the sweep itself would skip before opening it (state, purge, no data, policy, interval). */
export const sweepFanOut: MaintenancePass = (services, options) =>
  fanOutPass(services, options, 'sweep', async (unit) => {
    const checked = await precheck(unit, () => services.now());
    return 'skip' in checked ? checked.skip : undefined;
  });

/** The index build's fan-out: skips a table mid-rename, mid-purge or declared only. */
export const indexFanOut: MaintenancePass = (services, options) =>
  fanOutPass(services, options, 'index', async (unit) => {
    const skip = await skipReason(unit);
    return skip ? { project: unit.project, table: unit.id, ...skip } : undefined;
  });
