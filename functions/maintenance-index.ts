import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { createMaintenanceServices } from '../lib/app/aws-maintenance.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { indexBuild } from '../lib/maintenance/index-builder.js';
import { maintenanceHandler } from '../lib/maintenance/lambda.js';

/**
 * Scheduled index build (infra/constructs/maintenance.ts): builds the indices a policy declares
 * and the table lacks (a vector index over more rows than RASK_MAX_SYNC_VECTOR_INDEX_ROWS is
 * queued as a job instead, as the API does), folds indices past the policy's threshold and
 * reports index health. Writes indices and jobs, so its role may write the registry, the
 * warehouse and the work queue; runs with the LanceDB layer.
 */
let services: Promise<CatalogServices> | undefined;
function servicesOnce(): Promise<CatalogServices> {
  services ??= (async () => {
    const config = loadAwsConfig();
    const base = await createMaintenanceServices(config);
    // The same limit the data function applies to a build inside a request.
    return { ...base, dataLimits: { maxResultBytes: config.RASK_MAX_RESULT_BYTES, maxSyncVectorIndexRows: config.RASK_MAX_SYNC_VECTOR_INDEX_ROWS } };
  })();
  services.catch(() => (services = undefined));
  return services;
}

export const observability = lambdaObservability('maintenance-index');

export const handler = withPowertools(
  maintenanceHandler({
    name: 'index',
    pass: indexBuild,
    services: servicesOnce,
    reserveMs: 60_000,
    // One job per table that needs work, run by the jobs function (lib/maintenance/fan-out.ts).
    options: { fanOut: true },
    log: (entry) => observability.logger.info('maintenance pass', entry),
  }),
  observability,
);

