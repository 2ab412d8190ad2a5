import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { createMaintenanceServices } from '../lib/app/aws-maintenance.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { maintenanceHandler } from '../lib/maintenance/lambda.js';
import { sweep } from '../lib/maintenance/sweep.js';

/**
 * Scheduled sweep (infra/constructs/maintenance.ts): per table, compact → fold new rows into
 * indices → clean up old versions, as each table's maintenance policy says. Rewrites dataset
 * bytes, so its role may write the registry and the warehouse; runs with the LanceDB layer.
 */
let services: Promise<CatalogServices> | undefined;
function servicesOnce(): Promise<CatalogServices> {
  services ??= createMaintenanceServices(loadAwsConfig());
  services.catch(() => (services = undefined));
  return services;
}

export const observability = lambdaObservability('maintenance-sweep');

export const handler = withPowertools(
  maintenanceHandler({
    name: 'sweep',
    pass: sweep,
    services: servicesOnce,
    reserveMs: 60_000,
    // One job per table that needs work, run by the jobs function (lib/maintenance/fan-out.ts).
    options: { fanOut: true },
    log: (entry) => observability.logger.info('maintenance pass', entry),
  }),
  observability,
);

