import type { CatalogServices } from '../catalog/services.js';
import { resolveTable } from '../catalog/protocols/lookup.js';
import { fmtId } from '../catalog/ids.js';
import { ServiceUnavailableError, TableNotFoundError } from '../errors.js';
import { queueTableJob, type FanOutItem } from './fan-out.js';
import { sweepEstimate } from './fan-out-passes.js';
import { forEachTable } from './walker.js';

/**
 * `POST /v1/table/{id}/maintenance/sweep` (docs/console.md, "Run a sweep now"): queues the sweep
 * job of one table of the caller's project, the same job the scheduled sweep queues in fan-out
 * mode (lib/maintenance/table-jobs.ts runs it), so a door-started sweep and a scheduled one are
 * one thing and never run twice at once: a table whose sweep job is still pending answers that
 * job (`queued: false`). The answer's `transaction_id` is followed with DescribeTransaction; the
 * job's output names the report it wrote (`rask.report`) when the sweep changed the table.
 */
export async function queueTableSweep(services: CatalogServices, id: readonly string[]): Promise<{ transaction_id: string; queued: boolean }> {
  // A missing or dropped table answers 404 before anything is written (and validates the id).
  await resolveTable(services, id);
  let outcome: { item: FanOutItem } | { error: unknown } | undefined;
  const walk = await forEachTable(services, { scope: { table: id } }, async (unit) => {
    try {
      outcome = { item: await queueTableJob(unit, 'sweep', {}, await sweepEstimate(unit)) };
    } catch (error) {
      outcome = { error };
    }
  });
  if (outcome && 'error' in outcome) throw outcome.error;
  if (outcome) return { transaction_id: outcome.item.transaction_id, queued: outcome.item.job === 'queued' };
  // Resolved a moment ago but not walked: dropped meanwhile (the walk says the scope is missing),
  // or its record or warehouse could not be read (a problem of storage: 503, whatever its words).
  if (walk.problems.length > 0 && !walk.scopeMissing) throw new ServiceUnavailableError(walk.problems.join('; '));
  throw new TableNotFoundError(`table ${fmtId(id)} does not exist`);
}
