import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { createMaintenanceServices } from '../lib/app/aws-maintenance.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { indexFanOut } from '../lib/maintenance/fan-out-passes.js';
import { maintenanceHandler } from '../lib/maintenance/lambda.js';

/**
 * Scheduled index build (infra/constructs/maintenance.ts): walks the registry and queues one
 * `maintenance_index` job per table that needs one (lib/maintenance/fan-out-passes.ts); the
 * jobs function runs each (builds the indices the policy declares and the table lacks, queues a
 * vector build over more rows than RASK_MAX_SYNC_VECTOR_INDEX_ROWS as its own job, folds past
 * the threshold, reports health). This function opens no dataset: no LanceDB layer, arm64, and
 * a role that cannot write table data.
 */
let services: Promise<CatalogServices> | undefined;
function servicesOnce(): Promise<CatalogServices> {
  services ??= createMaintenanceServices(loadAwsConfig());
  services.catch(() => (services = undefined));
  return services;
}

export const observability = lambdaObservability('maintenance-index');

export const handler = withPowertools(
  maintenanceHandler({
    name: 'index',
    pass: indexFanOut,
    services: servicesOnce,
    reserveMs: 60_000,
    log: (entry) => observability.logger.info('maintenance pass', entry),
  }),
  observability,
);

