/**
 * The change-log port (lib/ports/change-log.ts) on both adapters: the local NDJSON files and the
 * time-ordered objects of the registry bucket (here on the memory store and on the disk store).
 * (here on the memory store, the disk store and S3ObjectStore over the stateful S3 fake).
 * One suite: append order, paging with a resumable cursor, projects kept apart, a malformed
 * cursor 400, an expired one 410 naming the oldest cursor held, and the same for backward pages
 * (newest first, to the oldest held, with a forward cursor that misses nothing); then what each
 * adapter promises beyond it (O(page) requests both ways, the settle window, a torn line).
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';
import { ndjsonChangeLog } from '../../lib/adapters/local/ndjson-change-log.js';
import { objectChangeLog } from '../../lib/adapters/aws/object-change-log.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { CursorExpiredError, InvalidInputError } from '../../lib/errors.js';
import { cloudEvent, type RaskEvent } from '../../lib/events/cloudevent.js';
import type { ChangeLog } from '../../lib/ports/change-log.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

const roots: string[] = [];
const fakes: S3Fake[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  for (const f of fakes) f.mock.restore();
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
  'objects (S3 fake)': () => {
    const c = clock();
    const fake = createS3Fake();
    fakes.push(fake);
    const store = new S3ObjectStore({ client: fake.client, bucket: 'registry', prefix: 'registry/' });
    return { log: objectChangeLog({ store, retentionDays: 30, settleMs: 1000, now: c.now }), clock: c, settle: () => c.advance(1001) };
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

/** Every event before `before`, newest first, page by page; the pages too. */
async function drainBack(log: ChangeLog, project: string, limit: number, before?: string) {
  const got: RaskEvent[] = [];
  const pages: { size: number; before?: string; next: string }[] = [];
  let cursor = before;
  for (let n = 0; n < 10_000; n++) {
    const page = await log.pageBack({ project, limit, ...(cursor === undefined ? {} : { before: cursor }) });
    expect(page.events.length).toBeLessThanOrEqual(limit);
    got.push(...page.events);
    pages.push({ size: page.events.length, ...(page.before === undefined ? {} : { before: page.before }), next: page.next });
    if (page.before === undefined) return { got, pages };
    cursor = page.before;
  }
  throw new Error('the backward pages never reached the oldest event');
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

    it('pages backwards newest first to the oldest event held, each once, skipping other projects', async () => {
      const { log, clock: c, settle } = make();
      for (let i = 0; i < 25; i++) {
        await log.append([event('a', i), event('b', i)]);
        c.advance(3);
      }
      settle();
      const back = await drainBack(log, 'a', 7);
      expect(back.got.map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, i) => `id-a-${24 - i}`));
      expect(back.pages.map((p) => p.size)).toEqual([7, 7, 7, 4]);
      expect((await drainBack(log, 'c', 7)).got).toEqual([]);
    });

    it('reads back across days, weeks and quiet gaps, and a backward page of an empty log is empty', async () => {
      const { log, clock: c, settle } = make();
      expect(await log.pageBack({ project: 'a', limit: 5 })).toMatchObject({ events: [] });
      expect((await log.pageBack({ project: 'a', limit: 5 })).before).toBeUndefined();
      // Gaps of a second, hours and days: each backward window has to reach past them.
      const gaps = [1000, 3 * 3_600_000, 86_400_000, 2 * 86_400_000, 50, 7 * 86_400_000, 60_000];
      for (let i = 0; i < gaps.length; i++) {
        await log.append([event('a', i)]);
        c.advance(gaps[i]!);
      }
      settle();
      const back = await drainBack(log, 'a', 2);
      expect(back.got.map((e) => e.id)).toEqual(Array.from({ length: gaps.length }, (_, i) => `id-a-${gaps.length - 1 - i}`));
    });

    it("answers with its first backward page a forward cursor from which the log's later events follow, none twice", async () => {
      const { log, clock: c, settle } = make();
      for (let i = 0; i < 5; i++) await log.append([event('a', i)]);
      settle();
      const newest = await log.pageBack({ project: 'a', limit: 2 });
      expect(newest.events.map((e) => e.id)).toEqual(['id-a-4', 'id-a-3']);
      c.advance(5);
      await log.append([event('a', 5), event('a', 6)]);
      settle();
      const after = await drain(log, 'a', 10, newest.next);
      expect(after.got.map((e) => e.id)).toEqual(['id-a-5', 'id-a-6']);
      // The older side from its `before`: the rest, still newest first.
      const older = await drainBack(log, 'a', 10, newest.before);
      expect(older.got.map((e) => e.id)).toEqual(['id-a-2', 'id-a-1', 'id-a-0']);
    });

    it('refuses a malformed before cursor with code 13 and an expired one with 410, as forward pages do', async () => {
      const { log, clock: c, settle } = make();
      await expect(log.pageBack({ project: 'a', before: '../../etc/passwd', limit: 5 })).rejects.toBeInstanceOf(InvalidInputError);
      await log.append([event('a', 1), event('a', 2)]);
      settle();
      const page = await log.pageBack({ project: 'a', limit: 1 });
      expect(page.before).toBeDefined();
      c.advance(40 * 86_400_000);
      const err = await log.pageBack({ project: 'a', before: page.before!, limit: 5 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CursorExpiredError);
      expect((err as CursorExpiredError).status).toBe(410);
    });
  });
}

/** The first backward page whose oldest event is `id` (walks back a page of one at a time). */
async function drainBackTo(log: ChangeLog, id: string) {
  let page = await log.pageBack({ project: 'a', limit: 300 });
  for (let n = 0; n < 100; n++) {
    if (page.events.at(-1)?.id === id) return page;
    page = await log.pageBack({ project: 'a', limit: 1, before: page.before! });
  }
  throw new Error(`${id} not reached`);
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

  it('reads the newest page backwards in one or two LISTs and a GET per event, however much the log holds', async () => {
    const c = clock();
    const { store, calls } = counted(new MemoryObjectStore());
    const log = objectChangeLog({ store, settleMs: 1000, now: c.now });
    // 3,000 events in 3 s (more than one LIST answers in the first window), then 300 a minute apart.
    for (let i = 0; i < 3000; i++) {
      await log.append([event('a', i)]);
      if (i % 1000 === 999) c.advance(1);
    }
    for (let i = 3000; i < 3300; i++) {
      await log.append([event('a', i)]);
      c.advance(60_000);
    }
    c.advance(2000);
    const before = { ...calls };
    const newest = await log.pageBack({ project: 'a', limit: 20 });
    expect(newest.events.map((e) => e.id)).toEqual(Array.from({ length: 20 }, (_, i) => `id-a-${3299 - i}`));
    expect({ list: calls.list - before.list, get: calls.get - before.get }).toEqual({ list: expect.any(Number), get: 20 });
    expect(calls.list - before.list).toBeLessThanOrEqual(5);
    // Into the burst: the window narrows rather than listing 3,000 keys.
    const into = (await drainBackTo(log, 'id-a-3000')).before;
    const mid = { ...calls };
    const page = await log.pageBack({ project: 'a', limit: 50, before: into });
    expect(page.events.map((e) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => `id-a-${2999 - i}`));
    expect(calls.list - mid.list).toBeLessThanOrEqual(8);
  });

  it('reaches past a month of quiet in about ten LISTs', async () => {
    const c = clock();
    const { store, calls } = counted(new MemoryObjectStore());
    const log = objectChangeLog({ store, settleMs: 1000, retentionDays: 60, now: c.now });
    await log.append([event('a', 1)]);
    c.advance(40 * 86_400_000);
    const before = { ...calls };
    const page = await log.pageBack({ project: 'a', limit: 10 });
    expect(page.events.map((e) => e.id)).toEqual(['id-a-1']);
    expect(page.before).toBeUndefined();
    expect(calls.list - before.list).toBeLessThanOrEqual(12);
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
