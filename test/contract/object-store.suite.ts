/**
 * The behaviour every ObjectStore must share, written once and run against each adapter
 * (object-store.test.ts). The expectations are S3's, since production runs on S3: the memory
 * and filesystem stores are only useful stand-ins if they agree with it here.
 *
 * Keys are chosen so they also work on a filesystem: no key is both an object and a "directory"
 * of other keys (`a` and `a/b`), which S3 allows but files cannot represent.
 *
 * When the storage fails (issue #35; docs/protocols.md, "When S3 fails"), what each port
 * guarantees, and where it is pinned:
 * - every store: ConditionFailedError means a lost race and nothing else; storage that cannot
 *   answer throws StorageUnavailableError (503 / code 17), never ConditionFailedError;
 * - S3 (`runFailingStoreContract` below, over the fault injector inside the SDK's retry loop):
 *   409 ConditionalRequestConflict is retried, not a lost race; a conditional write whose earlier
 *   attempt may have applied recognises itself (put / copy: the key holds what it sent; delete:
 *   the key is gone) and succeeds, at the cost of one read only then; throttling, 5xx, timeouts
 *   and resets left after the SDK's retries are StorageUnavailableError;
 * - filesystem: each conditional write is one atomic link / rename under a lock, so it has no
 *   unknown outcome and no 409; EIO, ENOSPC, EMFILE and the like are StorageUnavailableError
 *   (test/contract/fs-store-failures.test.ts);
 * - memory: cannot fail.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../lib/errors.js';
import { ConditionFailedError, type ObjectStore } from '../../lib/ports/object-store.js';
import type { FaultRequest, S3Faults } from '../support/s3-faults.js';
import { casIncrement } from '../support/fs-cas-worker.js';

export interface StoreUnderTest {
  readonly store: ObjectStore;
  readonly cleanup?: () => Promise<void>;
}

/** Resolves to the reason of the ConditionFailedError the promise must reject with. */
export async function lostRace(promise: Promise<unknown>): Promise<ConditionFailedError['reason']> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConditionFailedError);
  return (error as ConditionFailedError).reason;
}

/**
 * In UTF-8 byte order. JS `<` disagrees on the last two: U+1F600 is a surrogate pair starting
 * 0xD83D, which sorts before 0xFF61 in UTF-16 but after it in UTF-8 (F0… > EF…).
 */
const ORDERED_KEYS = [
  'list/!',
  'list/%41',
  'list/A',
  'list/a',
  'list/a b',
  'list/z',
  'list/~',
  'list/é',
  'list/\uFF61',
  'list/\u{1F600}',
];

/** For delimiter tests: with prefix `d/` and delimiter `/` the entries are one, sub/, sub2/, two, é/. */
const TREE_KEYS = ['d/one', 'd/sub/x', 'd/sub/y', 'd/sub2/z', 'd/two', 'd/é/q'];

export function runObjectStoreContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let store: ObjectStore;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup?.();
    });

    const seed = (keys: readonly string[]) => Promise.all(keys.map((key) => store.put(key, `body of ${key}`)));
    const keysOf = (result: { objects: readonly { key: string }[] }) => result.objects.map((o) => o.key);

    describe('reads', () => {
      it('returns undefined from get and head of a missing key', async () => {
        expect(await store.get('nothing/here')).toBeUndefined();
        expect(await store.head('nothing/here')).toBeUndefined();
      });

      it('returns what putIfAbsent stored, with matching etag and size in bytes', async () => {
        const before = Date.now();
        const { etag } = await store.putIfAbsent('records/r1.json', 'héllo wörld');
        const got = await store.get('records/r1.json');
        expect(got?.body.toString()).toBe('héllo wörld');
        expect(got?.size).toBe(Buffer.byteLength('héllo wörld'));
        expect(got?.etag).toBe(etag);
        expect(etag).toMatch(/^".+"$/);
        expect(got?.lastModified).toBeInstanceOf(Date);
        // Second-granularity clocks (S3) may round down; allow slack either way.
        expect(Math.abs(got!.lastModified.getTime() - before)).toBeLessThan(60_000);
        const head = await store.head('records/r1.json');
        expect(head).toMatchObject({ key: 'records/r1.json', etag, size: got?.size });
      });

      it('round-trips binary and empty bodies', async () => {
        const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        await store.put('bin/all-bytes', bytes);
        await store.put('bin/empty', Buffer.alloc(0));
        expect((await store.get('bin/all-bytes'))?.body.equals(bytes)).toBe(true);
        expect(await store.get('bin/empty')).toMatchObject({ size: 0 });
        expect((await store.get('bin/empty'))?.body.length).toBe(0);
      });

      // Sizes either side of the filesystem store's synchronous-read bound (256 KiB) and a few MiB:
      // a store may read small and large objects by different paths, and both must be whole.
      it('round-trips objects of 256 KiB ± 1 and 3 MiB byte for byte, with the etag head reports', async () => {
        for (const size of [256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 3 * 1024 * 1024 + 7]) {
          const bytes = Buffer.alloc(size);
          for (let i = 0; i < size; i++) bytes[i] = (i * 31 + size) & 0xff;
          await store.put(`big/${size}`, bytes);
          const got = await store.get(`big/${size}`);
          expect(got?.size).toBe(size);
          expect(got?.body.equals(bytes)).toBe(true);
          expect(got?.etag).toBe((await store.head(`big/${size}`))?.etag);
        }
      });
    });

    describe('conditional writes', () => {
      it('lets only the first putIfAbsent create a key', async () => {
        await store.putIfAbsent('k', 'first');
        expect(await lostRace(store.putIfAbsent('k', 'second'))).toBe('exists');
        expect((await store.get('k'))?.body.toString()).toBe('first');
      });

      it('copies with copyIfAbsent only onto a missing key, and the copy is what list and head report', async () => {
        const staged = await store.put('c/_versions/1.manifest-abc', 'manifest bytes');
        const copied = await store.copyIfAbsent('c/_versions/1.manifest-abc', 'c/_versions/1.manifest');
        expect(copied).toBeDefined();
        expect((await store.get('c/_versions/1.manifest'))?.body.toString()).toBe('manifest bytes');
        const head = await store.head('c/_versions/1.manifest');
        expect(head?.etag).toBe(copied!.etag);
        if (copied!.size !== undefined) expect(copied!.size).toBe(head!.size);
        expect(Math.abs(copied!.lastModified.getTime() - head!.lastModified.getTime())).toBeLessThan(2_000);
        // Exactly one winner; the loser changes nothing.
        await store.put('c/_versions/1.manifest-def', 'other bytes');
        expect(await lostRace(store.copyIfAbsent('c/_versions/1.manifest-def', 'c/_versions/1.manifest'))).toMatch(/exists|etag-mismatch/);
        expect((await store.get('c/_versions/1.manifest'))?.body.toString()).toBe('manifest bytes');
        // A missing source copies nothing.
        expect(await store.copyIfAbsent('c/_versions/nope', 'c/_versions/2.manifest')).toBeUndefined();
        expect(await store.head('c/_versions/2.manifest')).toBeUndefined();
        // Later writes to either key leave the other alone (a hard link must not share them).
        await store.put('c/_versions/1.manifest-abc', 'rewritten');
        await store.delete('c/_versions/1.manifest-abc');
        expect((await store.get('c/_versions/1.manifest'))?.body.toString()).toBe('manifest bytes');
        expect(staged.etag).toMatch(/^".+"$/);
      });

      it('copies with copyIfAbsent only while the source has the given etag', async () => {
        const { etag } = await store.put('s/src', 'v1');
        await store.put('s/src', 'v2');
        await expect(store.copyIfAbsent('s/src', 's/dst', { sourceEtag: etag })).rejects.toBeInstanceOf(ConditionFailedError);
        expect(await store.head('s/dst')).toBeUndefined();
        const current = (await store.head('s/src'))!.etag;
        expect(await store.copyIfAbsent('s/src', 's/dst', { sourceEtag: current })).toBeDefined();
        expect((await store.get('s/dst'))?.body.toString()).toBe('v2');
      });

      it('lets exactly one of many concurrent copyIfAbsent calls create a key', async () => {
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.put(`m/src-${i}`, `writer ${i}`)));
        const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.copyIfAbsent(`m/src-${i}`, 'm/final')));
        const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        expect(won).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConditionFailedError);
        expect((await store.get('m/final'))?.body.toString()).toBe(`writer ${won[0]}`);
      });

      it('replaces with putIfMatch only while the etag matches', async () => {
        const v1 = await store.putIfAbsent('k', 'v1');
        const v2 = await store.putIfMatch('k', 'v2', v1.etag);
        expect(v2.etag).not.toBe(v1.etag);
        expect(await store.get('k')).toMatchObject({ etag: v2.etag, body: Buffer.from('v2') });
        expect(await lostRace(store.putIfMatch('k', 'v3', v1.etag))).toBe('etag-mismatch');
        expect(await lostRace(store.putIfMatch('k', 'v3', '"not-an-etag"'))).toBe('etag-mismatch');
        expect((await store.get('k'))?.body.toString()).toBe('v2');
      });

      it('treats putIfMatch on a missing key as a lost race and creates nothing', async () => {
        expect(await lostRace(store.putIfMatch('gone', 'v', '"d41d8cd98f00b204e9800998ecf8427e"'))).toBe('missing');
        expect(await store.head('gone')).toBeUndefined();
      });

      it('deletes with deleteIfMatch only while the etag matches', async () => {
        const { etag } = await store.putIfAbsent('k', 'v1');
        expect(await lostRace(store.deleteIfMatch('k', '"not-an-etag"'))).toBe('etag-mismatch');
        expect(await store.head('k')).toBeDefined();
        await store.deleteIfMatch('k', etag);
        expect(await store.get('k')).toBeUndefined();
        expect(await lostRace(store.deleteIfMatch('k', etag))).toBe('missing');
      });

      it('accepts the etags that head and list report', async () => {
        await store.put('e/k', 'v1');
        const head = await store.head('e/k');
        const { etag } = await store.putIfMatch('e/k', 'v2', head!.etag);
        const listed = await store.list({ prefix: 'e/' });
        expect(listed.objects).toEqual([expect.objectContaining({ key: 'e/k', etag, size: 2 })]);
        await store.deleteIfMatch('e/k', listed.objects[0].etag);
        expect(await store.head('e/k')).toBeUndefined();
      });
    });

    describe('unconditional writes', () => {
      it('creates and overwrites with put', async () => {
        const first = await store.put('u/k', 'one');
        expect((await store.get('u/k'))?.etag).toBe(first.etag);
        const second = await store.put('u/k', 'two');
        expect(await store.get('u/k')).toMatchObject({ etag: second.etag, body: Buffer.from('two') });
      });

      it('deletes existing keys and ignores missing ones', async () => {
        await store.put('u/k', 'one');
        await store.delete('u/k');
        expect(await store.get('u/k')).toBeUndefined();
        await expect(store.delete('u/k')).resolves.toBeUndefined();
        await expect(store.delete('never/was')).resolves.toBeUndefined();
        await store.putIfAbsent('u/k', 'again');
        expect((await store.get('u/k'))?.body.toString()).toBe('again');
      });
    });

    describe('list', () => {
      it('orders keys by UTF-8 bytes, not by JS string comparison', async () => {
        expect('\u{1F600}' < '\uFF61').toBe(true); // the pair below really does disagree
        await seed([...ORDERED_KEYS].reverse());
        const result = await store.list({ prefix: 'list/' });
        expect(keysOf(result)).toEqual(ORDERED_KEYS);
        expect(result.commonPrefixes).toEqual([]);
        expect(result.truncated).toBe(false);
        expect(result.objects[0]).toMatchObject({ size: Buffer.byteLength('body of list/!') });
      });

      it('orders nested keys among their siblings by bytes (`-` < `/` < `0`)', async () => {
        await seed(['x/a0', 'x/a/b', 'x/a-c']);
        expect(keysOf(await store.list({}))).toEqual(['x/a-c', 'x/a/b', 'x/a0']);
      });

      it('filters by prefix, including prefixes that end mid-name', async () => {
        await seed([...ORDERED_KEYS, ...TREE_KEYS]);
        expect(keysOf(await store.list({ prefix: 'list/a' }))).toEqual(['list/a', 'list/a b']);
        expect(keysOf(await store.list({ prefix: 'lis' }))).toEqual(ORDERED_KEYS);
        expect(await store.list({ prefix: 'nope/' })).toEqual({ objects: [], commonPrefixes: [], truncated: false });
        expect(keysOf(await store.list({}))).toEqual([...TREE_KEYS, ...ORDERED_KEYS]);
      });

      it('rolls keys up to common prefixes at the delimiter', async () => {
        await seed(TREE_KEYS);
        const result = await store.list({ prefix: 'd/', delimiter: '/' });
        expect(keysOf(result)).toEqual(['d/one', 'd/two']);
        expect(result.commonPrefixes).toEqual(['d/sub/', 'd/sub2/', 'd/é/']);
        const partial = await store.list({ prefix: 'd/s', delimiter: '/' });
        expect(keysOf(partial)).toEqual([]);
        expect(partial.commonPrefixes).toEqual(['d/sub/', 'd/sub2/']);
        expect((await store.list({ delimiter: '/' })).commonPrefixes).toEqual(['d/']);
      });

      it('rolls up at delimiters other than `/`', async () => {
        await seed(['h/a-1', 'h/a-2', 'h/b', 'h/c-x/y']);
        const result = await store.list({ prefix: 'h/', delimiter: '-' });
        expect(keysOf(result)).toEqual(['h/b']);
        expect(result.commonPrefixes).toEqual(['h/a-', 'h/c-']);
      });

      it('counts common prefixes toward the limit and resumes after a common prefix', async () => {
        await seed(TREE_KEYS);
        const first = await store.list({ prefix: 'd/', delimiter: '/', limit: 3 });
        expect(keysOf(first)).toEqual(['d/one']);
        expect(first.commonPrefixes).toEqual(['d/sub/', 'd/sub2/']);
        expect(first.truncated).toBe(true);
        const rest = await store.list({ prefix: 'd/', delimiter: '/', startAfter: 'd/sub2/' });
        expect(keysOf(rest)).toEqual(['d/two']);
        expect(rest.commonPrefixes).toEqual(['d/é/']);
        expect(rest.truncated).toBe(false);
      });

      it('skips a common prefix that is not after startAfter, as S3 does', async () => {
        await seed(TREE_KEYS);
        const result = await store.list({ prefix: 'd/', delimiter: '/', startAfter: 'd/sub/x' });
        expect(keysOf(result)).toEqual(['d/two']);
        expect(result.commonPrefixes).toEqual(['d/sub2/', 'd/é/']);
      });

      it('starts strictly after startAfter, which need not exist', async () => {
        await seed(ORDERED_KEYS);
        expect(keysOf(await store.list({ prefix: 'list/', startAfter: 'list/a' }))).toEqual(ORDERED_KEYS.slice(4));
        expect(keysOf(await store.list({ prefix: 'list/', startAfter: 'list/b' }))).toEqual(ORDERED_KEYS.slice(5));
        expect(keysOf(await store.list({ prefix: 'list/', startAfter: 'a' }))).toEqual(ORDERED_KEYS);
        expect(keysOf(await store.list({ prefix: 'list/', startAfter: 'list/\u{1F600}' }))).toEqual([]);
        // U+FF61 sorts after U+1F600 in UTF-16, so a JS-order implementation returns nothing here.
        expect(keysOf(await store.list({ prefix: 'list/', startAfter: 'list/\uFF61' }))).toEqual(['list/\u{1F600}']);
      });

      it('stops at the limit and says whether more entries exist', async () => {
        await seed(ORDERED_KEYS);
        const n = ORDERED_KEYS.length;
        expect(await store.list({ prefix: 'list/', limit: 3 })).toMatchObject({ truncated: true });
        expect(keysOf(await store.list({ prefix: 'list/', limit: 3 }))).toEqual(ORDERED_KEYS.slice(0, 3));
        expect(await store.list({ prefix: 'list/', limit: n - 1 })).toMatchObject({ truncated: true });
        expect(await store.list({ prefix: 'list/', limit: n })).toMatchObject({ truncated: false });
        expect(await store.list({ prefix: 'list/', limit: n + 5 })).toMatchObject({ truncated: false });
      });

      it('rejects a limit that is not a positive integer', async () => {
        await expect(store.list({ limit: 0 })).rejects.toThrow(RangeError);
        await expect(store.list({ limit: 1.5 })).rejects.toThrow(RangeError);
      });

      it('pages by startAfter = last key with no gaps and no duplicates', async () => {
        const keys = [
          ...Array.from({ length: 26 }, (_, i) => `page/${String.fromCharCode(97 + i)}${i % 3 === 0 ? '/deep' : ''}`),
          'page/Ä',
          'page/ a',
          'page/\uFF61',
          'page/\u{1F600}',
        ];
        await seed(keys);
        const everything = keysOf(await store.list({ prefix: 'page/' }));
        expect(everything).toHaveLength(keys.length);
        const paged: string[] = [];
        let startAfter: string | undefined;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThan(keys.length);
          const page = await store.list({ prefix: 'page/', startAfter, limit: 4 });
          paged.push(...keysOf(page));
          if (!page.truncated) break;
          startAfter = paged.at(-1);
        }
        expect(paged).toEqual(everything);
        expect(new Set(paged).size).toBe(keys.length);
      });

      it('answers with listKeys (where a store has it) exactly the keys and truncation list answers', async () => {
        if (!store.listKeys) return;
        await seed([...ORDERED_KEYS, 'list/sub/deep', 'lisp']);
        for (const options of [{ prefix: 'list/' }, { prefix: 'lis' }, { prefix: 'list/a' }, { prefix: 'list/', startAfter: 'list/a', limit: 2 }, { prefix: 'list/', limit: 1 }, {}]) {
          const full = await store.list(options);
          expect(await store.listKeys(options)).toEqual({ keys: keysOf(full), truncated: full.truncated });
        }
      });
    });

    describe('contention', () => {
      it('converges 8 concurrent read-modify-write increments of one key to exactly 8', async () => {
        const attempts = await Promise.all(Array.from({ length: 8 }, () => casIncrement(store, 'counters/c')));
        expect((await store.get('counters/c'))?.body.toString()).toBe('8');
        // At least one writer must have lost a race, or the test did not test contention.
        expect(Math.max(...attempts)).toBeGreaterThan(1);
      });
    });
  });
}

// --- A store over failing storage (issue #35): S3 through the fault injector ---

export interface FailingStoreUnderTest extends StoreUnderTest {
  /** Decides the faults of every attempt the store's client makes (test/support/s3-faults.ts). */
  readonly faults: S3Faults;
  /** Attempts per request the client makes (the SDK's maxAttempts). */
  readonly maxAttempts: number;
}

/** Attempts on keys ending in `key` (the store may add a prefix). */
const on = (key: string, op?: FaultRequest['op']) => (r: FaultRequest) => r.key.endsWith(key) && (op === undefined || r.op === op);

export function runFailingStoreContract(name: string, makeStore: () => Promise<FailingStoreUnderTest>): void {
  describe(`ObjectStore contract under faults: ${name}`, () => {
    let store: ObjectStore;
    let faults: S3Faults;
    let maxAttempts: number;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ store, faults, maxAttempts, cleanup } = await makeStore());
    });
    afterEach(async () => {
      await cleanup?.();
    });

    /** Requests on `key` since `since` attempts were logged. */
    const attemptsOn = (key: string, since = 0) => faults.attempts().slice(since).filter(on(key)).map((r) => r.op);

    describe('409 ConditionalRequestConflict is not a lost race', () => {
      it('retries a put-if-absent that S3 answered 409, and it lands', async () => {
        faults.place(on('k', 'PUT'), { kind: 'conflict' });
        const { etag } = await store.putIfAbsent('k', 'v1');
        expect(await store.get('k')).toMatchObject({ etag, body: Buffer.from('v1') });
        expect(attemptsOn('k')).toEqual(['PUT', 'PUT', 'GET']);
      });

      it('retries a put-if-match that S3 answered 409, never "condition failed"', async () => {
        const v1 = await store.putIfAbsent('k', 'v1');
        faults.place(on('k', 'PUT'), { kind: 'conflict' });
        const v2 = await store.putIfMatch('k', 'v2', v1.etag);
        expect(await store.get('k')).toMatchObject({ etag: v2.etag, body: Buffer.from('v2') });
      });

      it('retries a delete-if-match and a copy-if-absent that S3 answered 409', async () => {
        const { etag } = await store.putIfAbsent('k', 'v1');
        faults.place(on('k', 'DELETE'), { kind: 'conflict' });
        await store.deleteIfMatch('k', etag);
        expect(await store.head('k')).toBeUndefined();
        await store.put('src', 'copied');
        faults.place(on('dst', 'COPY'), { kind: 'conflict' });
        expect(await store.copyIfAbsent('src', 'dst')).toBeDefined();
        expect((await store.get('dst'))?.body.toString()).toBe('copied');
      });

      it('answers a 409 that outlasts its retries as unavailable storage, not as a lost race', async () => {
        faults.place(on('k', 'PUT'), { kind: 'conflict' }, 50);
        await expect(store.putIfAbsent('k', 'v1')).rejects.toBeInstanceOf(StorageUnavailableError);
        expect(await store.head('k')).toBeUndefined();
      });
    });

    describe('a conditional write recognises its own earlier attempt', () => {
      it('succeeds when its put-if-absent applied but the answer was lost (the retry met 412)', async () => {
        faults.place(on('k', 'PUT'), { kind: 'timeout', afterApply: true });
        const { etag } = await store.putIfAbsent('k', 'mine');
        expect(await store.head('k')).toMatchObject({ etag });
        expect((await store.get('k'))?.body.toString()).toBe('mine');
      });

      it('succeeds when its put-if-match applied but the answer was lost', async () => {
        const v1 = await store.putIfAbsent('k', 'v1');
        faults.place(on('k', 'PUT'), { kind: 'reset', afterApply: true });
        const v2 = await store.putIfMatch('k', 'v2', v1.etag);
        expect(await store.get('k')).toMatchObject({ etag: v2.etag, body: Buffer.from('v2') });
      });

      it('succeeds when its delete-if-match applied but the answer was lost (the retry met 404)', async () => {
        const { etag } = await store.putIfAbsent('k', 'v1');
        faults.place(on('k', 'DELETE'), { kind: 'timeout', afterApply: true });
        await store.deleteIfMatch('k', etag);
        expect(await store.head('k')).toBeUndefined();
      });

      it('succeeds when its copy-if-absent applied but the answer was lost', async () => {
        await store.put('src', 'staged manifest');
        faults.place(on('dst', 'COPY'), { kind: 'internal', afterApply: true });
        const copied = await store.copyIfAbsent('src', 'dst');
        expect(copied?.etag).toBe((await store.head('dst'))?.etag);
      });

      it('succeeds when every attempt applied-or-not is unknown and the key holds what it sent', async () => {
        faults.place(on('k', 'PUT'), { kind: 'timeout', afterApply: true }, maxAttempts);
        const { etag } = await store.putIfAbsent('k', 'mine');
        expect(await store.head('k')).toMatchObject({ etag });
      });

      it('still loses a race it lost: after an unknown outcome, a retry that meets 412 and someone else`s bytes lost', async () => {
        await store.putIfAbsent('k', 'theirs');
        faults.place(on('k', 'PUT'), { kind: 'timeout' });
        const error = await store.putIfAbsent('k', 'mine').catch((e: unknown) => e);
        if (maxAttempts > 1) {
          expect(error).toBeInstanceOf(ConditionFailedError);
          // The store cannot tell "never applied" from "applied, then replaced by a later writer".
          expect(error).toMatchObject({ reason: 'exists', mayHaveApplied: true });
        } else {
          // With no SDK retry there is no 412 to go by, only the timeout: the storage failed.
          expect(error).toBeInstanceOf(StorageUnavailableError);
        }
        expect((await store.get('k'))?.body.toString()).toBe('theirs');
      });

      it('costs a read only when an outcome was unknown: a plain lost race is one request', async () => {
        await store.putIfAbsent('k', 'theirs');
        const before = faults.attempts().length;
        const plain = await store.putIfAbsent('k', 'mine').catch((e: unknown) => e);
        expect(plain).toMatchObject({ reason: 'exists', mayHaveApplied: false });
        expect(attemptsOn('k', before)).toEqual(['PUT']);
        const etag = (await store.head('k'))!.etag;
        const again = faults.attempts().length;
        expect(await lostRace(store.deleteIfMatch('k', '"other"'))).toBe('etag-mismatch');
        await store.putIfMatch('k', 'next', etag);
        expect(attemptsOn('k', again)).toEqual(['DELETE', 'PUT']);
      });
    });

    describe('races under random faults', () => {
      it('answers 8 concurrent put-if-absent calls on one key truthfully, 20 times at p = 0.15', async () => {
        for (let round = 0; round < 20; round++) {
          const key = `race-${round}`;
          faults.setProbability(0.15);
          const answers = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              store.putIfAbsent(key, `writer ${i}`).then(
                () => 'won' as const,
                (e: unknown) => (e instanceof ConditionFailedError ? ('lost' as const) : e instanceof StorageUnavailableError ? ('unknown' as const) : e),
              ),
            ),
          );
          faults.setProbability(0);
          for (const a of answers) expect(['won', 'lost', 'unknown']).toContain(a);
          const held = (await store.get(key))?.body.toString();
          const winners = answers.flatMap((a, i) => (a === 'won' ? [i] : []));
          // Nobody replaces a put-if-absent's object here, so "won" and "lost" are exact.
          expect(winners.length).toBeLessThanOrEqual(1);
          if (winners.length === 1) expect(held).toBe(`writer ${winners[0]}`);
          for (const [i, a] of answers.entries()) if (a === 'lost') expect(held).not.toBe(`writer ${i}`);
          if (held === undefined) expect(answers.every((a) => a === 'unknown')).toBe(true);
        }
      });
    });

    describe('storage that cannot answer', () => {
      it.each([
        ['throttling (503 SlowDown)', 'slowdown'],
        ['500 InternalError', 'internal'],
        ['timeouts', 'timeout'],
        ['resets', 'reset'],
      ] as const)('answers %s that outlast the SDK`s retries as StorageUnavailableError, on reads and writes', async (_name, kind) => {
        await store.put('k', 'v');
        faults.place(on('k'), { kind }, maxAttempts);
        await expect(store.get('k')).rejects.toBeInstanceOf(StorageUnavailableError);
        faults.place(on('other'), { kind }, maxAttempts * 4);
        await expect(store.putIfAbsent('other', 'v')).rejects.toBeInstanceOf(StorageUnavailableError);
        faults.place(on(''), { kind }, 100);
        await expect(store.list({ prefix: '' })).rejects.toBeInstanceOf(StorageUnavailableError);
      });

      it('says Retry-After a little longer for throttling than for other failures', async () => {
        faults.place(on('k'), { kind: 'slowdown' }, maxAttempts);
        const throttled = await store.head('k').catch((e: unknown) => e);
        faults.place(on('k'), { kind: 'internal' }, maxAttempts);
        const failed = await store.head('k').catch((e: unknown) => e);
        expect(throttled).toBeInstanceOf(StorageUnavailableError);
        expect(failed).toBeInstanceOf(StorageUnavailableError);
        expect((throttled as StorageUnavailableError).retryAfterSeconds).toBeGreaterThan((failed as StorageUnavailableError).retryAfterSeconds);
      });

      it('is not fooled by faults the SDK`s retries absorb', async () => {
        faults.place(on('k'), { kind: 'slowdown' }, maxAttempts - 1);
        await store.put('k', 'v');
        expect((await store.get('k'))?.body.toString()).toBe('v');
      });
    });
  });
}
