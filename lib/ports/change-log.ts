import type { RaskEvent } from '../events/cloudevent.js';

/**
 * The change log (docs/events.md, "The feed"): every change event, in the order the log took
 * them, per project, for `GET /v1/changes`. Locally the NDJSON files of the data directory
 * (lib/adapters/local/ndjson-change-log.ts), on AWS time-ordered objects in the registry bucket
 * (lib/adapters/object-change-log.ts) that the relay appends to. A page costs O(page) work
 * whatever the log holds: one LIST after the cursor and a GET per event on S3, one read from a
 * byte offset on disk.
 *
 * Delivery is at least once: an event may be in the log twice (a relay retry, a start-up
 * re-derivation racing a live append); its `id` is the same each time, so consumers deduplicate
 * on it. Events of one object come in the order of its changes; across objects no order is
 * promised.
 */
export interface ChangeLog {
  /** Appends events durably; resolves once they are held. */
  append(events: readonly RaskEvent[]): Promise<void>;
  /**
   * Up to `limit` events of `project` after `since` (absent: from the oldest held) and the cursor
   * to resume from (past what was read, even if none of it was returned). A cursor older than the
   * retention throws CursorExpiredError naming the oldest cursor held; a malformed one
   * InvalidInputError.
   */
  page(request: ChangePageRequest): Promise<ChangePage>;
}

export interface ChangePageRequest {
  readonly project: string;
  readonly since?: string;
  readonly limit: number;
}

export interface ChangePage {
  readonly events: readonly RaskEvent[];
  /** Where the next page starts; equal to `since` when nothing new was found. */
  readonly next: string;
  /** More may already be waiting after `next` (a bounded scan stopped early). */
  readonly more: boolean;
}

/** The most events one page answers. */
export const MAX_CHANGE_PAGE = 1000;
