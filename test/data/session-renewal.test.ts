/**
 * LanceDB's metadata cache keeps about one small entry per table version it ever saw and does
 * not evict them by bytes (lib/adapters/lance/session.ts, SESSION_BYTES_PER_ITEM): past its entry limit the
 * process's session is renewed, the connections and handles made through the old one are dropped
 * (and closed), and every table still answers exactly (issue #36).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { cachedConnections, connectCached } from '../../lib/adapters/lance/connections.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import { parseLocation } from '../../lib/data/location.js';
import { configureLanceSession, lanceCacheUse, lanceSession } from '../../lib/adapters/lance/session.js';
import { latestHandle } from '../../lib/adapters/lance/table-handles.js';
import { ipcRows } from './fixtures.js';

const ITEM_LIMIT = 200;
expect(configureLanceSession({ indexBytes: 8 << 20, metadataBytes: 8 << 20, itemLimit: ITEM_LIMIT })).toBe(true);

const root = mkdtempSync(path.join(tmpdir(), 'rask-renewal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const engine = wireEngine(new LanceDataEngine());

describe('the session past its entry limit', () => {
  it('is renewed: entries stay bounded, old connections and handles are dropped and closed, tables answer', async () => {
    const first = path.join(root, 'p0', 't.lance');
    await engine.createTable(first, ipcRows(10), 'create');
    await engine.countRows(first);
    const loc = parseLocation(first);
    const oldSession = lanceSession();
    const kept = latestHandle(await connectCached(loc.parent, {}), loc.name);
    const oldHandle = await kept.handle;
    kept.release();
    const expected = new Map<string, number>([[first, 10]]);
    let peakItems = 0;
    for (let t = 1; t <= 30; t++) {
      const location = path.join(root, `p${t}`, 't.lance');
      await engine.createTable(location, ipcRows(5), 'create');
      for (let v = 0; v < 4; v++) await engine.insert(location, ipcRows(5, 100 + v * 5));
      expect(await engine.countRows(location)).toBe(25);
      expected.set(location, 25);
      peakItems = Math.max(peakItems, lanceCacheUse()!.items);
    }
    const use = lanceCacheUse()!;
    expect(use.renewals).toBeGreaterThan(0);
    expect(lanceSession()).not.toBe(oldSession);
    // A session is renewed at the first connect past the limit: one request's worth over, at most.
    expect(peakItems).toBeLessThan(ITEM_LIMIT * 2);
    expect(cachedConnections()).toBeLessThan(31);
    // The old session's handle was dropped with its connection and, idle, closed.
    await vi.waitFor(() => expect(oldHandle.isOpen()).toBe(false));
    for (const [location, rows] of expected) expect(await engine.countRows(location)).toBe(rows);
  });
});
