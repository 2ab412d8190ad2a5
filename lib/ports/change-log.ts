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
  /**
   * Up to `limit` events of `project` before `before` (absent: before the newest settled point),
   * newest first: a view of what changed recently reads the end of the log, not the whole of it.
   * O(page) work like `page`; the same errors for a malformed or expired cursor.
   */
  pageBack(request: ChangeBackRequest): Promise<ChangeBackPage>;
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

export interface ChangeBackRequest {
  readonly project: string;
  /** A `before` cursor of an earlier backward page; absent: from the newest event held. */
  readonly before?: string;
  readonly limit: number;
}

export interface ChangeBackPage {
  /** Newest first. */
  readonly events: readonly RaskEvent[];
  /**
   * Pass as `before` for the next (older) page; absent once the oldest event held was read. It
   * may be present on a page with fewer than `limit` events (a bounded scan stopped early).
   */
  readonly before?: string;
  /**
   * A forward cursor (`since` of `page`) just past the newest event this page covers: following
   * the log forward from the first backward page misses nothing and repeats nothing.
   */
  readonly next: string;
}

/** The 400 message for a cursor that is not one (the same words on every adapter). */
export function cursorMessage(param: 'since' | 'before', cursor: string): string {
  return param === 'since'
    ? `since ${JSON.stringify(cursor)} is not a change-feed cursor; pass the next_cursor of an earlier page, or leave since out to start at the oldest event held`
    : `before ${JSON.stringify(cursor)} is not a change-feed cursor; pass the prev_cursor of an earlier newest-first page, or leave before out to start at the newest event held`;
}

/** The most events one page answers. */
export const MAX_CHANGE_PAGE = 1000;
