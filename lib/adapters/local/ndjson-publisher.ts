import { logPublisher, type EventPublisher } from '../../ports/event-publisher.js';
import { ndjsonChangeLog, type NdjsonChangeLogOptions } from './ndjson-change-log.js';

export interface NdjsonPublisherOptions extends NdjsonChangeLogOptions {
  readonly onError?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Local change events: appended to the local change log, `events/YYYY-MM-DD.ndjson` in the data
 * directory (lib/adapters/local/ndjson-change-log.ts), which is also what `GET /v1/changes`
 * pages. Synchronous appends: a batch is a few hundred bytes, and three thread-pool hops (open,
 * write, close) cost a write request more than the write itself.
 */
export function ndjsonPublisher(options: NdjsonPublisherOptions): EventPublisher {
  return logPublisher(ndjsonChangeLog(options), options.onError);
}
