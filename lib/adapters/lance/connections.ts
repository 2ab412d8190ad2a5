import { type Connection, loadLanceDb } from './lancedb.js';
import { collectRenewedSessions, lanceSession, lanceSessionGeneration, renewCrowdedSession } from './session.js';
import { forgetConnection } from './table-handles.js';

/**
 * One LanceDB connection per (parent, storage options), shared by every engine in the process.
 * Vended credentials change the options and so the key; the cache is capped so that rotating
 * credentials cannot grow it without bound. Every connection shares the process's one session
 * (session.ts), so what a connection caches counts against one byte budget, and an evicted
 * connection holds nothing but its object store client. (docs/architecture.md, "Caches and their
 * bounds".)
 *
 * A connection that leaves the cache (evicted, or made through a session that was since renewed)
 * is retired: its kept handles go at once (table-handles.ts), and the connection itself is closed
 * later, one at a time, by a timer off the request path (see RETIRE_EVERY_MS).
 */
export const MAX_CONNECTIONS = 64;

interface Cached {
  readonly db: Promise<Connection>;
  /** The session it was made through (session.ts, lanceSessionGeneration). */
  readonly generation: number;
}

const connections = new Map<string, Cached>();

export function connectCached(parent: string, storageOptions: Record<string, string>): Promise<Connection> {
  // A renewed session: connections from here on are made through the new one, and the ones made
  // through the old one retire, so that it can be freed once the last of them is closed.
  if (renewCrowdedSession()) for (const key of [...connections.keys()]) retire(key);
  const key = JSON.stringify([parent, Object.entries(storageOptions).sort()]);
  const cached = connections.get(key);
  if (cached) {
    // Map order is insertion order; re-inserting marks the entry as recently used.
    connections.delete(key);
    connections.set(key, cached);
    return cached.db;
  }
  const db = loadLanceDb().connect(parent, {
    storageOptions,
    // In the options: 0.31.0's `connect(uri, options, session)` form drops its third argument.
    session: lanceSession(),
    // No `readConsistencyInterval`: a handle never checks for newer versions by itself. A handle
    // opened for one call starts at the latest version; a kept one is brought to it once at the
    // start of each call (engine.ts, `use`). With an interval of 0 LanceDB checked before every
    // step instead — an insert checked three times, three LISTs on S3 where one is enough.
    // 0.31.0 otherwise creates a `__manifest` table in `parent` on connect and migrates the
    // tables it finds into it; the catalog, not LanceDB, is the source of truth here.
    // `manifestEnabled: false` alone does not stop it; the namespace property does.
    manifestEnabled: false,
    namespaceClientProperties: { manifest_enabled: 'false' },
  });
  const entry: Cached = { db, generation: lanceSessionGeneration() };
  db.catch(() => {
    if (connections.get(key) === entry) connections.delete(key);
  });
  connections.set(key, entry);
  while (connections.size > MAX_CONNECTIONS) retire(connections.keys().next().value as string);
  return db;
}

// ---- retirement ----

/**
 * A retired connection is closed no sooner than this after it left the cache, because a request
 * may have just been handed it (its next step, an open, follows within the same turn of the event
 * loop; tables already open keep working after a close). Short, because a renewed session stays in
 * memory until its last connection closes, beside the new one filling up, and what the two held
 * together is not handed back whole (issue #36; docs/benchmarks.md, "Renewals"): in
 * bench/session-entries.ts 5 s and one close per 100 ms ended 35 MB higher than 1 s and 10 ms,
 * and 1 s and 10 ms ~50 MB higher than 100 ms and 2 ms, once the old session was also collected
 * at its last close (session.ts, collectRenewedSessions).
 */
export const CLOSE_DROPPED_CONNECTION_MS = 100;
/**
 * Retired connections are closed one per this interval, never all at once: a renewal used to
 * close its up to 64 connections in one timer turn of the request thread. A close only drops the
 * connection's hold on the session (well under 1 ms); the session's caches are freed later, in
 * one piece, when V8 collects it (360-480 ms measured for ~8,000 entries in two of four probes;
 * no API empties it in steps). At 2 ms the 64 connections of a renewal are gone in ~0.25 s.
 */
export const RETIRE_EVERY_MS = 2;
/**
 * Renewed sessions still waiting for their connections to close, at most. Past it (renewals
 * closer together than retirement drains) the oldest one's connections are closed at once, so
 * that old sessions cannot pile up in memory.
 */
export const MAX_RETIRING_SESSIONS = 2;

interface Retired extends Cached {
  readonly since: number;
}

/** In the order they left the cache. */
const retired: Retired[] = [];
let drainer: NodeJS.Timeout | undefined;

function retire(key: string): void {
  const entry = connections.get(key);
  if (!entry) return;
  connections.delete(key);
  // Its handles go now (closed as soon as no call uses them): no new call reaches them anyway.
  entry.db.then(forgetConnection, () => undefined);
  retired.push({ ...entry, since: Date.now() });
  boundRetiringSessions();
  drainer ??= setInterval(drainOne, RETIRE_EVERY_MS).unref();
}

/** Renewed sessions that still have a retired connection open (each keeps its session alive). */
export function retiringSessions(): number {
  const current = lanceSessionGeneration();
  return new Set(retired.map((r) => r.generation).filter((g) => g !== current)).size;
}

function boundRetiringSessions(): void {
  const current = lanceSessionGeneration();
  for (;;) {
    const old = [...new Set(retired.map((r) => r.generation).filter((g) => g !== current))];
    if (old.length <= MAX_RETIRING_SESSIONS) return;
    const oldest = Math.min(...old);
    for (let i = retired.length - 1; i >= 0; i--) if (retired[i].generation === oldest) close(retired.splice(i, 1)[0]);
  }
}

function drainOne(): void {
  const next = retired[0];
  if (next && Date.now() - next.since >= CLOSE_DROPPED_CONNECTION_MS) close(retired.shift()!);
  if (retired.length === 0 && drainer) {
    clearInterval(drainer);
    drainer = undefined;
  }
}

function close(entry: Retired): void {
  entry.db.then(
    (db) => {
      if (db.isOpen()) db.close();
      // The last connection of a renewed session: nothing of ours holds it now (its handles went
      // at retirement), so it can be freed at once rather than at V8's next full collection.
      if (!retired.some((r) => r.generation === entry.generation)) setImmediate(collectRenewedSessions);
    },
    () => undefined,
  );
}

/** Connections kept now, for tests and the memory stats line. */
export function cachedConnections(): number {
  return connections.size;
}

/** Connections retired and not yet closed, for tests and the memory stats line. */
export function retiredConnections(): number {
  return retired.length;
}
