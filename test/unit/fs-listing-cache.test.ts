import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { compareKeys } from '../../lib/ports/object-store.js';

/**
 * The filesystem store keeps sorted listings of large directories per process
 * (fs-object-store.ts, #sortedChildren). These tests make the directory look settled (its
 * mtime in the past) so the cache is used, then change it in every way another writer could.
 */
describe('filesystem store: cached directory listings', () => {
  let dir: string;
  let store: FsObjectStore;
  const N = 400;
  const name = (i: number) => `t/+t/${String(i).padStart(4, '0')}`;
  const settle = async () => {
    const past = new Date('2020-01-01T00:00:00Z'); // the same instant every time
    await utimes(path.join(dir, 't', '+t'), past, past);
  };
  const all = async (limit: number) => {
    const out: string[] = [];
    let startAfter: string | undefined;
    for (;;) {
      const page = await store.list({ prefix: 't/+t/', startAfter, limit });
      out.push(...page.objects.map((o) => o.key));
      if (!page.truncated) return out;
      startAfter = page.objects.at(-1)!.key;
    }
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-fslist-'));
    store = new FsObjectStore(dir);
    await Promise.all(Array.from({ length: N }, (_, i) => store.put(name(i), `v${i}`)));
    await settle();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('pages through a large directory in byte order with no gaps or repeats', async () => {
    const expected = Array.from({ length: N }, (_, i) => name(i)).sort(compareKeys);
    expect(await all(37)).toEqual(expected);
    expect(await all(37)).toEqual(expected); // the second walk is served from the cache
    const mid = await store.list({ prefix: 't/+t/', startAfter: name(199), limit: 2 });
    expect(mid.objects.map((o) => o.key)).toEqual([name(200), name(201)]);
  });

  it('sees keys added and removed through the store after the listing was cached', async () => {
    await all(100);
    await store.put('t/+t/0150a', 'new');
    await store.delete(name(3));
    const keys = await all(100);
    expect(keys).toContain('t/+t/0150a');
    expect(keys).not.toContain(name(3));
    expect(keys).toHaveLength(N);
  });

  it('sees files another process wrote behind the store’s back, even with the old mtime put back', async () => {
    await all(100);
    await writeFile(path.join(dir, 't', '+t', '9999'), 'foreign');
    // Even if the directory's mtime is restored, its ctime moved: the cached listing is not used.
    await settle();
    expect(await all(100)).toContain('t/+t/9999');
  });
});
