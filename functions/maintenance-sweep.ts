import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { createMaintenanceServices } from '../lib/app/aws-maintenance.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { maintenanceHandler } from '../lib/maintenance/lambda.js';
import { sweepFanOut } from '../lib/maintenance/fan-out-passes.js';

/**
 * Scheduled sweep (infra/constructs/maintenance.ts): walks the registry and queues one
 * `maintenance_sweep` job per table that needs one (lib/maintenance/fan-out-passes.ts); the
 * jobs function runs each (compact → fold new rows into indices → clean up old versions, as the
 * table's policy says). This function opens no dataset: no LanceDB layer, arm64, and a role
 * that reads the registry and warehouse listings, writes its pending markers, reports and jobs,
 * and cannot write table data (test/infra/bundle.test.ts checks the bundle holds no LanceDB).
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
    pass: sweepFanOut,
    services: servicesOnce,
    reserveMs: 60_000,
    log: (entry) => observability.logger.info('maintenance pass', entry),
  }),
  observability,
);

