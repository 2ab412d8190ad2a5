/**
 * AlterTableBackfillColumns: decodes the request and queues a `backfill` job for a computed
 * column (lib/catalog/data/backfill.ts), answering 202 with its id; DescribeTransaction follows
 * it (docs/jobs.md).
 *
 * Checked before anything is queued: the table (4), the column (12), that it is computed (13),
 * that `where` is a filter the table can plan (13). The spec's tuning fields (concurrency,
 * checkpoint and task sizes…) steer a distributed UDF executor; here a backfill is one UPDATE,
 * so they are type-checked and have nothing to tune. Fields that would change *what* is
 * computed and cannot be honoured (`read_version`, `cluster`, `manifest`) are refused.
 */
import { queueBackfill } from '../../catalog/data/backfill.js';
import type { CatalogServices } from '../../catalog/services.js';
import { optSql } from '../../data/sql-bounds.js';
import { optInt, optNumber, optString, reqString } from '../../data/validate.js';
import { UnsupportedError } from '../../errors.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { table } from './context.js';

const TUNING_INTS = [
  'concurrency',
  'intra_applier_concurrency',
  'min_checkpoint_size',
  'max_checkpoint_size',
  'task_size',
  'num_frags',
  'checkpoint_size',
  'commit_granularity',
] as const;

const REFUSED: Readonly<Record<string, string>> = {
  read_version: 'a backfill computes from the latest version (it is an UPDATE of the table); "read_version" cannot be honoured',
  cluster: 'backfills run on the catalog\'s own workers; there is no cluster to choose',
  manifest: 'backfills run on the catalog\'s own workers; there is no execution manifest to choose',
};

export const backfillHandlers: HandlersOf<'lib/operations/data/backfill.ts', CatalogServices> = {
  AlterTableBackfillColumns: async (req, svc) => {
    const request = readRequest(req);
    return queueBackfill(svc, await table(req, svc), request);
  },
};

function readRequest(req: OperationRequest): { column: string; where?: string; branch?: string } {
  const b = req.body;
  for (const [field, reason] of Object.entries(REFUSED)) {
    if (b[field] != null) throw new UnsupportedError(reason);
  }
  for (const field of TUNING_INTS) optInt(b[field], field, { min: 0 });
  optNumber(b.batch_checkpoint_flush_interval_seconds, 'batch_checkpoint_flush_interval_seconds');
  const column = reqString(b.column, 'column');
  const where = optSql(b.where, 'where');
  const branch = optString(b.branch, 'branch') || undefined;
  return { column, ...(where === undefined ? {} : { where }), ...(branch === undefined ? {} : { branch }) };
}
