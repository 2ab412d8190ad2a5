/**
 * Gradual retirement of a renewed session's connections (lib/adapters/lance/connections.ts, "retirement";
 * issue #36): new connections go through the new session at once; the old ones are closed later,
 * one per RETIRE_EVERY_MS and not on the request path; and however fast sessions are renewed, at
 * most MAX_RETIRING_SESSIONS old ones wait for their connections to close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  CLOSE_DROPPED_CONNECTION_MS,
  connectCached,
  MAX_RETIRING_SESSIONS,
  RETIRE_EVERY_MS,
  retiredConnections,
  retiringSessions,
} from '../../lib/adapters/lance/connections.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { wireEngine } from '../support/wire-engine.js';
import type { Connection } from '../../lib/adapters/lance/lancedb.js';
import { parseLocation } from '../../lib/data/location.js';
import { configureLanceSession, lanceCacheUse, lanceSessionGeneration } from '../../lib/adapters/lance/session.js';
import { ipcRows } from './fixtures.js';

// Tiny, so that a few writes renew the session again and again.
const ITEM_LIMIT = 40;
expect(configureLanceSession({ indexBytes: 8 << 20, metadataBytes: 8 << 20, itemLimit: ITEM_LIMIT })).toBe(true);

const root = mkdtempSync(path.join(tmpdir(), 'rask-retire-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const engine = wireEngine(new LanceDataEngine());
const loc = (t: number) => path.join(root, `p${t}`, 't.lance');

/** When each connection was closed (the binding's own close, wrapped once). */
const closedAt = new Map<Connection, number>();
function watchCloses(db: Connection): void {
  const proto = Object.getPrototypeOf(db) as { close: () => void; __watched?: boolean };
  if (proto.__watched) return;
  const close = proto.close;
  proto.close = function (this: Connection) {
    if (!closedAt.has(this)) closedAt.set(this, Date.now());
    return close.call(this);
  };
  proto.__watched = true;
}

describe('a renewed session', () => {
  it('keeps at most MAX_RETIRING_SESSIONS old sessions, and closes every old connection, one at a time', { timeout: 60_000 }, async () => {
    const TABLES = 12;
    for (let t = 0; t < TABLES; t++) await engine.createTable(loc(t), ipcRows(5), 'create');
    watchCloses(await connectCached(parseLocation(loc(0)).parent, {}));
    const seen = new Map<Connection, number>();
    let mostRetiring = 0;
    let renewedWhileOpen = 0;
    let rounds = 0;
    // Until the session was renewed often enough for the bound to matter (a few rounds).
    for (let round = 0; round < 30 && lanceSessionGeneration() < MAX_RETIRING_SESSIONS + 4; round++, rounds++) {
      for (let t = 0; t < TABLES; t++) {
        const generation = lanceSessionGeneration();
        const db = await connectCached(parseLocation(loc(t)).parent, {});
        if (!seen.has(db)) seen.set(db, generation);
        await engine.insert(loc(t), ipcRows(2, 100 + round * 10));
        expect(await engine.countRows(loc(t))).toBe(5 + 2 * (round + 1));
        mostRetiring = Math.max(mostRetiring, retiringSessions());
        // Not closed on the request path: a connection just replaced by a renewal is still open.
        if (lanceSessionGeneration() !== generation && db.isOpen()) renewedWhileOpen++;
      }
    }
    const use = lanceCacheUse()!;
    expect(use.renewals).toBeGreaterThanOrEqual(MAX_RETIRING_SESSIONS + 4);
    expect(renewedWhileOpen).toBeGreaterThan(0);
    expect(mostRetiring).toBeGreaterThan(0);
    expect(mostRetiring).toBeLessThanOrEqual(MAX_RETIRING_SESSIONS);

    // Once no more renewals come, every connection of an old session is closed.
    const current = lanceSessionGeneration();
    const old = [...seen].filter(([, g]) => g !== current).map(([db]) => db);
    expect(old.length).toBeGreaterThan(TABLES);
    await vi.waitFor(() => expect(old.filter((db) => db.isOpen())).toEqual([]), // Generous: under a loaded machine the timer turns come late, and this bounds nothing.
    { timeout: CLOSE_DROPPED_CONNECTION_MS + old.length * RETIRE_EVERY_MS + 30_000, interval: 50 });
    expect(retiredConnections()).toBe(0);
    expect(retiringSessions()).toBe(0);

    // The drained ones (not those closed at once to respect the bound) were closed apart.
    const times = old.map((db) => closedAt.get(db)!).sort((a, b) => a - b);
    const drainedTail = times.slice(-5);
    for (let i = 1; i < drainedTail.length; i++) expect(drainedTail[i] - drainedTail[i - 1]).toBeGreaterThanOrEqual(RETIRE_EVERY_MS - 5);
    // Tables still answer through the current session.
    for (let t = 0; t < TABLES; t++) expect(await engine.countRows(loc(t))).toBe(5 + 2 * rounds);
  });
});
