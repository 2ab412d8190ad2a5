import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { STAGING_DIR, writeFirstVersion } from '../../lib/catalog/protocols/first-version.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

/**
 * Publishing the first version of a declared table (lib/catalog/protocols/first-version.ts): the
 * staged files reach the table directory by the store's own copy (a hard link on disk,
 * CopyObject on S3), never read into this process and written back; the version-1 manifest is a
 * copy-if-absent, so of two writers exactly one wins and the loser's copies are removed.
 */

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

const stores: Record<string, () => ObjectStore> = {
  memory: () => new MemoryObjectStore(),
  fs: () => {
    const root = mkdtempSync(path.join(tmpdir(), 'rask-first-version-'));
    roots.push(root);
    return new FsObjectStore(root);
  },
};

/** Every call made through `store`, as `op key`. */
function recording(store: ObjectStore, calls: string[]): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${String(prop)} ${String(args[0])}`);
        return value.apply(target, args);
      };
    },
  });
}

const TABLE = 'tables/abc/t.lance';
const target = (store: ObjectStore) => ({ store, path: TABLE, location: `/abs/${TABLE}` });
/**
 * A staged dataset at the staging location the writer was given: version 1's manifest, a data
 * file and a transaction file, the last two named by the writer (Lance names them at random).
 */
const stageInto = (store: ObjectStore, tag: string) => async (stagingLocation: string) => {
  const stagingPath = stagingLocation.slice('/abs/'.length);
  await store.put(`${stagingPath}/_versions/18446744073709551614.manifest`, `manifest of ${tag}`);
  await store.put(`${stagingPath}/data/${tag}.lance`, `rows of ${tag}`);
  await store.put(`${stagingPath}/_transactions/0-${tag}.txn`, `transaction of ${tag}`);
  return tag;
};
const keysUnder = async (store: ObjectStore, prefix: string) => (await store.list({ prefix })).objects.map((o) => o.key).sort();

describe.each(Object.keys(stores))('the first version of a declared table (%s store)', (kind) => {
  it('is published by copies: no staged byte is read into this process or written back', async () => {
    const store = stores[kind]();
    const calls: string[] = [];
    const outcome = await writeFirstVersion(target(recording(store, calls)), 'w1', stageInto(store, 'w1'));
    expect(outcome).toEqual({ won: true, value: 'w1' });
    expect(await keysUnder(store, `${TABLE}/`)).toEqual([
      `${TABLE}/_transactions/0-w1.txn`,
      `${TABLE}/_versions/18446744073709551614.manifest`,
      `${TABLE}/data/w1.lance`,
    ]);
    expect((await store.get(`${TABLE}/data/w1.lance`))?.body.toString()).toBe('rows of w1');
    expect((await store.get(`${TABLE}/_versions/18446744073709551614.manifest`))?.body.toString()).toBe('manifest of w1');
    const published = calls.filter((c) => !c.includes(`/${STAGING_DIR}/`) || c.startsWith('copyIfAbsent'));
    expect(published.filter((c) => /^(get|put|putIfAbsent) /.test(c))).toEqual([]);
    expect(published.filter((c) => c.startsWith('copyIfAbsent'))).toHaveLength(3);
  });

  it('of two writers exactly one publishes; the loser\'s copies are removed and it is told it lost', async () => {
    const store = stores[kind]();
    const first = await writeFirstVersion(target(store), 'w1', stageInto(store, 'w1'));
    const second = await writeFirstVersion(target(store), 'w2', stageInto(store, 'w2'));
    expect(first.won).toBe(true);
    expect(second).toEqual({ won: false });
    expect(await keysUnder(store, `${TABLE}/`)).toEqual([
      `${TABLE}/_transactions/0-w1.txn`,
      `${TABLE}/_versions/18446744073709551614.manifest`,
      `${TABLE}/data/w1.lance`,
    ]);
    expect((await store.get(`${TABLE}/_versions/18446744073709551614.manifest`))?.body.toString()).toBe('manifest of w1');
    expect(await keysUnder(store, `${TABLE}/${STAGING_DIR}/`)).toEqual([]);
  });
});
