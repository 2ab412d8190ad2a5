import { scheduledPass } from '../lib/app/scheduled-pass.js';
import { sweepFanOut } from '../lib/maintenance/fan-out-passes.js';

/**
 * Scheduled sweep (infra/constructs/maintenance.ts): walks the registry and queues one
 * `maintenance_sweep` job per table that needs one (lib/maintenance/fan-out-passes.ts); the
 * jobs function runs each (compact → fold new rows into indices → clean up old versions, as the
 * table's policy says). This function opens no dataset: no LanceDB layer, arm64, and a role
 * that reads the registry and warehouse listings, writes its pending markers, reports and jobs,
 * and cannot write table data (test/infra/bundle.test.ts checks the bundle holds no LanceDB).
 */
export const { observability, handler } = scheduledPass({
  name: 'sweep',
  pass: sweepFanOut,
});
