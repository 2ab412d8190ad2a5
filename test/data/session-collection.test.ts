/**
 * A renewed LanceDB session is freed once the last connection made through it is closed, not at
 * V8's next full collection, whenever that comes (lib/adapters/lance/session.ts,
 * collectRenewedSessions; issue #36): the JS `Session` holds the native caches until it is
 * collected, so nothing of ours may keep a reference to it (the cache-size reading, the scratch
 * connection computed columns are typed on), and a collection is asked for once it is unused.
 *
 * `uncollectedSessions()` counts the sessions V8 has not collected (a FinalizationRegistry):
 * back at 1 means the renewed one is gone. The test does nothing between the renewal's last close
 * and that check, so V8 has no reason of its own to run a full collection in between.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { computedField } from '../../lib/adapters/lance/computed.js';
import { CLOSE_DROPPED_CONNECTION_MS, retiredConnections } from '../../lib/adapters/lance/connections.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { loadLanceDb } from '../../lib/adapters/lance/lancedb.js';
import { configureLanceSession, lanceCacheUse, lanceSessionGeneration, uncollectedSessions } from '../../lib/adapters/lance/session.js';
import { wireEngine } from '../support/wire-engine.js';
import { ipcRows } from './fixtures.js';

const ITEM_LIMIT = 60;
expect(configureLanceSession({ indexBytes: 8 << 20, metadataBytes: 8 << 20, itemLimit: ITEM_LIMIT })).toBe(true);

const root = mkdtempSync(path.join(tmpdir(), 'rask-collect-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const engine = wireEngine(new LanceDataEngine());
let seq = 0;

/** Writes to fresh tables until the session is renewed; `before` runs while the old one is current. */
async function renew(before: () => Promise<void>): Promise<void> {
  const generation = lanceSessionGeneration();
  await before();
  for (let t = 0; t < 40 && lanceSessionGeneration() === generation; t++) {
    const location = path.join(root, `p${++seq}`, 't.lance');
    await engine.createTable(location, ipcRows(5), 'create');
    await engine.insert(location, ipcRows(5, 100));
    expect(await engine.countRows(location)).toBe(10);
  }
  expect(lanceSessionGeneration()).toBe(generation + 1);
}

async function retiredAllClosed(): Promise<void> {
  await vi.waitFor(() => expect(retiredConnections()).toBe(0), { timeout: CLOSE_DROPPED_CONNECTION_MS + 30_000, interval: 20 });
}

describe('a renewed session', () => {
  it('is collected once its last connection is closed, even with a cache reading taken before the renewal', async () => {
    await renew(async () => {
      await engine.createTable(path.join(root, 'first', 't.lance'), ipcRows(5), 'create');
      // A reading of the old session's size (the memory line and the data function take one).
      expect(lanceCacheUse({ fresh: true })!.bytes).toBeGreaterThan(0);
    });
    expect(uncollectedSessions()).toBe(2);
    await retiredAllClosed();
    await vi.waitFor(() => expect(uncollectedSessions()).toBe(1), { interval: 10 });
  });

  it('is collected even after a computed column was typed through it', async () => {
    await retiredAllClosed();
    await vi.waitFor(() => expect(uncollectedSessions()).toBe(1), { interval: 10 });
    await renew(async () => {
      const location = path.join(root, 'computed', 't.lance');
      await engine.createTable(location, ipcRows(5), 'create');
      const db = await loadLanceDb().connect(path.dirname(location));
      try {
        const table = await db.openTable('t');
        try {
          expect((await computedField(table, loadLanceDb(), 'twice', 'id * 2')).name).toBe('twice');
        } finally {
          table.close();
        }
      } finally {
        db.close();
      }
    });
    await retiredAllClosed();
    await vi.waitFor(() => expect(uncollectedSessions()).toBe(1), { interval: 10 });
  });
});
