/**
 * `backfill`: AlterTableBackfillColumns. Computes a computed column's rows with its binding
 * (lib/adapters/lance/computed.ts): those matching the request's `where`, by default those still
 * null, written column-only slice by slice (lib/catalog/data/backfill.ts `runBackfill`): each
 * slice is its own commit, so a retry after a stop finds the done slices no longer null.
 */
import { BACKFILL, runBackfill } from '../../catalog/data/backfill.js';
import type { JobRunner } from '../runner.js';
import { jobTable } from './table.js';

export { BACKFILL };

export const backfillRunner: JobRunner = async (job, { services, signal }) => {
  const table = await jobTable(services, job);
  signal.throwIfAborted();
  const p = job.params;
  const r = await runBackfill(
    services,
    table,
    {
      column: String(p.column),
      ...(typeof p.where === 'string' ? { where: p.where } : {}),
      ...(typeof p.branch === 'string' ? { branch: p.branch } : {}),
    },
    { signal },
  );
  return {
    updated_rows: String(r.updated_rows),
    ...(r.version !== undefined ? { version: String(r.version) } : {}),
    expression: r.expression,
    where: r.where,
    write_path: r.path,
    ...(r.key ? { key: r.key } : {}),
    slices: String(r.slices),
    ...(r.bytes_written !== undefined ? { bytes_written: String(r.bytes_written) } : {}),
    ...(r.index_effects.length > 0 ? { index_effects: JSON.stringify(r.index_effects) } : {}),
  };
};
