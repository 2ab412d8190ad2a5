/**
 * Durable delivery on AWS (docs/events.md, "Delivery"): the relay's counterpart of the local
 * server's start-up recovery (lib/app/change-recovery.ts). A metadata function killed between a
 * door's decisive registry write and its change-log append (a timeout, a crash) leaves the change
 * in the registry — its record carries the change stamp (lib/events/change-stamp.ts) — and no
 * event in the log. Lambda has no "next start" to look again, so each relay cycle does, per
 * project, for the records written in a window that moves with the cycles:
 *
 * - the window is `[mark, now - RECOVERY_GRACE_MS)`, `mark` the previous cycle's end (kept in the
 *   relay's state). The grace is longer than any door may still run after its decisive write (the
 *   API functions stop at 28 s) plus the log's settle window (15 s): a record older than that
 *   whose event is not in the log will not get one from its door any more;
 * - one LIST of the project's catalog tree (`p/<project>/t/`, LastModified per key), one GET per
 *   record written in the window, and the event its stamp proves (lib/catalog/change-derivation.ts:
 *   only records that prove their change) unless the log holds the change's id;
 * - "the log holds it" is known without reading the log again: the relay reads every event of
 *   the log anyway (its step 1), and keeps the ids of the derivable ones it read (`seen`, with
 *   their time) for a while after the mark passed them. The recovered event has the change's own
 *   id, so even a door's append that lands late (after its copy was recovered) is one change
 *   after dedup by `id`.
 */
import { derivedEvent, isDerivableOperation, readStampedRecord } from '../catalog/change-derivation.js';
import type { RaskEvent } from '../events/cloudevent.js';
import type { ObjectStore } from '../ports/object-store.js';
import { keys } from '../registry/keys.js';
import { forEachLimited } from '../concurrency.js';

/** How old a record must be before a missing event of its change is derived (see above). */
export const RECOVERY_GRACE_MS = 120_000;
/** S3 lists LastModified to the second: the window starts this much before the mark. */
const LISTED_PRECISION_MS = 2_000;
/** The ids of derivable events read are kept this long after the mark passed their time. */
export const SEEN_KEEP_MS = 15 * 60_000;

/** What the relay keeps per project for the recovery (inside RelayState.projects). */
export interface RecoveryMark {
  /** Records written before this instant (ISO) have been judged. */
  recoveredTo?: string;
}

/** Whether an event read from the log is one a recovery could derive again (its id goes into `seen`). */
export const derivable = (e: RaskEvent): boolean => isDerivableOperation(e.data.operation);

/**
 * The events of `project`'s changes proven by records written in `[from, to)` whose ids `seen`
 * does not hold, oldest first. Records are read 16 at a time.
 */
export async function recoverWindow(store: ObjectStore, project: string, from: Date, to: Date, seen: (id: string) => boolean): Promise<RaskEvent[]> {
  const prefix = keys.subtree(project, []);
  const since = from.getTime() - LISTED_PRECISION_MS;
  const written: string[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ prefix, startAfter, limit: 1000 });
    for (const o of page.objects) {
      const t = o.lastModified.getTime();
      if (t >= since && t < to.getTime()) written.push(o.key);
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) break;
    startAfter = last.key;
  }
  const found: RaskEvent[] = [];
  await forEachLimited(written, 16, async (key) => {
    const body = await readStampedRecord(store, key);
    if (!body) return;
    const event = derivedEvent(key, body);
    if (event && event.data.project === project && !seen(event.id)) found.push(event);
  });
  return found.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}
