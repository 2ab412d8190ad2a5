import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { createMaintenanceServices } from '../lib/app/aws-maintenance.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { maintenanceHandler } from '../lib/maintenance/lambda.js';
import { orphanScan } from '../lib/maintenance/orphans.js';

/**
 * Scheduled orphan scan (infra/constructs/maintenance.ts): reports unreachable objects in every
 * warehouse; deletes (after re-checking each) only when the stack enables it
 * (RASK_ORPHANS_DELETE=true, with a role that may delete). No LanceDB: manifests are decoded by
 * lib/maintenance/lance-manifest.ts.
 */
let services: Promise<CatalogServices> | undefined;
function servicesOnce(): Promise<CatalogServices> {
  services ??= createMaintenanceServices(loadAwsConfig());
  services.catch(() => (services = undefined));
  return services;
}

export const observability = lambdaObservability('maintenance-orphans');

export const handler = withPowertools(
  maintenanceHandler({
    name: 'orphans',
    pass: orphanScan,
    services: servicesOnce,
    reserveMs: 60_000,
    options: { delete: process.env.RASK_ORPHANS_DELETE === 'true' },
    log: (entry) => observability.logger.info('maintenance pass', entry),
  }),
  observability,
);

