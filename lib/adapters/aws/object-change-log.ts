import { randomBytes } from 'node:crypto';
import { forEachLimited } from '../../concurrency.js';
import { CursorExpiredError, InvalidInputError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import type { ChangeLog, ChangePage, ChangePageRequest } from '../../ports/change-log.js';
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
 */
export function objectChangeLog(options: ObjectChangeLogOptions): ChangeLog {
  const now = options.now ?? (() => new Date());
  const retentionDays = options.retentionDays ?? DEFAULT_CHANGES_RETENTION_DAYS;
  const settleMs = options.settleMs ?? 15_000;
  let sequence = 0;
  const oldestKept = () => keyTime(new Date(now().getTime() - retentionDays * DAY_MS));

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
        if (!CURSOR.test(request.since)) {
          throw new InvalidInputError(`since ${JSON.stringify(request.since)} is not a change-feed cursor; pass the next_cursor of an earlier page, or leave since out to start at the oldest event held`);
        }
        if (request.since < keep) {
          const oldest = await options.store.list({ prefix, startAfter: `${prefix}${keep}`, limit: 1 });
          const key = oldest.objects[0]?.key;
          throw new CursorExpiredError(request.since, key === undefined ? undefined : key.slice(prefix.length), retentionDays);
        }
        startAfter = `${prefix}${request.since}`;
      } else {
        // From the oldest kept: entries the lifecycle rule has not removed yet are skipped.
        startAfter = `${prefix}${keep}`;
      }
      const settled = keyTime(new Date(now().getTime() - settleMs));
      const listed = await options.store.list({ prefix, startAfter, limit: request.limit });
      const keys = listed.objects.map((o) => o.key).filter((k) => k.slice(prefix.length) < settled);
      const bodies: (RaskEvent | undefined)[] = new Array(keys.length);
      await forEachLimited(keys.map((k, i) => [k, i] as const), PAGE_READS, async ([key, i]) => {
        const obj = await options.store.get(key);
        bodies[i] = obj ? (JSON.parse(obj.body.toString('utf8')) as RaskEvent) : undefined;
      });
      // Nothing settled after the start: nothing can still land before the settle point either,
      // so the cursor moves up to it (and an idle consumer's cursor never ages into expiry).
      const last = keys.at(-1);
      const from = startAfter.slice(prefix.length);
      const idle = `${settled}-00000000`;
      const next = last !== undefined ? last.slice(prefix.length) : idle > from ? idle : from;
      return {
        events: bodies.filter((e): e is RaskEvent => e !== undefined),
        next,
        more: keys.length === request.limit && listed.truncated,
      };
    },
  };
}

/** `20261202T171048123Z`: sorts as time does, and every key of one log has the same width. */
function keyTime(d: Date): string {
  return d.toISOString().replace(/[-:.]/g, '');
}
