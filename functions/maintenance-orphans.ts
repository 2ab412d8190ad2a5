import { scheduledPass } from '../lib/app/scheduled-pass.js';
import { orphanScan } from '../lib/maintenance/orphans.js';

/**
 * Scheduled orphan scan (infra/constructs/maintenance.ts): reports unreachable objects in every
 * warehouse; deletes (after re-checking each) only when the stack enables it
 * (RASK_ORPHANS_DELETE=true, with a role that may delete). No LanceDB: manifests are decoded by
 * lib/maintenance/lance-manifest.ts.
 */
export const { observability, handler } = scheduledPass({
  name: 'orphans',
  pass: orphanScan,
  options: (config) => ({ delete: config.RASK_ORPHANS_DELETE }),
});
