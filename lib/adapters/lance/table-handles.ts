import type { Connection, Table } from './lancedb.js';

/**
 * Open handles on the latest version of tables' main branch, kept per process and shared by
 * concurrent requests. Opening a table reads its manifest (on S3 a LIST and a GET before the
 * request's own work starts); a kept handle is instead brought to the latest version once per
 * call (`checkoutLatest`: a LIST, and the manifest only when it moved), so what a call reads and
 * writes is as fresh as the storage at its start, including commits by other processes and a
 * dataset deleted and written anew at the same location. Lance's commit protocol, not the
 * freshness of a handle, is what keeps concurrent writers from losing each other's commits.
 *
 * Only calls that never move a handle use these: a checkout (of a version, tag or branch)
 * changes what every later call on the handle sees, so such calls open a handle of their own.
 *
 * Bounded (docs/architecture.md, "Caches and their bounds"): at most MAX_KEPT_HANDLES in the
 * process, least recently used dropped first, and a connection evicted from its cache takes its
 * handles with it. What a handle reads (manifests, file footers, index partitions) sits in the
 * process's one LanceDB session, bounded by bytes (session.ts); the handle itself holds its
 * latest manifest. A dropped handle is closed as soon as no call is using it — not left to the
 * garbage collector, which sees a few hundred bytes of wrapper and not the native state behind
 * it. A call that fails inside LanceDB drops the handle it used, so a broken one is never served
 * twice; a request refused for its own input keeps it (engine.ts, `use`).
 */
export const MAX_KEPT_HANDLES = 128;

interface Entry {
  readonly db: Connection;
  readonly name: string;
  readonly handle: Promise<Table>;
  /** Calls using the handle now. */
  users: number;
  /** No longer kept: closed when the last user releases it. */
  dropped: boolean;
}

/** By connection and table name, in least-recently-used order (Map order is insertion order). */
const kept = new Map<string, Entry>();
const connectionIds = new WeakMap<Connection, number>();
let nextConnectionId = 0;

function keyOf(db: Connection, name: string): string {
  let id = connectionIds.get(db);
  if (id === undefined) connectionIds.set(db, (id = ++nextConnectionId));
  return `${id}\u0000${name}`;
}

export interface KeptHandle {
  readonly handle: Promise<Table>;
  /**
   * This call opened the handle, so it is at the latest version already. A call that joins an
   * open another call started is not: that open may have read the versions before this request
   * arrived.
   */
  readonly opened: boolean;
  /** The call is done with the handle (always call it, once). */
  release(): void;
}

export function latestHandle(db: Connection, name: string): KeptHandle {
  const key = keyOf(db, name);
  let entry = kept.get(key);
  const opened = !entry;
  if (entry) {
    kept.delete(key);
  } else {
    const handle = db.openTable(name);
    const fresh: Entry = { db, name, handle, users: 0, dropped: false };
    handle.catch(() => drop(key, fresh));
    entry = fresh;
  }
  kept.set(key, entry);
  entry.users++;
  while (kept.size > MAX_KEPT_HANDLES) {
    const [oldestKey, oldest] = kept.entries().next().value as [string, Entry];
    drop(oldestKey, oldest);
  }
  const used = entry;
  let released = false;
  return {
    handle: used.handle,
    opened,
    release: () => {
      if (released) return;
      released = true;
      used.users--;
      closeIfIdle(used);
    },
  };
}

/** Drops `handle` if it is still the one kept for `name`: the next call opens the table afresh. */
export function forgetHandle(db: Connection, name: string, handle: Promise<Table>): void {
  const key = keyOf(db, name);
  const entry = kept.get(key);
  if (entry?.handle === handle) drop(key, entry);
}

/** Drops every handle kept on `db` (its connection left the connection cache). */
export function forgetConnection(db: Connection): void {
  for (const [key, entry] of [...kept]) if (entry.db === db) drop(key, entry);
}

/** Handles kept now, for tests and the memory stats line. */
export function keptHandles(): number {
  return kept.size;
}

function drop(key: string, entry: Entry): void {
  if (kept.get(key) === entry) kept.delete(key);
  entry.dropped = true;
  closeIfIdle(entry);
}

function closeIfIdle(entry: Entry): void {
  if (!entry.dropped || entry.users > 0) return;
  // A failed open has nothing to close; a handle closed twice is harmless, but only once is asked.
  entry.handle.then(
    (table) => {
      if (table.isOpen()) table.close();
    },
    () => undefined,
  );
}
