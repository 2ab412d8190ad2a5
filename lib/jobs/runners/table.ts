import type { CatalogServices } from '../../catalog/services.js';
import { resolveTable, type ResolvedTable } from '../../catalog/protocols/lookup.js';
import { fmtId } from '../../catalog/ids.js';
import { InvalidInputError, TableNotFoundError } from '../../errors.js';
import type { JobRecord } from '../../ports/job-record.js';

/**
 * The table a job was queued for, if it is still that table: a table dropped and re-created
 * under the same name since has another uid and is not touched. Both cases are permanent
 * failures (code 4): retrying cannot bring the old table back.
 */
export async function jobTable(services: CatalogServices, job: JobRecord): Promise<ResolvedTable> {
  if (!job.table) throw new InvalidInputError(`job ${job.id} names no table`);
  const table = await resolveTable(services, job.table.id);
  if (table.record.uid !== job.table.uid) {
    throw new TableNotFoundError(
      `table ${fmtId(job.table.id)} was dropped and re-created after this job was queued; the job belonged to the earlier table`,
    );
  }
  return table;
}
