import { type Connection, loadLanceDb } from './lancedb.js';
import { lanceSession, renewCrowdedSession } from './session.js';
import { forgetConnection } from './table-handles.js';

/**
 * One LanceDB connection per (parent, storage options), shared by every engine in the process.
 * Vended credentials change the options and so the key; the cache is capped so that rotating
 * credentials cannot grow it without bound. Every connection shares the process's one session
 * (session.ts), so what a connection caches counts against one byte budget, and an evicted
 * connection holds nothing but its object store client. Evicted connections are not closed: a
 * request may still be using one. (docs/architecture.md, "Caches and their bounds".)
 */
export const MAX_CONNECTIONS = 64;
const connections = new Map<string, Promise<Connection>>();

export function connectCached(parent: string, storageOptions: Record<string, string>): Promise<Connection> {
  // A renewed session: every connection made through the old one goes, so that it can be freed.
  if (renewCrowdedSession()) for (const key of [...connections.keys()]) dropConnection(key);
  const key = JSON.stringify([parent, Object.entries(storageOptions).sort()]);
  const cached = connections.get(key);
  if (cached) {
    // Map order is insertion order; re-inserting marks the entry as recently used.
    connections.delete(key);
    connections.set(key, cached);
    return cached;
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
  db.catch(() => connections.delete(key));
  connections.set(key, db);
  while (connections.size > MAX_CONNECTIONS) dropConnection(connections.keys().next().value as string);
  return db;
}

/**
 * A dropped connection's handles go with it (table-handles.ts), and the connection is closed a
 * little later rather than left to the garbage collector (which sees a small wrapper, not what it
 * holds). Later, because a request may have just been handed it: its next step (an open) follows
 * within the same turn of the event loop. Tables already open keep working after a close.
 */
export const CLOSE_DROPPED_CONNECTION_MS = 5_000;

function dropConnection(key: string): void {
  const dropped = connections.get(key);
  if (!dropped) return;
  connections.delete(key);
  dropped.then(
    (db) => {
      forgetConnection(db);
      setTimeout(() => db.close(), CLOSE_DROPPED_CONNECTION_MS).unref();
    },
    () => undefined,
  );
}

/** Connections kept now, for tests and the memory stats line. */
export function cachedConnections(): number {
  return connections.size;
}
