import { lstatSync, mkdirSync, openSync, closeSync, renameSync, symlinkSync, utimesSync, writeFileSync, writeSync, cpSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { LinkRefusedError } from '../../lib/ports/object-store.js';

/**
 * The filesystem store keeps the bytes of small objects it read (fs-object-store.ts, #recent)
 * and serves a repeated `get` from them while the file's lstat still gives the etag they were
 * read under. These tests change the object in every way another writer could and check that
 * the next `get` sees it, and that the cache is really what answers an unchanged object.
 */
describe('filesystem store: small objects served from the last read', () => {
  let dir: string;
  let store: FsObjectStore;
  const key = 'p/w/ns/+t';
  const file = () => path.join(dir, ...key.split('/'));
  const text = async (s: FsObjectStore = store) => (await s.get(key))?.body.toString();

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-fsread-'));
    store = new FsObjectStore(dir);
    await store.put(key, 'version-1');
    expect(await text()).toBe('version-1'); // now cached
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('answers an unchanged object from the bytes it read, not from the file', async () => {
    // Overwrite the file in place (the store never does) and put its mtime back: the etag's
    // parts are unchanged, so only a cached answer still says version-1. The mtime is first set
    // to a whole second, which utimes can restore exactly.
    const past = new Date('2020-01-01T00:00:00Z');
    utimesSync(file(), past, past);
    expect(await text()).toBe('version-1'); // read again: the mtime is part of the etag
    const before = lstatSync(file(), { bigint: true });
    const fd = openSync(file(), 'r+');
    writeSync(fd, 'VERSION-1', 0);
    closeSync(fd);
    utimesSync(file(), past, past);
    const after = lstatSync(file(), { bigint: true });
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
    expect(await text()).toBe('version-1');
    expect(await text(new FsObjectStore(dir))).toBe('VERSION-1'); // a store without the cache reads the file
  });

  it('sees a write through another store instance at once, even of the same size', async () => {
    const other = new FsObjectStore(dir);
    await other.put(key, 'version-2');
    expect(await text()).toBe('version-2');
    const { etag } = (await store.head(key))!;
    await other.putIfMatch(key, 'version-3', etag);
    expect(await text()).toBe('version-3');
    expect((await store.get(key))!.etag).toBe((await other.head(key))!.etag);
  });

  it('sees a file another process renamed into place, and a deleted one', async () => {
    const staged = path.join(dir, 'staged');
    writeFileSync(staged, 'version-X');
    renameSync(staged, file());
    expect(await text()).toBe('version-X');
    await new FsObjectStore(dir).delete(key);
    expect(await store.get(key)).toBeUndefined();
  });

  it('refuses a link planted in the key’s place or on its path after the read', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'rask-fsread-outside-'));
    try {
      // The key itself becomes a link to a copy of the same bytes.
      writeFileSync(path.join(outside, '+t'), 'version-1');
      renameSync(file(), path.join(dir, 'moved'));
      symlinkSync(path.join(outside, '+t'), file());
      await expect(store.get(key)).rejects.toBeInstanceOf(LinkRefusedError);

      // A directory on the path becomes a link to a copy of it (same names, same bytes).
      const nsDir = path.join(dir, 'p', 'w', 'ns');
      await rm(nsDir, { recursive: true });
      mkdirSync(nsDir);
      renameSync(path.join(dir, 'moved'), file());
      expect(await text()).toBe('version-1'); // cached again under the new inode
      cpSync(nsDir, path.join(outside, 'ns'), { recursive: true });
      renameSync(nsDir, path.join(dir, 'ns-old'));
      symlinkSync(path.join(outside, 'ns'), nsDir);
      await expect(store.get(key)).rejects.toBeInstanceOf(LinkRefusedError);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('hands out copies: a caller that changes its bytes changes nobody else’s', async () => {
    const first = (await store.get(key))!.body;
    first.write('XXXXXXXXX');
    expect(await text()).toBe('version-1');
  });
});
