import { scheduledPass } from '../lib/app/scheduled-pass.js';
import { indexFanOut } from '../lib/maintenance/fan-out-passes.js';

/**
 * Scheduled index build (infra/constructs/maintenance.ts): walks the registry and queues one
 * `maintenance_index` job per table that needs one (lib/maintenance/fan-out-passes.ts); the
 * jobs function runs each (builds the indices the policy declares and the table lacks, queues a
 * vector build over more rows than RASK_MAX_SYNC_VECTOR_INDEX_ROWS as its own job, folds past
 * the threshold, reports health). This function opens no dataset: no LanceDB layer, arm64, and
 * a role that cannot write table data.
 */
export const { observability, handler } = scheduledPass({
  name: 'index',
  pass: indexFanOut,
});
