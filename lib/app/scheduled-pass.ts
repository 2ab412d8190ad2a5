import type { CatalogServices } from '../catalog/services.js';
import { loadMaintenanceConfig, type MaintenanceConfig } from '../config.js';
import { maintenanceHandler } from '../maintenance/lambda.js';
import type { MaintenancePass, PassName, PassOptions } from '../maintenance/pass.js';
import { lambdaObservability } from '../observability/lambda.js';
import { withPowertools } from '../observability/middy.js';
import { objectChangeLog } from '../adapters/aws/object-change-log.js';
import { logPublisher } from '../ports/event-publisher.js';
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
    services ??= createMaintenanceServices(configOnce()).then((s) => withChangeLog(s, configOnce(), (message, fields) => observability.logger.error(message, fields)));
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

/**
 * The pass's `maintenance.<pass>.completed` events (lib/maintenance/announce.ts) go where the
 * doors' do on AWS: appended to the change log in the registry bucket (`changes/`), which the
 * feed pages and the change relay takes to the bus (docs/events.md, "Delivery"). Without it no
 * scheduled pass's event reached the log or the bus on AWS, though locally they did. The role's
 * grant is exactly PutObject on `changes/*` (infra/constructs/maintenance.ts).
 */
export function withChangeLog(services: CatalogServices, config: MaintenanceConfig, logError: (message: string, fields: Record<string, unknown>) => void): CatalogServices {
  const changes = objectChangeLog({ store: services.registry.store, retentionDays: config.RASK_CHANGES_RETENTION_DAYS });
  return { ...services, events: logPublisher(changes, logError) };
}
