import type { S3Client } from '@aws-sdk/client-s3';
import type { CatalogServices } from '../catalog/services.js';
import type { AwsConfig } from '../config.js';
import type { Router } from '../http/router.js';
import type { HandlerMap } from '../contract/request.js';
import { buildApp, type DataPlane } from './build.js';
import { type AwsObservation, awsOptions } from './aws-services.js';

export { type AwsObservation, createAwsServices } from './aws-services.js';

/**
 * The AWS composition: registry and default warehouse in S3 (lib/app/aws-services.ts, awsOptions).
 * Built once per Lambda container (module scope in functions/*.ts), so its clients and caches
 * survive between invocations.
 */
export async function createAwsApp(
  config: AwsConfig,
  handlers: HandlerMap<CatalogServices>,
  client?: S3Client,
  dataPlane: DataPlane = {},
  observe: AwsObservation = {},
): Promise<{ router: Router; services: CatalogServices }> {
  return buildApp({ ...awsOptions(config, client, dataPlane, observe), handlers });
}

/**
 * Builds the app on first use and keeps the promise, so concurrent cold invocations share it.
 * `dataPlane` builds the bundle's data plane (engine, inspector) from the configuration.
 */
export function lazyAwsRouter(
  handlers: HandlerMap<CatalogServices>,
  dataPlane?: (config: AwsConfig) => DataPlane,
  observe?: AwsObservation,
): () => Promise<Router> {
  let app: Promise<Router> | undefined;
  return () => {
    app ??= import('../config.js').then(({ loadAwsConfig }) => {
      const config = loadAwsConfig();
      return createAwsApp(config, handlers, undefined, dataPlane?.(config), observe).then((a) => a.router);
    });
    // A failed start-up (e.g. S3 unreachable) must not poison the container forever.
    app.catch(() => (app = undefined));
    return app;
  };
}
