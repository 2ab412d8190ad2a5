import { createAwsRelay, isSqsBatch, relaySqsBatch, type AwsRelay } from '../lib/app/aws-relay.js';
import { loadMaintenanceConfig } from '../lib/config.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { withPowertools } from '../lib/observability/middy.js';

/**
 * The change relay (infra/constructs/change-relay.ts; docs/events.md, "The relay"). Two kinds of
 * invocation:
 *
 * - **S3 Event Notifications**, as the notification queue hands them over (an SQS batch whose
 *   bodies are EventBridge's "Object Created" events): change-log entries to the bus, manifests
 *   made straight to storage into the log (lib/maintenance/change-notifications.ts). The records
 *   whose work failed are answered as `batchItemFailures`, so the queue offers only those again
 *   (and, after its retries, moves them to the failure queue).
 * - **The schedule** (the safety net, every few minutes): the log read for claims (and put on the
 *   bus when notifications are off), the table scan for commits made straight to storage that no
 *   notification announced, the recovery of changes whose door died before its append. A cycle
 *   with problems throws after saving its state: a function error (alarm) and the failure
 *   destination, and the next cycle tries again.
 *
 * No LanceDB.
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

export const handler = withPowertools(async (event: unknown, context: { getRemainingTimeInMillis(): number }) => {
  if (isSqsBatch(event)) {
    return relaySqsBatch(await relayOnce(), event, {
      info: (message, fields) => logger.info(message, fields),
      warn: (message, fields) => logger.warn(message, fields),
      error: (message, fields) => logger.error(message, fields),
    });
  }
  const report = await (await relayOnce()).run(Date.now() + Math.max(0, context.getRemainingTimeInMillis() - RESERVE_MS));
  logger.info('change relay', { ...report });
  if (report.problems.length > 0 || report.unpublished > 0) {
    throw new Error(`change relay: ${report.unpublished} events not published yet; ${report.problems.slice(0, 5).join('; ')}`);
  }
  return report;
}, observability);
