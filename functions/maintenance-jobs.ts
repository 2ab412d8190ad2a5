import { lanceDataPlane } from '../lib/adapters/lance/data-plane.js';
// Services only, never aws.ts: no router, so no request guard and no policy engine in this bundle.
import { createAwsServices } from '../lib/app/aws-services.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { jobsHandler, type InvocationContext } from '../lib/jobs/lambda.js';
import { dataRunners } from '../lib/jobs/runners/index.js';
import { maintenanceRunners } from '../lib/maintenance/table-jobs.js';
import { publishJobOutcome, recordJobMetrics } from '../lib/observability/jobs-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';
import { initContainer } from '../lib/app/container-init.js';
import { loadLanceDb } from '../lib/adapters/lance/lancedb.js';

/**
 * Scheduled maintenance: runs queued jobs (large index builds, backfills, per-table sweeps and
 * index builds queued by the scheduled passes) off the request path.
 * EventBridge invokes it every minute (infra/constructs/jobs-schedule.ts); it runs with the
 * LanceDB layer.
 */

/** No job is started in the last 10 of the function's 15 minutes: each one gets at least 10. */
const RESERVE_MS = 10 * 60_000;

export const observability = lambdaObservability('jobs');
const { logger, metrics, instrument } = observability;

let services: Promise<CatalogServices> | undefined;

function servicesOnce(): Promise<CatalogServices> {
  // No router: this function serves no API and authorizes nothing, it only uses the services
  // (and their data engine: index builds and backfills run here).
  services ??= createAwsServices(loadAwsConfig(), undefined, { engine: lanceDataPlane().engine }, { logger, instrument });
  // A failed start-up (e.g. S3 unreachable) must not poison the container forever.
  services.catch(() => (services = undefined));
  return services;
}

// During init (lib/app/container-init.ts): the services' first reads, then LanceDB (index builds
// and backfills need it). Awaited: Lambda's init lasts until LanceDB has loaded.
await initContainer(servicesOnce, [loadLanceDb]);

const run = jobsHandler({
  services: servicesOnce,
  // Request jobs and the per-table jobs the scheduled sweep and index build queue.
  runners: { ...dataRunners, ...maintenanceRunners },
  reserveMs: RESERVE_MS,
  log: ({ message, ...fields }) => logger.info(String(message ?? 'job'), fields),
  // Per job, so that a later job killed with the invocation costs none of the earlier counts.
  onOutcome: (entry) => publishJobOutcome(metrics, entry.outcome),
});

export const handler = withPowertools(async (event: unknown, context: InvocationContext) => {
  const result = await run(event, context);
  // The outcomes were published one by one (onOutcome); zeros keep every series continuous.
  recordJobMetrics(metrics, { ...result, outcomes: {} });
  logger.info('jobs invocation', { ...result });
  return result;
}, observability);
