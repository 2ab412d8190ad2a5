import { createAwsApp } from '../lib/app/aws.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { loadAwsConfig } from '../lib/config.js';
import { jobsHandler } from '../lib/jobs/lambda.js';
import { dataRunners } from '../lib/jobs/runners/index.js';

/**
 * Scheduled maintenance: runs queued jobs (large index builds, backfills) off the request path.
 * EventBridge invokes it every minute (infra/constructs/jobs.ts); it runs with the LanceDB layer.
 */

/** No job is started in the last 10 of the function's 15 minutes: each one gets at least 10. */
const RESERVE_MS = 10 * 60_000;

let services: Promise<CatalogServices> | undefined;

function servicesOnce(): Promise<CatalogServices> {
  // Handlers are not needed: this function serves no API, it only uses the services.
  services ??= createAwsApp(loadAwsConfig(), {}).then((app) => app.services);
  // A failed start-up (e.g. S3 unreachable) must not poison the container forever.
  services.catch(() => (services = undefined));
  return services;
}

export const handler = jobsHandler({ services: servicesOnce, runners: dataRunners, reserveMs: RESERVE_MS });
