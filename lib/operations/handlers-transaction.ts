import type { CatalogServices } from '../catalog/services.js';
import { jobContext } from '../queue/context.js';
import { parseActions } from '../queue/alter.js';
import { alterJob, describeJob, transactionId } from '../queue/jobs.js';
import type { HandlersOf } from '../contract/request.js';

/**
 * DescribeTransaction and AlterTransaction: the asynchronous jobs that CreateTableIndex (large
 * vector builds) and AlterTableBackfillColumns queue (docs/jobs.md). Records only, in the
 * metadata bundle: nothing here runs a job or loads LanceDB.
 */
export const transactionHandlers: HandlersOf<'lib/operations/handlers-transaction.ts', CatalogServices> = {
  DescribeTransaction: async (req, svc) => describeJob(jobContext(svc), transactionId(req.id, req.delimiter)),
  AlterTransaction: async (req, svc) => {
    const id = transactionId(req.id, req.delimiter);
    return alterJob(jobContext(svc), id, parseActions(req.body.actions));
  },
};
