import { call, type Answer } from './api.js';

/**
 * Reading the change feed from its end (GET /v1/changes?order=newest_first, docs/events.md, "The
 * feed"): a view of what changed recently costs the pages it shows, not the whole log.
 */

/** One newest-first page: its events, the cursor of the older page (absent at the oldest held) and the forward cursor to follow the feed from. */
export interface FeedPage {
  readonly events: any[];
  readonly older?: string;
  readonly follow: string;
}

export async function newestFirst(project: string, limit: number, before?: string): Promise<Answer<FeedPage>> {
  const a = await call(project, 'GET', 'changes', { query: { order: 'newest_first', limit: String(limit), before } });
  if (!a.ok) return a as Answer<any>;
  return { ...a, body: { events: a.body.events, older: a.body.prev_cursor, follow: a.body.next_cursor } };
}

/** Who made a version, as the change feed recorded it. */
export interface VersionStamp {
  readonly principal: string;
  readonly operation: string;
  readonly time: string;
  readonly requestId?: string;
  /** A commit straight to storage (the relay found the manifest; no door made it). */
  readonly storage: boolean;
}

/** The most feed pages (of STAMP_PAGE) read for one table's stamps. */
const STAMP_PAGES = 10;
const STAMP_PAGE = 500;
/** An event is logged after its commit, and its time is its request's start: this much earlier than the manifest. */
const STAMP_SLACK_MS = 10 * 60_000;

/**
 * The change stamp of each of a table's versions, from the table's events in the change feed
 * (docs/console.md, "Versions and their change stamps"): an event with `data.version` names the
 * version its door committed; a maintenance event names its commits in `data.details.commits`
 * (versions from+1 … to); the relay's event of a commit straight to storage has
 * `details.via = "storage"`. The feed is read newest first until every version asked about has
 * its stamp or the events are older than the oldest of them (STAMP_SLACK_MS before its manifest's
 * time), at most STAMP_PAGES pages. A version whose stamp was not found has none here: its
 * commit is older than what was read or than the feed's retention.
 */
export async function versionStamps(project: string, id: readonly string[], versions: readonly { version: number; timestamp_millis?: number }[]): Promise<Answer<Map<number, VersionStamp>>> {
  const wanted = new Set(versions.map((v) => v.version));
  const oldest = Math.min(...versions.map((v) => v.timestamp_millis ?? 0));
  const stamps = new Map<number, VersionStamp>();
  const same = JSON.stringify(id);
  let before: string | undefined;
  for (let n = 0; n < STAMP_PAGES && wanted.size > stamps.size; n++) {
    const a = await newestFirst(project, STAMP_PAGE, before);
    if (!a.ok) return a as Answer<any>;
    for (const e of a.body.events) {
      const stamp: VersionStamp = {
        principal: e.data.principal,
        operation: e.data.operation,
        time: e.time,
        ...(e.data.request_id ? { requestId: e.data.request_id } : {}),
        storage: e.data.details?.via === 'storage',
      };
      // Newest first: the first event naming a version is its latest commit (a version number
      // reused after a restore to an older state belongs to the newest commit).
      const claim = (v: number) => wanted.has(v) && !stamps.has(v) && stamps.set(v, stamp);
      if (e.data.kind === 'table' && JSON.stringify(e.data.id) === same && typeof e.data.version === 'number') claim(e.data.version);
      for (const c of Array.isArray(e.data.details?.commits) ? e.data.details.commits : []) {
        if (JSON.stringify(c.id) === same) for (let v = c.from + 1; v <= c.to; v++) claim(v);
      }
    }
    const last = a.body.events.at(-1);
    if (!a.body.older || (last && Date.parse(last.time) < oldest - STAMP_SLACK_MS)) break;
    before = a.body.older;
  }
  return { status: 200, ok: true, body: stamps };
}
