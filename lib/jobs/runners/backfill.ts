/**
 * `backfill`: AlterTableBackfillColumns. Computes a computed column's rows with its binding
 * (lib/adapters/lance/computed.ts): those matching the request's `where`, by default those still null.
 * One UPDATE, one commit: a backfill that fails leaves the table as it was, so a retry repeats
 * the whole of it.
 */
import { BACKFILL } from '../../catalog/data/backfill.js';
import { dataEngineOf } from '../../catalog/services.js';
import type { JobRunner } from '../runner.js';
import { jobTable } from './table.js';

export { BACKFILL };

export const backfillRunner: JobRunner = async (job, { services, signal }) => {
  const table = await jobTable(services, job);
  signal.throwIfAborted();
  const p = job.params;
  const r = await dataEngineOf(services).backfill(table.location, {
    column: String(p.column),
    ...(typeof p.where === 'string' ? { where: p.where } : {}),
    ...(typeof p.branch === 'string' ? { branch: p.branch } : {}),
  });
  return { updated_rows: String(r.updated_rows), version: String(r.version), expression: r.expression, where: r.where };
};
