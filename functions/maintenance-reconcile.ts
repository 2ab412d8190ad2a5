import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { createMaintenanceServices } from '../lib/app/aws-maintenance.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { maintenanceHandler } from '../lib/maintenance/lambda.js';
import { reconcile } from '../lib/maintenance/reconcile.js';

/**
 * Scheduled reconcile (infra/constructs/maintenance.ts): reports drift between the registry and
 * storage; repairs only when the stack enables it (RASK_RECONCILE_REPAIR=true, with a role that
 * may write). No LanceDB.
 */
let services: Promise<CatalogServices> | undefined;
function servicesOnce(): Promise<CatalogServices> {
  services ??= createMaintenanceServices(loadAwsConfig());
  services.catch(() => (services = undefined));
  return services;
}

export const observability = lambdaObservability('maintenance-reconcile');

export const handler = withPowertools(
  maintenanceHandler({
    name: 'reconcile',
    pass: reconcile,
    services: servicesOnce,
    reserveMs: 60_000,
    options: { repair: process.env.RASK_RECONCILE_REPAIR === 'true' },
    log: (entry) => observability.logger.info('maintenance pass', entry),
  }),
  observability,
);

