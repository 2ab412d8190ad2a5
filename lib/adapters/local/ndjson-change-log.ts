import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CursorExpiredError, InvalidInputError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import type { ChangeLog, ChangePage, ChangePageRequest } from '../../ports/change-log.js';
import { onDisk } from './fs-errors.js';
import { DEFAULT_CHANGES_RETENTION_DAYS } from '../../config.js';

export interface NdjsonChangeLogOptions {
  /** `events/` inside the data directory. */
  readonly dir: string;
  /** Days a file is kept (RASK_CHANGES_RETENTION_DAYS; default 30). */
  readonly retentionDays?: number;
  /** Also print each event as a line on stdout (RASK_EVENTS_STDOUT). */
  readonly stdout?: boolean;
  readonly now?: () => Date;
}

const DAY_MS = 86_400_000;
/** A reader moves on to the next day's file only this long after that day began (see `page`). */
const DAY_SETTLE_MS = 5_000;
/** The most bytes one page reads, so a page's work stays bounded when few lines are the project's. */
const PAGE_SCAN_BYTES = 4 * 1024 * 1024;
const FILE = /^(\d{4}-\d{2}-\d{2})\.ndjson$/;
const CURSOR = /^(\d{4}-\d{2}-\d{2}):(\d{1,15})$/;

/**
 * The local change log (docs/events.md, "The feed"): one JSON line per event appended to
 * `events/YYYY-MM-DD.ndjson`, the UTC day **of the append** (not of the event: an event derived
 * again at start-up, or appended late, must land after every cursor already handed out). Each
 * batch is one `appendFileSync` of whole lines, which the kernel applies as one O_APPEND write, so
 * lines of concurrent writers never interleave, and a line's byte offset never changes once
 * written: a cursor is `<day>:<offset>`, and a page is one read from that offset, O(page)
 * whatever the log holds. A line is taken only once its newline is there (a torn last line of a
 * killed process is skipped, see `parseLine`). Files older than the retention are deleted when the
 * day turns and at start-up (`cut`); a cursor into them answers 410.
 */
export function ndjsonChangeLog(options: NdjsonChangeLogOptions): ChangeLog & { cut(): void } {
  const now = options.now ?? (() => new Date());
  const retentionDays = options.retentionDays ?? DEFAULT_CHANGES_RETENTION_DAYS;
  let ready = false;
  let lastDay = '';

  const days = (): string[] => {
    let names: string[];
    try {
      names = readdirSync(options.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return names.flatMap((n) => FILE.exec(n)?.[1] ?? []).sort();
  };
  const file = (day: string) => path.join(options.dir, `${day}.ndjson`);
  const oldestKeptDay = () => isoDay(new Date(now().getTime() - retentionDays * DAY_MS));

  const cut = () => {
    const keep = oldestKeptDay();
    for (const day of days()) if (day < keep) rmSync(file(day), { force: true });
  };

  return {
    cut,
    async append(events: readonly RaskEvent[]) {
      if (events.length === 0) return;
      const day = isoDay(now());
      const lines = events.map((e) => `${JSON.stringify(e)}\n`).join('');
      await onDisk(async () => {
        if (!ready) mkdirSync(options.dir, { recursive: true });
        ready = true;
        appendFileSync(file(day), lines, 'utf8');
      }).catch((err) => {
        ready = false;
        throw err;
      });
      if (options.stdout) process.stdout.write(lines);
      if (day !== lastDay) {
        if (lastDay !== '') cut();
        lastDay = day;
      }
    },

    async page(request: ChangePageRequest): Promise<ChangePage> {
      const held = days();
      const keep = oldestKeptDay();
      let day: string;
      let offset: number;
      if (request.since === undefined) {
        day = held.find((d) => d >= keep) ?? isoDay(now());
        offset = 0;
      } else {
        const m = CURSOR.exec(request.since);
        if (!m) throw new InvalidInputError(`since ${JSON.stringify(request.since)} is not a change-feed cursor; pass the next_cursor of an earlier page, or leave since out to start at the oldest event held`);
        day = m[1];
        offset = Number(m[2]);
        if (day < keep) {
          const oldest = held.find((d) => d >= keep);
          throw new CursorExpiredError(request.since, oldest === undefined ? undefined : `${oldest}:0`, retentionDays);
        }
      }
      const events: RaskEvent[] = [];
      let scanned = 0;
      for (;;) {
        const { lines, end } = readLines(file(day), offset, PAGE_SCAN_BYTES - scanned);
        for (const { text, next } of lines) {
          offset = next;
          const event = parseLine(text);
          if (event?.data.project === request.project) events.push(event);
          if (events.length >= request.limit) return { events, next: `${day}:${offset}`, more: true };
        }
        scanned += end.read;
        if (scanned >= PAGE_SCAN_BYTES) return { events, next: `${day}:${offset}`, more: true };
        // At the end of this day's file: on to the next day's once that day has settled, so a
        // writer that took the old day just before midnight has appended before we leave it.
        const later = held.find((d) => d > day);
        if (!later || now().getTime() - Date.parse(`${later}T00:00:00Z`) < DAY_SETTLE_MS) {
          return { events, next: `${day}:${offset}`, more: false };
        }
        day = later;
        offset = 0;
      }
    },
  };
}

function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Complete lines from `offset`, at most about `budget` bytes; a missing file has none. */
function readLines(file: string, offset: number, budget: number): { lines: { text: string; next: number }[]; end: { read: number } } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], end: { read: 0 } };
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const want = Math.max(0, Math.min(size - offset, Math.max(budget, 64 * 1024)));
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    const lines: { text: string; next: number }[] = [];
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0 || nl >= got) break;
      lines.push({ text: buf.toString('utf8', start, nl), next: offset + nl + 1 });
      start = nl + 1;
    }
    return { lines, end: { read: start } };
  } finally {
    closeSync(fd);
  }
}

/**
 * One event from a line, or undefined. A process killed mid-append can leave a torn line with no
 * newline; the next append then continues it, so the line holds the fragment and then a whole
 * event: the whole event is the last `{"specversion"` of the line.
 */
function parseLine(text: string): RaskEvent | undefined {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as RaskEvent;
  } catch {
    const at = text.lastIndexOf('{"specversion"');
    if (at <= 0) return undefined;
    try {
      return JSON.parse(text.slice(at)) as RaskEvent;
    } catch {
      return undefined;
    }
  }
}
