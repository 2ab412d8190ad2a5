import type { S3Client } from '@aws-sdk/client-s3';
import { cursorAt, objectChangeLog } from '../adapters/aws/object-change-log.js';
import { readObjectVersion } from '../adapters/aws/s3-object-version.js';
import { AWS_RELAY_SETTLE_MS, type MaintenanceConfig } from '../config.js';
import { notificationRelay, parseObjectCreated, type NotificationReport, type ObjectCreated } from '../maintenance/change-notifications.js';
import { relayChanges, type RelayReport } from '../maintenance/change-relay.js';
import { lazyPublisher } from '../ports/event-publisher.js';
import { createMaintenanceServices } from './aws-maintenance.js';
import { createS3Client } from './aws-s3.js';


/**
 * With notifications on, the scheduled scan is the safety net: it judges a manifest only once the
 * notification path has had its turn (the queue's delay, its batching window, a retry), so a
 * commit both find is rarely appended twice (the same id when it is).
 */
export const AWS_SCAN_SETTLE_MS = 120_000;

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
  /** One scheduled cycle, starting no new table after `deadline` (epoch ms). */
  run(deadline: number): Promise<RelayReport>;
  /** A batch of S3 "Object Created" notifications (lib/maintenance/change-notifications.ts). */
  notified(notes: readonly ObjectCreated[]): Promise<NotificationReport>;
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
  const client = options.client ?? createS3Client(config);
  const services = await createMaintenanceServices(config, client);
  const changes = objectChangeLog({ store: services.registry.store, retentionDays: config.RASK_CHANGES_RETENTION_DAYS, ...(options.now ? { now: options.now } : {}) });
  const busName = config.RASK_EVENT_BUS_NAME;
  const publisher = busName
    ? lazyPublisher(async () => {
        const { EventBridgeClient, eventBridgePublisher } = await import('../adapters/aws/eventbridge-publisher.js');
        const client = (options.eventBridge as InstanceType<typeof EventBridgeClient> | undefined) ?? new EventBridgeClient({ region: config.AWS_REGION });
        return eventBridgePublisher({ client, busName, onError: options.logError, ...(options.sleep ? { sleep: options.sleep } : {}) });
      })
    : undefined;
  const notifications = config.RASK_CHANGE_NOTIFICATIONS;
  const registryPrefix = config.RASK_REGISTRY_PREFIX === '' || config.RASK_REGISTRY_PREFIX.endsWith('/') ? config.RASK_REGISTRY_PREFIX : `${config.RASK_REGISTRY_PREFIX}/`;
  const relayNotifications = notificationRelay(
    { ...services, changes },
    {
      registryBucket: config.RASK_REGISTRY_BUCKET,
      registryPrefix,
      readVersion: (key, versionId) => readObjectVersion(client, config.RASK_REGISTRY_BUCKET, registryPrefix + key, versionId),
      cursorAt,
    },
  );
  return {
    run: (deadline) =>
      // With `recover`: no Lambda start-up finds a change whose door died before its append; each cycle does.
      // With notifications, the log's entries reach the bus through theirs: the scan publishes nothing.
      relayChanges(
        { ...services, changes },
        {
          ...(publisher && !notifications ? { publisher } : {}),
          settleMs: notifications ? AWS_SCAN_SETTLE_MS : AWS_RELAY_SETTLE_MS,
          deadline,
          recover: true,
          ...(options.now ? { now: options.now } : {}),
        },
      ),
    notified: (notes) =>
      relayNotifications(notes, { ...(publisher ? { publisher } : {}), settleMs: AWS_RELAY_SETTLE_MS, ...(options.now ? { now: options.now } : {}), ...(options.sleep ? { sleep: options.sleep } : {}) }),
  };
}

/** What Lambda's SQS poller hands the relay: the notification queue's messages, each body an EventBridge event. */
export interface SqsBatch {
  readonly Records: readonly { readonly messageId: string; readonly body: string; readonly eventSource?: string }[];
}

export const isSqsBatch = (event: unknown): event is SqsBatch =>
  typeof event === 'object' &&
  event !== null &&
  Array.isArray((event as { Records?: unknown }).Records) &&
  (event as SqsBatch).Records.every((r) => (r as { eventSource?: unknown } | null)?.eventSource === 'aws:sqs');

type Log = (message: string, fields: Record<string, unknown>) => void;

/**
 * One batch of the notification queue (functions/change-relay.ts): the records whose work failed
 * are answered as `batchItemFailures` (the event source mapping reports them: ReportBatchItemFailures),
 * so the queue offers only those again and, after its receives, moves them to the failure queue.
 * A message that is no S3 "Object Created" event is logged and dropped: receiving it again would
 * not change it.
 */
export async function relaySqsBatch(relay: AwsRelay, batch: SqsBatch, log: { info: Log; warn: Log; error: Log }): Promise<{ batchItemFailures: { itemIdentifier: string }[] }> {
  const notes: ObjectCreated[] = [];
  const ids: string[] = [];
  for (const record of batch.Records) {
    let note: ObjectCreated | undefined;
    try {
      note = parseObjectCreated(JSON.parse(record.body));
    } catch {
      note = undefined;
    }
    if (!note) {
      log.warn('change relay: a queue message that is no S3 Object Created event', { messageId: record.messageId });
      continue;
    }
    notes.push(note);
    ids.push(record.messageId);
  }
  const report = await relay.notified(notes);
  log.info('change relay: notifications', { ...report, failed: report.failed.length, notifications: notes.length });
  if (report.problems.length > 0) log.error('change relay: notifications to offer again', { problems: report.problems.slice(0, 5), failed: report.failed.length });
  return { batchItemFailures: report.failed.map((i) => ({ itemIdentifier: ids[i] })) };
}
