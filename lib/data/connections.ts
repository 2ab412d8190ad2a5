import { type Connection, loadLanceDb } from './lancedb.js';

/**
 * One LanceDB connection per (parent, storage options), shared by every engine in the process.
 * Vended credentials change the options and so the key; the cache is capped so that rotating
 * credentials cannot grow it without bound. Evicted connections are not closed: a request may
 * still be using one, and they hold no more than caches.
 */
const MAX_CONNECTIONS = 64;
const connections = new Map<string, Promise<Connection>>();

export function connectCached(parent: string, storageOptions: Record<string, string>): Promise<Connection> {
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
  while (connections.size > MAX_CONNECTIONS) connections.delete(connections.keys().next().value as string);
  return db;
}
