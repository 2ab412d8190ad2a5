/**
 * The filesystem object store never follows a symbolic link (issue #8, defect 2): a link can
 * point out of the root, and the catalog must not read, write or delete bytes it does not own.
 */
import { mkdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { LinkRefusedError } from '../../lib/ports/object-store.js';
import { tempRoot } from '../data/fixtures.js';

let root: string;
let outside: string;
let cleanups: (() => void)[] = [];
let store: FsObjectStore;

beforeEach(async () => {
  const a = tempRoot('rask-links-root-');
  const b = tempRoot('rask-links-outside-');
  cleanups = [a.cleanup, b.cleanup];
  root = a.root;
  outside = b.root;
  store = new FsObjectStore(root);
  await writeFile(path.join(outside, 'secret'), 'outside bytes');
  await mkdir(path.join(root, 't'), { recursive: true });
  await writeFile(path.join(root, 't', 'own'), 'own bytes');
  await symlink(outside, path.join(root, 't', 'dirlink'));
  await symlink(path.join(outside, 'secret'), path.join(root, 't', 'filelink'));
});

afterEach(() => {
  for (const c of cleanups) c();
});

async function refused(p: Promise<unknown>, link: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LinkRefusedError);
  expect((err as LinkRefusedError).link).toBe(link);
}

describe('FsObjectStore and symbolic links', () => {
  it('refuses reads, writes and deletes through a linked directory', async () => {
    await refused(store.get('t/dirlink/secret'), 't/dirlink');
    await refused(store.head('t/dirlink/secret'), 't/dirlink');
    await refused(store.put('t/dirlink/new', 'x'), 't/dirlink');
    await refused(store.putIfAbsent('t/dirlink/new', 'x'), 't/dirlink');
    await refused(store.delete('t/dirlink/secret'), 't/dirlink');
    await refused(store.list({ prefix: 't/dirlink/' }), 't/dirlink');
    expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe('outside bytes');
  });

  it('refuses to read a key that is itself a link', async () => {
    await refused(store.get('t/filelink'), 't/filelink');
    await refused(store.checkPath('t/filelink'), 't/filelink');
  });

  it('lists a link as a leaf of its own and deletes the link, never its target', async () => {
    const listed = await store.list({ prefix: 't/' });
    expect(listed.objects.map((o) => o.key)).toEqual(['t/dirlink', 't/filelink', 't/own']);
    for (const o of listed.objects) await store.delete(o.key);
    expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe('outside bytes');
    expect((await store.list({ prefix: '' })).objects).toEqual([]);
  });

  it('a root reached through a link of its own is fine (only links under the root count)', async () => {
    const linkedRoot = path.join(outside, 'root-link');
    await symlink(root, linkedRoot);
    const viaLink = new FsObjectStore(linkedRoot);
    expect((await viaLink.get('t/own'))?.body.toString()).toBe('own bytes');
    await viaLink.put('fresh/deep/key', 'new');
    expect((await viaLink.get('fresh/deep/key'))?.body.toString()).toBe('new');
    await viaLink.checkPath('not/yet/there');
    // Listing starts at the root itself, which here is the link: it is followed, as for reads.
    expect((await viaLink.list({ prefix: '' })).objects.map((o) => o.key)).toContain('fresh/deep/key');
    expect((await viaLink.listKeys({ prefix: 'fresh/' })).keys).toEqual(['fresh/deep/key']);
    expect(await readlink(linkedRoot)).toBe(root);
  });
});
