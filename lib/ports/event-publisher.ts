import type { RaskEvent } from '../events/cloudevent.js';
import type { ChangeLog } from './change-log.js';

/**
 * Where change events go: EventBridge on AWS (lib/adapters/aws/eventbridge-publisher.ts), an
 * NDJSON file locally (lib/adapters/local/ndjson-publisher.ts).
 *
 * `publish` never rejects: a failed publish must not fail the request that made the change
 * (the change has happened). Implementations retry what can be retried, then log and count what
 * was lost (`stats`), so a lost event is loud without being fatal.
 */
export interface EventPublisher {
  publish(events: readonly RaskEvent[]): Promise<void>;
  readonly stats: PublisherStats;
}

export interface PublisherStats {
  published: number;
  retried: number;
  failed: number;
}

export const newStats = (): PublisherStats => ({ published: 0, retried: 0, failed: 0 });

/**
 * A publisher built on first use (so a cold start that only reads never loads its client). If
 * building it fails, the events are counted as failed and the next publish tries again.
 */
export function lazyPublisher(build: () => Promise<EventPublisher>): EventPublisher {
  let unbuilt = 0;
  let built: EventPublisher | undefined;
  let inner: Promise<EventPublisher> | undefined;
  // Read through to the built publisher's counters: a before/after difference around each
  // publish would count the work of every publish running concurrently with it as its own.
  const stats: PublisherStats = {
    get published() {
      return built?.stats.published ?? 0;
    },
    get retried() {
      return built?.stats.retried ?? 0;
    },
    get failed() {
      return unbuilt + (built?.stats.failed ?? 0);
    },
  };
  return {
    stats,
    async publish(events) {
      try {
        built = await (inner ??= build());
      } catch {
        inner = undefined;
        unbuilt += events.length;
        return;
      }
      await built.publish(events);
    },
  };
}

/**
 * A change log (lib/ports/change-log.ts) as the publisher of the doors' events: each publish is
 * an append, awaited (the log is the durable record a consumer pages), which never rejects: a
 * failed append is counted and reported, like a failed PutEvents.
 */
export function logPublisher(log: ChangeLog, onError?: (message: string, fields: Record<string, unknown>) => void): EventPublisher {
  const stats = newStats();
  return {
    stats,
    async publish(events) {
      if (events.length === 0) return;
      try {
        await log.append(events);
        stats.published += events.length;
      } catch (err) {
        stats.failed += events.length;
        onError?.('change events could not be written', { count: events.length, ids: events.map((e) => e.id), error: (err as Error).message });
      }
    },
  };
}
