/**
 * AlterTableBackfillColumns' behaviour: checks the computed column and its filter against the
 * table (4, 12, 13), then queues a `backfill` job (its runner: lib/jobs/runners/backfill.ts)
 * whose summary says what will be computed; DescribeTransaction follows it (docs/jobs.md).
 */
import { defaultBackfillFilter } from '../../data/backfill-filter.js';
import type { BackfillRequest } from '../../ports/data-engine.js';
import { jobContext } from '../../queue/context.js';
import { enqueue } from '../../queue/jobs.js';
import { type CatalogServices, dataEngineOf } from '../services.js';
import type { ResolvedTable } from '../protocols/lookup.js';

export const BACKFILL = 'backfill';

export async function queueBackfill(svc: CatalogServices, t: ResolvedTable, request: BackfillRequest): Promise<{ job_id: string }> {
  const binding = await dataEngineOf(svc).checkBackfill(t.location, request);
  const job = await enqueue(jobContext(svc), {
    type: BACKFILL,
    table: { id: t.record.id, uid: t.record.uid },
    params: { ...request, column: binding.column },
    summary: {
      column: binding.column,
      expression: binding.expression,
      where: request.where ?? defaultBackfillFilter(binding.column),
      ...(request.branch ? { branch: request.branch } : {}),
    },
  });
  return { job_id: job.id };
}
