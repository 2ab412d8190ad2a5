/**
 * Bounded memory in the data plane (issue #36; docs/architecture.md, "Caches and their bounds"):
 * one LanceDB session per process, sized from the configuration and passed to every connect; its
 * caches stay within that size however many tables and versions pass through (LanceDB's own size
 * accounting, not RSS); kept handles and connections are bounded by count, and a handle that
 * leaves the cache is closed once no call uses it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { cachedConnections, connectCached, MAX_CONNECTIONS } from '../../lib/adapters/lance/connections.js';
import { computedField } from '../../lib/adapters/lance/computed.js';
import { LanceDataEngine } from '../../lib/adapters/lance/engine.js';
import { loadLanceDb } from '../../lib/adapters/lance/lancedb.js';
import { parseLocation } from '../../lib/data/location.js';
import { CACHE_BYTES_SAMPLE_MS, configureLanceSession, lanceCacheUse, lanceSession } from '../../lib/adapters/lance/session.js';
import { keptHandles, latestHandle, MAX_KEPT_HANDLES } from '../../lib/adapters/lance/table-handles.js';
import { ipcRows } from './fixtures.js';

const MIB = 1024 * 1024;
// Small enough that the tables below overflow it many times over; set before any connect.
const BUDGET = { indexBytes: 2 * MIB, metadataBytes: MIB / 2 };
expect(configureLanceSession(BUDGET)).toBe(true);

const root = mkdtempSync(path.join(tmpdir(), 'rask-memory-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const engine = new LanceDataEngine();
let seq = 0;
const location = () => path.join(root, 'tables', `p${++seq}`, 't.lance');
/** Tables side by side in one directory share a connection: only the handle cap applies. */
const sibling = () => path.join(root, 'siblings', `t${++seq}.lance`);

describe('one LanceDB session per process', () => {
  it('is created once, with the configured budgets, and passed to every connect', async () => {
    const lib = loadLanceDb();
    const connect = vi.spyOn(lib, 'connect');
    try {
      const a = await connectCached(path.join(root, 'c1'), {});
      const b = await connectCached(path.join(root, 'c2'), {});
      expect(a).not.toBe(b);
      const table = (await a.createTable('t', [{ id: 1 }])) as Awaited<ReturnType<typeof a.createTable>>;
      // The scratch connection computed columns are typed on goes through the same session.
      await computedField(table, lib, 'twice', 'id * 2');
      table.close();
      expect(connect.mock.calls.length).toBeGreaterThanOrEqual(3);
      for (const args of connect.mock.calls as unknown as [string, { session?: unknown }][]) expect(args[1].session).toBe(lanceSession());
    } finally {
      connect.mockRestore();
    }
    expect(lanceSession()).toBe(lanceSession());
    // A later, different configuration cannot resize it: the answer says so.
    expect(configureLanceSession({ indexBytes: MIB, metadataBytes: MIB })).toBe(false);
    expect(lanceCacheUse()).toMatchObject({ indexBudgetBytes: BUDGET.indexBytes, metadataBudgetBytes: BUDGET.metadataBytes });
  });

  it('stays within its budget over many tables and versions', async () => {
    const budget = BUDGET.indexBytes + BUDGET.metadataBytes;
    let peak = 0;
    for (let t = 0; t < 24; t++) {
      const loc = location();
      await engine.createTable(loc, ipcRows(20), 'create');
      for (let v = 0; v < 5; v++) {
        await engine.insert(loc, ipcRows(5, 100 + v * 5));
        await engine.countRows(loc);
      }
      peak = Math.max(peak, lanceCacheUse({ fresh: true })!.bytes);
    }
    // The engine's reads are what fills it (~23 KB a version, 144 versions: several times the
    // metadata budget), and eviction kept it there.
    expect(peak).toBeGreaterThan(BUDGET.metadataBytes / 2);
    // LanceDB's cache evicts as it inserts, so a moment's overshoot is an entry or two, not more.
    expect(peak).toBeLessThanOrEqual(budget * 1.1);
  });
});

describe('reading the cache use', () => {
  // sizeBytes() walks every entry on the event loop (tens of ms at 30,000 entries), and the data
  // function reads the use after every request: the byte figure is a sample, the count is live.
  it(`reads the byte size at most once per ${CACHE_BYTES_SAMPLE_MS} ms unless asked for a fresh one`, async () => {
    const loc = location();
    await engine.createTable(loc, ipcRows(5), 'create');
    const sizeBytes = vi.spyOn(lanceSession(), 'sizeBytes');
    try {
      const t0 = 1_000_000_000_000;
      lanceCacheUse({ now: t0 + CACHE_BYTES_SAMPLE_MS * 10 });
      const after = sizeBytes.mock.calls.length;
      for (let i = 0; i < 50; i++) lanceCacheUse({ now: t0 + CACHE_BYTES_SAMPLE_MS * 10 + i });
      expect(sizeBytes.mock.calls.length).toBe(after);
      await engine.insert(loc, ipcRows(5, 10));
      const later = lanceCacheUse({ now: t0 + CACHE_BYTES_SAMPLE_MS * 11 });
      expect(sizeBytes.mock.calls.length).toBe(after + 1);
      expect(later?.bytes).toBe(Number(lanceSession().sizeBytes()));
      lanceCacheUse({ now: t0 + CACHE_BYTES_SAMPLE_MS * 11, fresh: true });
      expect(sizeBytes.mock.calls.length).toBe(after + 3);
    } finally {
      sizeBytes.mockRestore();
    }
  });
});

describe('kept handles', () => {
  it(`keep at most ${MAX_KEPT_HANDLES}, least recently used dropped first, and a dropped one is closed`, async () => {
    const first = sibling();
    await engine.createTable(first, ipcRows(3), 'create');
    await engine.countRows(first);
    const loc = parseLocation(first);
    const firstKept = latestHandle(await connectCached(loc.parent, {}), loc.name);
    const firstTable = await firstKept.handle;
    firstKept.release();
    for (let i = 0; i < MAX_KEPT_HANDLES + 8; i++) {
      const other = sibling();
      await engine.createTable(other, ipcRows(1), 'create');
      await engine.countRows(other);
      expect(keptHandles()).toBeLessThanOrEqual(MAX_KEPT_HANDLES);
    }
    expect(keptHandles()).toBe(MAX_KEPT_HANDLES);
    // The first table's handle left the cache and, idle, was closed; the table still answers.
    await vi.waitFor(() => expect(firstTable.isOpen()).toBe(false));
    expect(await engine.countRows(first)).toBe(3);
  });

  it('a handle in use when dropped stays open until its call ends', async () => {
    const busy = sibling();
    await engine.createTable(busy, ipcRows(4), 'create');
    const loc = parseLocation(busy);
    const inUse = latestHandle(await connectCached(loc.parent, {}), loc.name);
    const table = await inUse.handle;
    for (let i = 0; i < MAX_KEPT_HANDLES + 1; i++) {
      const other = sibling();
      await engine.createTable(other, ipcRows(1), 'create');
      await engine.countRows(other);
    }
    expect(table.isOpen()).toBe(true);
    expect(await table.countRows()).toBe(4);
    inUse.release();
    await vi.waitFor(() => expect(table.isOpen()).toBe(false));
  });
});

describe('connections', () => {
  it(`keep at most ${MAX_CONNECTIONS}; an evicted connection takes its handles with it`, async () => {
    const first = location();
    await engine.createTable(first, ipcRows(2), 'create');
    const loc = parseLocation(first);
    const kept = latestHandle(await connectCached(loc.parent, {}), loc.name);
    const table = await kept.handle;
    kept.release();
    for (let i = 0; i < MAX_CONNECTIONS + 4; i++) await connectCached(path.join(root, 'many', String(i)), {});
    expect(cachedConnections()).toBe(MAX_CONNECTIONS);
    await vi.waitFor(() => expect(table.isOpen()).toBe(false));
  });
});
