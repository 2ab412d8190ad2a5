import { scheduledPass } from '../lib/app/scheduled-pass.js';
import { reconcile } from '../lib/maintenance/reconcile.js';

/**
 * Scheduled reconcile (infra/constructs/maintenance.ts): reports drift between the registry and
 * storage; repairs only when the stack enables it (RASK_RECONCILE_REPAIR=true, with a role that
 * may write). No LanceDB.
 */
export const { observability, handler } = scheduledPass({
  name: 'reconcile',
  pass: reconcile,
  options: (config) => ({ repair: config.RASK_RECONCILE_REPAIR }),
});
