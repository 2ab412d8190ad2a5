import type { CatalogServices } from '../catalog/services.js';
import { loadMaintenanceConfig, type MaintenanceConfig } from '../config.js';
import { maintenanceHandler } from '../maintenance/lambda.js';
import type { MaintenancePass, PassName, PassOptions } from '../maintenance/pass.js';
import { lambdaObservability } from '../observability/lambda.js';
import { withPowertools } from '../observability/middy.js';
import { createMaintenanceServices } from './aws-maintenance.js';

/**
 * The wiring every scheduled pass function shares (functions/maintenance-{sweep,index,reconcile,
 * orphans}.ts), so an entry names only its pass: Powertools as `maintenance-<name>`, the
 * configuration validated by lib/config.ts (a bad `RASK_*` value fails the invocation naming the
 * variable), the maintenance services built once per container, and the slice handler of
 * lib/maintenance/lambda.ts. It lives with the composition root because it picks the AWS adapters.
 */
export interface ScheduledPassSpec {
  readonly name: PassName;
  readonly pass: MaintenancePass;
  /** The pass's fixed options (repair, delete) from the function's configuration. */
  readonly options?: (config: MaintenanceConfig) => Omit<PassOptions, 'cursor' | 'deadline'>;
}

/** Each slice stops starting work a minute before the function's 15-minute timeout. */
export const SCHEDULED_PASS_RESERVE_MS = 60_000;

export function scheduledPass(spec: ScheduledPassSpec, env: NodeJS.ProcessEnv = process.env) {
  const observability = lambdaObservability(`maintenance-${spec.name}`, env);
  // Loaded on the first invocation, as the services are, so importing the entry reads nothing.
  let config: MaintenanceConfig | undefined;
  const configOnce = () => (config ??= loadMaintenanceConfig(env));
  let services: Promise<CatalogServices> | undefined;
  const servicesOnce = (): Promise<CatalogServices> => {
    services ??= createMaintenanceServices(configOnce());
    // A failed start-up (e.g. S3 unreachable) must not poison the container forever.
    services.catch(() => (services = undefined));
    return services;
  };
  const handler = withPowertools(
    maintenanceHandler({
      name: spec.name,
      pass: (s, options) => spec.pass(s, { ...spec.options?.(configOnce()), ...options }),
      services: servicesOnce,
      reserveMs: SCHEDULED_PASS_RESERVE_MS,
      log: (entry) => observability.logger.info('maintenance pass', entry),
    }),
    observability,
  );
  return { observability, handler };
}
