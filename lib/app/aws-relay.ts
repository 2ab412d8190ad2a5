import type { S3Client } from '@aws-sdk/client-s3';
import { objectChangeLog } from '../adapters/aws/object-change-log.js';
import type { MaintenanceConfig } from '../config.js';
import { relayChanges, type RelayReport } from '../maintenance/change-relay.js';
import { lazyPublisher } from '../ports/event-publisher.js';
import { createMaintenanceServices } from './aws-maintenance.js';
import { createS3Client } from './aws-s3.js';

/**
 * How old a manifest must be before the AWS relay judges it: the change log's settle window
 * (15 s, lib/adapters/aws/object-change-log.ts) plus a door's time from its commit to its append,
 * with room. A catalog commit's event must be readable before its manifest is judged.
 */
export const AWS_RELAY_SETTLE_MS = 30_000;

export interface AwsRelayOptions {
  readonly client?: S3Client;
  /** An EventBridge client (tests: a fake); absent: one for the function's region, loaded on the first event. */
  readonly eventBridge?: unknown;
  readonly logError?: (message: string, fields: Record<string, unknown>) => void;
  /** Tests: the clock of the log's settle window and the relay's, and the publisher's backoff. */
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface AwsRelay {
  /** One cycle, starting no new table after `deadline` (epoch ms). */
  run(deadline: number): Promise<RelayReport>;
}

/**
 * The relay function's composition (functions/change-relay.ts; docs/events.md, "The relay"): the
 * maintenance services (registry, warehouses' stores), the change log in the registry bucket, and
 * the EventBridge publisher (batched PutEvents with retries; its client loaded on the first
 * event). Without RASK_EVENT_BUS_NAME it still finds commits made straight to storage.
 */
export async function createAwsRelay(
  config: MaintenanceConfig,
  options: AwsRelayOptions = {},
): Promise<AwsRelay> {
  const services = await createMaintenanceServices(config, options.client ?? createS3Client(config));
  const changes = objectChangeLog({ store: services.registry.store, retentionDays: config.RASK_CHANGES_RETENTION_DAYS, ...(options.now ? { now: options.now } : {}) });
  const busName = config.RASK_EVENT_BUS_NAME;
  const publisher = busName
    ? lazyPublisher(async () => {
        const { EventBridgeClient, eventBridgePublisher } = await import('../adapters/aws/eventbridge-publisher.js');
        const client = (options.eventBridge as InstanceType<typeof EventBridgeClient> | undefined) ?? new EventBridgeClient({ region: config.AWS_REGION });
        return eventBridgePublisher({ client, busName, onError: options.logError, ...(options.sleep ? { sleep: options.sleep } : {}) });
      })
    : undefined;
  return {
    run: (deadline) =>
      // With `recover`: no Lambda start-up finds a change whose door died before its append; each cycle does.
      relayChanges({ ...services, changes }, { ...(publisher ? { publisher } : {}), settleMs: AWS_RELAY_SETTLE_MS, deadline, recover: true, ...(options.now ? { now: options.now } : {}) }),
  };
}
