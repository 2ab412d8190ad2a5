import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { RaskEvent } from '../../events/cloudevent.js';
import { newStats, type EventPublisher } from '../../ports/event-publisher.js';

export interface NdjsonPublisherOptions {
  /** `events/` inside the data directory. */
  readonly dir: string;
  /** Also print each event as a line on stdout (RASK_EVENTS_STDOUT). */
  readonly stdout?: boolean;
  readonly onError?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Local change events: one JSON line per event appended to `events/YYYY-MM-DD.ndjson` (UTC day
 * of the event). Each batch is one `appendFile` of whole lines, which the kernel applies as one
 * O_APPEND write, so lines of concurrent writers (several local server processes on one data
 * directory) never interleave mid-line. Synchronous: a batch is a few hundred bytes, and three
 * thread-pool hops (open, write, close) cost a write request more than the write itself.
 */
export function ndjsonPublisher(options: NdjsonPublisherOptions): EventPublisher {
  const stats = newStats();
  let ready = false;
  return {
    stats,
    async publish(events: readonly RaskEvent[]) {
      if (events.length === 0) return;
      const byDay = new Map<string, string>();
      for (const e of events) {
        const file = path.join(options.dir, `${e.time.slice(0, 10)}.ndjson`);
        byDay.set(file, (byDay.get(file) ?? '') + JSON.stringify(e) + '\n');
      }
      try {
        if (!ready) mkdirSync(options.dir, { recursive: true });
        ready = true;
        for (const [file, lines] of byDay) appendFileSync(file, lines, 'utf8');
        stats.published += events.length;
        if (options.stdout) process.stdout.write([...byDay.values()].join(''));
      } catch (err) {
        ready = false;
        stats.failed += events.length;
        options.onError?.('change events could not be written', { count: events.length, error: (err as Error).message });
      }
    },
  };
}
