import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { RaskEvent } from '../../events/cloudevent.js';
import { newStats, type EventPublisher } from '../../ports/event-publisher.js';

export interface EventBridgePublisherOptions {
  readonly client: EventBridgeClient;
  readonly busName: string;
  /** Attempts per entry (the first included) before it is counted as lost. */
  readonly attempts?: number;
  readonly onError?: (message: string, fields: Record<string, unknown>) => void;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** PutEvents takes at most 10 entries per call, and at most 256 KB of them. */
const BATCH = 10;
const BATCH_BYTES = 256 * 1024;

/** An entry's size as EventBridge counts it: Time is 14 bytes, Source, DetailType and Detail their UTF-8 bytes. */
const entrySize = (e: PutEventsRequestEntry) =>
  14 + Buffer.byteLength(e.Source ?? '') + Buffer.byteLength(e.DetailType ?? '') + Buffer.byteLength(e.Detail ?? '');

/** Consecutive runs of events that each fit one PutEvents; an event too large for any goes alone (and is refused). */
function batches(events: readonly RaskEvent[], entry: (e: RaskEvent) => PutEventsRequestEntry): RaskEvent[][] {
  const out: RaskEvent[][] = [];
  let bytes = 0;
  for (const e of events) {
    const size = entrySize(entry(e));
    const last = out.at(-1);
    if (last && last.length < BATCH && bytes + size <= BATCH_BYTES) {
      last.push(e);
      bytes += size;
    } else {
      out.push([e]);
      bytes = size;
    }
  }
  return out;
}

/**
 * Change events to the stack's EventBridge bus: batched PutEvents (10 entries, 256 KB a call), entries
 * that EventBridge reports as failed (throttling, internal errors) or a call that throws are
 * retried with backoff; what still fails is logged and counted, never thrown: the request that
 * made the change has succeeded and must say so.
 */
export function eventBridgePublisher(options: EventBridgePublisherOptions): EventPublisher {
  const stats = newStats();
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const entry = (e: RaskEvent): PutEventsRequestEntry => ({
    EventBusName: options.busName,
    Source: e.source,
    DetailType: e.type,
    Detail: JSON.stringify(e),
    Time: new Date(e.time),
    Resources: [],
  });
  return {
    stats,
    async publish(events) {
      for (const batch of batches(events, entry)) {
        let pending = batch;
        for (let attempt = 1; pending.length > 0; attempt++) {
          let failed: RaskEvent[];
          let reason = '';
          try {
            const out = await options.client.send(new PutEventsCommand({ Entries: pending.map(entry) }));
            failed = pending.filter((_, j) => out.Entries?.[j]?.ErrorCode !== undefined || out.Entries?.[j]?.EventId === undefined);
            reason = out.Entries?.find((x) => x.ErrorCode)?.ErrorCode ?? '';
          } catch (err) {
            failed = pending;
            reason = (err as Error).name;
          }
          stats.published += pending.length - failed.length;
          if (failed.length === 0) break;
          if (attempt >= attempts) {
            stats.failed += failed.length;
            options.onError?.('change events could not be published', {
              count: failed.length,
              reason,
              types: [...new Set(failed.map((e) => e.type))],
              ids: failed.map((e) => e.id),
            });
            break;
          }
          stats.retried += failed.length;
          await sleep(50 * 2 ** (attempt - 1));
          pending = failed;
        }
      }
    },
  };
}

/**
 * The client class, re-exported for callers that load this adapter with a dynamic `import()`
 * (lib/app/aws.ts, functions/api-meta.ts): importing the SDK package itself dynamically would
 * keep every one of its commands in the bundle, since a module namespace cannot be tree-shaken.
 */
export { EventBridgeClient };
