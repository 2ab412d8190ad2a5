import { createAwsRelay, type AwsRelay } from '../lib/app/aws-relay.js';
import { loadMaintenanceConfig } from '../lib/config.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';

/**
 * The change relay (infra/constructs/change-relay.ts; docs/events.md, "The relay"): every minute,
 * the change log in the registry bucket to the EventBridge bus (the cursor moves only past what
 * was published), and commits made straight to the warehouses' `_versions/` into the log. No
 * LanceDB. A cycle with problems throws after saving its state: a function error (alarm) and the
 * failure destination, and the next minute's cycle tries again.
 */
export const observability = lambdaObservability('change-relay');
const { logger } = observability;

/** Stop starting tables this long before the function's timeout. */
const RESERVE_MS = 30_000;

let relay: Promise<AwsRelay> | undefined;
const relayOnce = (): Promise<AwsRelay> => {
  relay ??= createAwsRelay(loadMaintenanceConfig(), { logError: (message, fields) => logger.error(message, fields) });
  // A failed start-up (e.g. S3 unreachable) must not poison the container forever.
  relay.catch(() => (relay = undefined));
  return relay;
};

export const handler = withPowertools(async (_event: unknown, context: { getRemainingTimeInMillis(): number }) => {
  const report = await (await relayOnce()).run(Date.now() + Math.max(0, context.getRemainingTimeInMillis() - RESERVE_MS));
  logger.info('change relay', { ...report });
  if (report.problems.length > 0 || report.unpublished > 0) {
    throw new Error(`change relay: ${report.unpublished} events not published yet; ${report.problems.slice(0, 5).join('; ')}`);
  }
  return report;
}, observability);
