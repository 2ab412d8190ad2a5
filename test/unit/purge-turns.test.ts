/**
 * A purge lets the event loop turn between batches of deletes (lib/catalog/protocols/purge.ts,
 * PURGE_BATCH). The filesystem store deletes synchronously, so a purge of a table with a long
 * history used to hold every other request for its whole length (0.9 s for 904 files, issue #36).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { deleteTableObjects, PURGE_BATCH } from '../../lib/catalog/protocols/purge.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

const root = mkdtempSync(path.join(tmpdir(), 'rask-purge-turns-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Deletes between two turns of the event loop, at most, while `run` goes. */
async function mostDeletesPerTurn(store: ObjectStore, run: (s: ObjectStore) => Promise<unknown>): Promise<number> {
  let sinceTurn = 0;
  let most = 0;
  let running = true;
  const turn = () => {
    sinceTurn = 0;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  // Every method bound to the store itself (its private fields), delete counted.
  const counting = new Proxy(store, {
    get(target, prop) {
      if (prop === 'delete') {
        return async (key: string) => {
          most = Math.max(most, ++sinceTurn);
          return target.delete(key);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  try {
    await run(counting);
  } finally {
    running = false;
  }
  return most;
}

describe('a purge of many objects', () => {
  for (const [name, make] of [
    ['filesystem', () => new FsObjectStore(path.join(root, 'fs'))],
    ['memory', () => new MemoryObjectStore()],
  ] as const) {
    it(`deletes everything and lets the event loop turn every ${PURGE_BATCH} deletes at most (${name} store)`, async () => {
      const store = make();
      const files = 5 * PURGE_BATCH + 7;
      for (let i = 0; i < files; i++) await store.put(`ns/t.lance/_versions/${String(i).padStart(4, '0')}.manifest`, 'x');
      await store.put('ns/other.lance/data/keep.lance', 'kept');
      let result: Awaited<ReturnType<typeof deleteTableObjects>> | undefined;
      const most = await mostDeletesPerTurn(store, async (s) => (result = await deleteTableObjects(s, 'ns/t.lance')));
      expect(result).toMatchObject({ deleted: files, failedCount: 0 });
      expect((await store.list({ prefix: 'ns/t.lance/' })).objects).toHaveLength(0);
      expect((await store.list({ prefix: 'ns/other.lance/' })).objects).toHaveLength(1);
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(PURGE_BATCH);
    });
  }
});
