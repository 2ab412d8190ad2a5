import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CursorExpiredError, InvalidInputError } from '../../errors.js';
import type { RaskEvent } from '../../events/cloudevent.js';
import { cursorMessage, type ChangeBackPage, type ChangeBackRequest, type ChangeLog, type ChangePage, type ChangePageRequest } from '../../ports/change-log.js';
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
 * day turns and at start-up (`cut`); a cursor into them answers 410. A backward page (`pageBack`)
 * reads the same files from a byte offset towards their beginning, so the newest events cost one
 * read from the end however long the log is; its cursor is the same `<day>:<offset>`, the offset
 * of the oldest line it read.
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

  /** The cursor from which a day's file is read, refusing a malformed or an expired one. */
  const parseCursor = (param: 'since' | 'before', cursor: string, held: readonly string[], keep: string): { day: string; offset: number } => {
    const m = CURSOR.exec(cursor);
    if (!m) throw new InvalidInputError(cursorMessage(param, cursor));
    if (m[1] < keep) {
      const oldest = held.find((d) => d >= keep);
      throw new CursorExpiredError(cursor, oldest === undefined ? undefined : `${oldest}:0`, retentionDays);
    }
    return { day: m[1], offset: Number(m[2]) };
  };

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
        ({ day, offset } = parseCursor('since', request.since, held, keep));
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

    async pageBack(request: ChangeBackRequest): Promise<ChangeBackPage> {
      const keep = oldestKeptDay();
      const held = days().filter((d) => d >= keep);
      let day: string;
      let end: number;
      if (request.before === undefined) {
        // The newest day a forward reader could be in: `page` enters a day's file only once the
        // day has settled, so the head (and the forward cursor answered with it) is there too.
        const entered = held.filter((d, i) => i === 0 || now().getTime() - Date.parse(`${d}T00:00:00Z`) >= DAY_SETTLE_MS);
        day = entered.at(-1) ?? isoDay(now());
        end = completeEnd(file(day));
      } else {
        ({ day, offset: end } = parseCursor('before', request.before, held, keep));
      }
      const next = `${day}:${end}`;
      const events: RaskEvent[] = [];
      let scanned = 0;
      for (;;) {
        const { lines, start } = readLinesBack(file(day), end, PAGE_SCAN_BYTES - scanned);
        const from = end;
        let full = false;
        for (const { text, at } of lines) {
          end = at;
          const event = parseLine(text);
          if (event?.data.project === request.project) events.push(event);
          if (events.length >= request.limit) {
            full = true;
            break;
          }
        }
        if (!full) end = start;
        scanned += from - end;
        if (end === 0) {
          // At the beginning of this day's file: on to the end of the previous day's, if one is held.
          const earlier = held.filter((d) => d < day).at(-1);
          if (!earlier) return { events, next };
          day = earlier;
          end = completeEnd(file(day));
        }
        if (full || scanned >= PAGE_SCAN_BYTES) return { events, next, before: `${day}:${end}` };
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

/** The offset just past the file's last complete line (a torn last line is not yet a line); 0 for a missing file. */
function completeEnd(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  try {
    let end = fstatSync(fd).size;
    const buf = Buffer.alloc(64 * 1024);
    while (end > 0) {
      const from = Math.max(0, end - buf.length);
      const got = readSync(fd, buf, 0, end - from, from);
      const nl = buf.subarray(0, got).lastIndexOf(0x0a);
      if (nl >= 0) return from + nl + 1;
      end = from;
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * Complete lines that end at or before `end`, newest first, each with the offset it starts at;
 * about `budget` bytes (more when one line is longer). `start` is where the oldest of them begins
 * (0 once the file's beginning is reached), the `end` of the next call. The first line of the
 * file is complete at offset 0; any other is taken only with the newline before it, so a line is
 * never cut.
 */
function readLinesBack(file: string, end: number, budget: number): { lines: { text: string; at: number }[]; start: number } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], start: 0 };
    throw err;
  }
  try {
    const stop = Math.min(end, fstatSync(fd).size);
    for (let want = Math.min(stop, Math.max(budget, 64 * 1024)); ; want = Math.min(stop, want * 2)) {
      const from = stop - want;
      const buf = Buffer.alloc(want);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, buf, got, want - got, from + got);
        if (n === 0) break;
        got += n;
      }
      const lines: { text: string; at: number }[] = [];
      // The text of the line being cut out ends here (its newline excluded).
      let e = got > 0 && buf[got - 1] === 0x0a ? got - 1 : got;
      while (e > 0) {
        const nl = e > 0 ? buf.lastIndexOf(0x0a, e - 1) : -1;
        if (nl < 0) {
          if (from === 0) lines.push({ text: buf.toString('utf8', 0, e), at: 0 });
          break;
        }
        lines.push({ text: buf.toString('utf8', nl + 1, e), at: from + nl + 1 });
        e = nl;
      }
      if (from === 0) return { lines, start: 0 };
      if (lines.length > 0) return { lines, start: lines.at(-1)!.at };
    }
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
