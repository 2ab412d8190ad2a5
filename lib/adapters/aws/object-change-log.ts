import { randomBytes } from 'node:crypto';
import { forEachLimited } from '../../concurrency.js';
import { CursorExpiredError, InvalidInputError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import { cursorMessage, type ChangeBackPage, type ChangeBackRequest, type ChangeLog, type ChangePage, type ChangePageRequest } from '../../ports/change-log.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { encodeSegment } from '../../registry/keys.js';
import { DEFAULT_CHANGES_RETENTION_DAYS } from '../../config.js';

export interface ObjectChangeLogOptions {
  /** The registry's store: the log lives under `changes/` beside the records. */
  readonly store: ObjectStore;
  /** Days an event is kept (RASK_CHANGES_RETENTION_DAYS; the bucket's lifecycle rule expires them after that). */
  readonly retentionDays?: number;
  /**
   * How long after its time an entry may still appear (see below); a page never reads entries
   * younger than this. Default 15 s: three times the S3 request timeout (RASK_S3_REQUEST_TIMEOUT_MS).
   */
  readonly settleMs?: number;
  readonly now?: () => Date;
}

const DAY_MS = 86_400_000;
/** GETs of one page in flight at once. */
const PAGE_READS = 16;
/** Tries of an append that took longer than half the settle time (each one is the same event). */
const APPEND_TRIES = 3;
const CURSOR = /^\d{8}T\d{9}Z-[0-9a-f]{8,}$/;
/** A backward page's first time window (see `pageBack`): it grows fourfold while windows come back short. */
const FIRST_SPAN_MS = 60_000;
/** Keys one LIST answers (S3's most). */
const LIST_PAGE = 1000;
/** The most LISTs one backward page makes; past them it answers what it has and a cursor to go on. */
const MAX_BACK_LISTS = 24;

/** The log's key prefix of a project (`changes/` sits outside every record prefix: docs/architecture.md, "Key layout"). */
export const changesPrefix = (project: string) => `changes/${encodeSegment(project)}/`;

/**
 * The change log on an object store (the registry bucket on AWS; docs/events.md, "The feed"):
 * one object per event at `changes/<project>/<time>-<random>`, the time that of the append, so
 * keys sort in append order and a page is one LIST with StartAfter = the cursor plus one GET per
 * event — O(page) requests whatever the log holds. Expiry is the bucket's lifecycle rule on
 * `changes/` (infra/), not a sweep: a cursor older than the retention answers 410 naming the
 * oldest key kept.
 *
 * Two appenders can take their times in one order and land in the other, so a reader that took
 * everything up to "now" could step past an entry that lands a moment later. A page therefore
 * stops at entries younger than `settleMs`; an append that took longer than half of that lands
 * again under a fresh key (the same event id: delivery is at least once), so every event has a
 * copy that landed inside the window.
 *
 * A backward page (newest first) cannot LIST backwards: S3 lists keys in ascending order only. It
 * lists forward from a point a time window before its upper bound instead (StartAfter = that
 * time, which keys begin with): a window that holds fewer keys than wanted is taken whole and
 * the next one, four times wider, lies before it; one holding more than a LIST answers is
 * narrowed eightfold. The newest `limit` events of a busy log cost one or two LISTs, a log idle
 * for a month about ten (60 s × 4^9 > 30 days), and never more than MAX_BACK_LISTS.
 */
export function objectChangeLog(options: ObjectChangeLogOptions): ChangeLog {
  const now = options.now ?? (() => new Date());
  const retentionDays = options.retentionDays ?? DEFAULT_CHANGES_RETENTION_DAYS;
  const settleMs = options.settleMs ?? 15_000;
  let sequence = 0;
  const oldestKept = () => keyTime(new Date(now().getTime() - retentionDays * DAY_MS));

  /** 410 for a cursor older than the retention, naming the oldest key still held. */
  const expired = async (cursor: string, prefix: string, keep: string): Promise<never> => {
    const oldest = await options.store.list({ prefix, startAfter: `${prefix}${keep}`, limit: 1 });
    const key = oldest.objects[0]?.key;
    throw new CursorExpiredError(cursor, key === undefined ? undefined : key.slice(prefix.length), retentionDays);
  };

  /** The events of these keys (a key removed meanwhile by the lifecycle rule reads as nothing). */
  const read = async (keys: readonly string[]): Promise<RaskEvent[]> => {
    const bodies: (RaskEvent | undefined)[] = new Array(keys.length);
    await forEachLimited(keys.map((k, i) => [k, i] as const), PAGE_READS, async ([key, i]) => {
      const obj = await options.store.get(key);
      bodies[i] = obj ? (JSON.parse(obj.body.toString('utf8')) as RaskEvent) : undefined;
    });
    return bodies.filter((e): e is RaskEvent => e !== undefined);
  };

  const appendOne = async (event: RaskEvent) => {
    const prefix = changesPrefix(event.data.project);
    for (let attempt = 1; ; attempt++) {
      const started = now().getTime();
      // The counter keeps a process's appends of one millisecond in the order it made them.
      const seq = (sequence = (sequence + 1) % 0x100000000).toString(16).padStart(8, '0');
      await options.store.putIfAbsent(`${prefix}${keyTime(new Date(started))}-${seq}${randomBytes(4).toString('hex')}`, JSON.stringify(event));
      if (now().getTime() - started <= settleMs / 2 || attempt >= APPEND_TRIES) return;
    }
  };

  return {
    async append(events) {
      // One after another: events of one object keep their order in the log.
      for (const event of events) await appendOne(event);
    },

    async page(request: ChangePageRequest): Promise<ChangePage> {
      const prefix = changesPrefix(request.project);
      const keep = oldestKept();
      let startAfter: string | undefined;
      if (request.since !== undefined) {
        if (!CURSOR.test(request.since)) throw new InvalidInputError(cursorMessage('since', request.since));
        if (request.since < keep) await expired(request.since, prefix, keep);
        startAfter = `${prefix}${request.since}`;
      } else {
        // From the oldest kept: entries the lifecycle rule has not removed yet are skipped.
        startAfter = `${prefix}${keep}`;
      }
      const settled = keyTime(new Date(now().getTime() - settleMs));
      const listed = await options.store.list({ prefix, startAfter, limit: request.limit });
      const keys = listed.objects.map((o) => o.key).filter((k) => k.slice(prefix.length) < settled);
      const events = await read(keys);
      // Nothing settled after the start: nothing can still land before the settle point either,
      // so the cursor moves up to it (and an idle consumer's cursor never ages into expiry).
      const last = keys.at(-1);
      const from = startAfter.slice(prefix.length);
      const idle = `${settled}-00000000`;
      const next = last !== undefined ? last.slice(prefix.length) : idle > from ? idle : from;
      return { events, next, more: keys.length === request.limit && listed.truncated };
    },

    async pageBack(request: ChangeBackRequest): Promise<ChangeBackPage> {
      const prefix = changesPrefix(request.project);
      const keep = oldestKept();
      const keepMs = timeOf(keep);
      // Only settled entries, as forward pages: the forward cursor answered must miss nothing.
      const settled = keyTime(new Date(now().getTime() - settleMs));
      let hi = settled;
      if (request.before !== undefined) {
        if (!CURSOR.test(request.before)) throw new InvalidInputError(cursorMessage('before', request.before));
        if (request.before < keep) await expired(request.before, prefix, keep);
        if (request.before < hi) hi = request.before;
      }
      // Keys below `hi`, newest first, window by window.
      const found: string[] = [];
      let span = FIRST_SPAN_MS;
      let lists = 0;
      let start = false;
      while (found.length < request.limit && lists < MAX_BACK_LISTS) {
        const fromMs = Math.max(keepMs, timeOf(hi) - span);
        const lo = keyTime(new Date(fromMs));
        const below: string[] = [];
        let after = `${prefix}${lo}`;
        for (;;) {
          const listed = await options.store.list({ prefix, startAfter: after, limit: LIST_PAGE });
          lists++;
          const keys = listed.objects.map((o) => o.key.slice(prefix.length)).filter((k) => k < hi);
          below.push(...keys);
          if (!listed.truncated || keys.length < listed.objects.length) break;
          // More keys in the window than one LIST answers: narrow it (the newest are at its top).
          // One millisecond cannot be narrowed: it is listed on to its end.
          if (span > 1) break;
          after = `${prefix}${keys.at(-1)}`;
        }
        if (below.length >= LIST_PAGE && span > 1) {
          span = Math.max(1, Math.floor(span / 8));
          continue;
        }
        found.push(...below.reverse());
        hi = lo;
        if (fromMs <= keepMs) {
          start = true;
          break;
        }
        span *= 4;
      }
      const keys = found.slice(0, request.limit);
      const events = await read(keys.map((k) => `${prefix}${k}`));
      // The oldest key answered, or the window's edge where the LIST budget ran out.
      const before = keys.length < found.length ? keys.at(-1) : start ? undefined : `${hi}-00000000`;
      const next = request.before === undefined || request.before >= settled ? `${settled}-00000000` : (keys[0] ?? `${hi}-00000000`);
      return before === undefined ? { events, next } : { events, next, before };
    },
  };
}

/** The cursor just before every entry appended at `time` or later (a key's time, then the lowest suffix). */
export function cursorAt(time: Date): string {
  return `${keyTime(time)}-00000000`;
}

/** The time a key (or a key's time prefix) begins with, in ms. */
function timeOf(key: string): number {
  const t = key.slice(0, 19);
  return Date.parse(`${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}.${t.slice(15, 18)}Z`);
}

/** `20261202T171048123Z`: sorts as time does, and every key of one log has the same width. */
function keyTime(d: Date): string {
  return d.toISOString().replace(/[-:.]/g, '');
}
