/**
 * The change-log port (lib/ports/change-log.ts) on both adapters: the local NDJSON files and the
 * time-ordered objects of the registry bucket (here on the memory store and on the disk store).
 * One suite: append order, paging with a resumable cursor, projects kept apart, a malformed
 * cursor 400, an expired one 410 naming the oldest cursor held; then what each adapter promises
 * beyond it (O(page) requests, the settle window, a torn line).
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ndjsonChangeLog } from '../../lib/adapters/local/ndjson-change-log.js';
import { objectChangeLog } from '../../lib/adapters/aws/object-change-log.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { CursorExpiredError, InvalidInputError } from '../../lib/errors.js';
import { cloudEvent, type RaskEvent } from '../../lib/events/cloudevent.js';
import type { ChangeLog } from '../../lib/ports/change-log.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});
const tmp = () => {
  const r = mkdtempSync(path.join(tmpdir(), 'rask-changelog-'));
  roots.push(r);
  return r;
};

function event(project: string, n: number): RaskEvent {
  return cloudEvent('dev.rask.table.created', { project, kind: 'table', id: ['ns', `t${n}`], principal: 'p', operation: 'CreateTable', request_id: `r${n}` }, new Date(), `id-${project}-${n}`);
}

/** A clock the test moves by hand. */
function clock(start = Date.parse('2026-06-01T12:00:00Z')) {
  let t = start;
  return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
}

interface Under {
  log: ChangeLog;
  clock: ReturnType<typeof clock>;
  /** Lets appended entries become readable (the object log's settle window). */
  settle: () => void;
}

const adapters: Record<string, () => Under> = {
  'NDJSON files': () => {
    const c = clock();
    return { log: ndjsonChangeLog({ dir: path.join(tmp(), 'events'), retentionDays: 30, now: c.now }), clock: c, settle: () => {} };
  },
  'objects (memory store)': () => {
    const c = clock();
    return { log: objectChangeLog({ store: new MemoryObjectStore(), retentionDays: 30, settleMs: 1000, now: c.now }), clock: c, settle: () => c.advance(1001) };
  },
  'objects (disk store)': () => {
    const c = clock();
    return { log: objectChangeLog({ store: new FsObjectStore(tmp()), retentionDays: 30, settleMs: 1000, now: c.now }), clock: c, settle: () => c.advance(1001) };
  },
};

/** Every event after `since`, page by page; the pages' cursors and sizes too. */
async function drain(log: ChangeLog, project: string, limit: number, since?: string) {
  const got: RaskEvent[] = [];
  let cursor = since;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await log.page({ project, limit, ...(cursor === undefined ? {} : { since: cursor }) });
    expect(page.events.length).toBeLessThanOrEqual(limit);
    got.push(...page.events);
    if (page.events.length === 0 && page.next === cursor) return { got, cursor };
    cursor = page.next;
  }
  throw new Error('the feed never caught up');
}

for (const [name, make] of Object.entries(adapters)) {
  describe(`change log contract: ${name}`, () => {
    it('pages every event once, in append order, and resumes from a cursor after more were appended', async () => {
      const { log, clock: c, settle } = make();
      for (let i = 0; i < 25; i++) {
        await log.append([event('a', i)]);
        c.advance(3);
      }
      settle();
      const first = await drain(log, 'a', 7);
      expect(first.got.map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, i) => `id-a-${i}`));
      await log.append([event('a', 25), event('a', 26)]);
      settle();
      const rest = await drain(log, 'a', 7, first.cursor);
      expect(rest.got.map((e) => e.id)).toEqual(['id-a-25', 'id-a-26']);
    });

    it("keeps projects apart: a project's feed holds only its own events", async () => {
      const { log, settle } = make();
      await log.append([event('a', 1), event('b', 1), event('a', 2)]);
      settle();
      expect((await drain(log, 'a', 10)).got.map((e) => e.id).sort()).toEqual(['id-a-1', 'id-a-2']);
      expect((await drain(log, 'b', 10)).got.map((e) => e.id)).toEqual(['id-b-1']);
      expect((await drain(log, 'c', 10)).got).toEqual([]);
    });

    it('refuses a malformed cursor with code 13', async () => {
      const { log } = make();
      await expect(log.page({ project: 'a', since: '../../etc/passwd', limit: 5 })).rejects.toBeInstanceOf(InvalidInputError);
    });

    it('answers 410 for a cursor older than the retention, naming the oldest cursor still held, from which paging works', async () => {
      const { log, clock: c, settle } = make();
      await log.append([event('a', 1)]);
      settle();
      const old = await log.page({ project: 'a', limit: 5 });
      expect(old.events).toHaveLength(1);
      c.advance(20 * 86_400_000);
      await log.append([event('a', 2)]);
      settle();
      c.advance(15 * 86_400_000);
      const err = await log.page({ project: 'a', since: old.next, limit: 5 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CursorExpiredError);
      expect((err as CursorExpiredError).status).toBe(410);
      const oldest = (err as CursorExpiredError).oldestCursor;
      expect(oldest).toBeDefined();
      expect((err as Error).message).toContain(oldest!);
      // From the oldest cursor held: the event still kept (the one of day 20).
      const since = await log.page({ project: 'a', since: oldest!, limit: 5 });
      const from = await log.page({ project: 'a', limit: 5 });
      expect([...since.events, ...from.events].map((e) => e.id)).toContain('id-a-2');
      expect(from.events.map((e) => e.id)).not.toContain('id-a-1');
    });
  });
}

describe('object change log, beyond the contract', () => {
  /** Counts the store's requests by kind. */
  function counted(store: ObjectStore) {
    const calls = { list: 0, get: 0, put: 0 };
    const wrapped: ObjectStore = Object.create(store);
    wrapped.list = (o) => (calls.list++, store.list(o));
    wrapped.get = (k) => (calls.get++, store.get(k));
    wrapped.putIfAbsent = (k, b) => (calls.put++, store.putIfAbsent(k, b));
    return { store: wrapped, calls };
  }

  it('costs one LIST and one GET per event per page, however much the log holds', async () => {
    const c = clock();
    const { store, calls } = counted(new MemoryObjectStore());
    const log = objectChangeLog({ store, settleMs: 1000, now: c.now });
    for (let i = 0; i < 300; i++) {
      await log.append([event('a', i)]);
      c.advance(1);
    }
    expect(calls.put).toBe(300);
    c.advance(2000);
    const first = await log.page({ project: 'a', limit: 20 });
    const before = { ...calls };
    const page = await log.page({ project: 'a', since: first.next, limit: 20 });
    expect(page.events.map((e) => e.id)).toEqual(Array.from({ length: 20 }, (_, i) => `id-a-${20 + i}`));
    expect({ list: calls.list - before.list, get: calls.get - before.get }).toEqual({ list: 1, get: 20 });
  });

  it('does not hand out entries younger than the settle window, so one that lands late is not stepped over', async () => {
    const c = clock();
    const log = objectChangeLog({ store: new MemoryObjectStore(), settleMs: 1000, now: c.now });
    await log.append([event('a', 1)]);
    const young = await log.page({ project: 'a', limit: 10 });
    expect(young.events).toEqual([]);
    c.advance(1001);
    const page = await log.page({ project: 'a', since: young.next, limit: 10 });
    expect(page.events.map((e) => e.id)).toEqual(['id-a-1']);
  });

  it('appends again under a fresh key when an append took longer than half the window (same id: at least once)', async () => {
    const c = clock();
    const inner = new MemoryObjectStore();
    const slow: ObjectStore = Object.create(inner);
    slow.list = (o) => inner.list(o);
    slow.get = (k) => inner.get(k);
    let slowOnce = true;
    slow.putIfAbsent = async (k, b) => {
      const r = await inner.putIfAbsent(k, b);
      if (slowOnce) c.advance(600);
      slowOnce = false;
      return r;
    };
    const log = objectChangeLog({ store: slow, settleMs: 1000, now: c.now });
    await log.append([event('a', 1)]);
    c.advance(2000);
    expect((await log.page({ project: 'a', limit: 10 })).events.map((e) => e.id)).toEqual(['id-a-1', 'id-a-1']);
  });
});

describe('NDJSON change log, beyond the contract', () => {
  it('skips a torn last line of a killed writer and keeps the whole event the next append wrote after it', async () => {
    const dir = path.join(tmp(), 'events');
    const c = clock();
    const log = ndjsonChangeLog({ dir, now: c.now });
    await log.append([event('a', 1)]);
    const day = c.now().toISOString().slice(0, 10);
    appendFileSync(path.join(dir, `${day}.ndjson`), JSON.stringify(event('a', 2)).slice(0, 40));
    const mid = await log.page({ project: 'a', limit: 10 });
    expect(mid.events.map((e) => e.id)).toEqual(['id-a-1']);
    await log.append([event('a', 3)]);
    const rest = await log.page({ project: 'a', since: mid.next, limit: 10 });
    expect(rest.events.map((e) => e.id)).toEqual(['id-a-3']);
  });

  it('moves on to the next day only once that day has settled, and loses nothing across midnight', async () => {
    const dir = path.join(tmp(), 'events');
    const c = clock(Date.parse('2026-06-01T23:59:59.000Z'));
    const log = ndjsonChangeLog({ dir, now: c.now });
    await log.append([event('a', 1)]);
    c.advance(2000);
    await log.append([event('a', 2)]);
    const first = await log.page({ project: 'a', limit: 10 });
    expect(first.events.map((e) => e.id)).toEqual(['id-a-1']);
    c.advance(10_000);
    const rest = await log.page({ project: 'a', since: first.next, limit: 10 });
    expect(rest.events.map((e) => e.id)).toEqual(['id-a-2']);
  });
});
