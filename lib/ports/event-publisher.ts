import type { RaskEvent } from '../events/cloudevent.js';

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
  const stats = newStats();
  let inner: Promise<EventPublisher> | undefined;
  return {
    stats,
    async publish(events) {
      let publisher: EventPublisher;
      try {
        publisher = await (inner ??= build());
      } catch {
        inner = undefined;
        stats.failed += events.length;
        return;
      }
      const before = { ...publisher.stats };
      await publisher.publish(events);
      stats.published += publisher.stats.published - before.published;
      stats.retried += publisher.stats.retried - before.retried;
      stats.failed += publisher.stats.failed - before.failed;
    },
  };
}
