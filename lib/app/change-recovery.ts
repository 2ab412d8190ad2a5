import { readFileSync, writeFileSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { CHANGE_FIELD } from '../events/change-stamp.js';
import type { RaskEvent } from '../events/cloudevent.js';
import { derivedEvent, readStampedRecord } from '../catalog/change-derivation.js';
import type { ChangeLog } from '../ports/change-log.js';
import type { ObjectStore } from '../ports/object-store.js';
import { forEachLimited } from '../concurrency.js';

export interface ChangeRecovery {
  /** Records stamped since the high-water mark that were read. */
  readonly stamped: number;
  /** Events derived from them that the log did not hold, now appended. */
  readonly appended: number;
  /** The mark the walk started from. */
  readonly since: string;
}


/**
 * Local parity of durable delivery (docs/events.md, "Delivery"): at start-up, before serving,
 * every change whose stamp (lib/events/change-stamp.ts) a registry record carries and whose time
 * is at or after the high-water mark (`markFile`, `<data directory>/.changes-recovered`) — the start of the previous recovery, so every request of
 * the process that ran since — gets its event appended to the log unless the log already holds
 * its id. That covers the process killed between a door's decisive write and its append: the
 * change is on disk, its event was not. Then the mark moves to this start.
 *
 * Cost: one walk of the registry's catalog tree (every record read, as the start-up cleanup's
 * walk does) and one read of the log's retained events, per start. A server started beside
 * another one on the same directory may append an event that one is about to append itself: a
 * duplicate with the same id, which consumers drop (delivery is at least once).
 */
export async function recoverChanges(registryStore: ObjectStore, log: ChangeLog, markFile: string, now = new Date()): Promise<ChangeRecovery> {
  let since = '';
  try {
    since = readFileSync(markFile, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const candidates: RaskEvent[] = [];
  let stamped = 0;
  let startAfter: string | undefined;
  for (;;) {
    const page = await registryStore.list({ prefix: 'p/', startAfter, limit: 1000 });
    const tree = page.objects.filter((o) => /^p\/[^/]+\/t\//.test(o.key));
    await forEachLimited(tree, 16, async ({ key }) => {
      const body = await readStampedRecord(registryStore, key);
      if (!body) return;
      const at = (body[CHANGE_FIELD] as { at?: unknown } | undefined)?.at;
      if (typeof at !== 'string' || at < since) return;
      stamped++;
      const event = derivedEvent(key, body);
      if (event) candidates.push(event);
    });
    const last = page.objects.at(-1);
    if (!page.truncated || !last) break;
    startAfter = last.key;
  }
  let appended = 0;
  if (candidates.length > 0) {
    const held = new Set<string>();
    for (const project of new Set(candidates.map((e) => e.data.project))) {
      let cursor: string | undefined;
      for (;;) {
        const page = await log.page({ project, limit: 1000, ...(cursor === undefined ? {} : { since: cursor }) });
        for (const e of page.events) held.add(e.id);
        if (page.next === cursor || (page.events.length === 0 && !page.more)) break;
        cursor = page.next;
      }
    }
    const missing = candidates.filter((e) => !held.has(e.id)).sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    await log.append(missing);
    appended = missing.length;
  }
  mkdirSync(path.dirname(markFile), { recursive: true });
  writeFileSync(`${markFile}.tmp`, now.toISOString());
  renameSync(`${markFile}.tmp`, markFile);
  return { stamped, appended, since };
}
