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
 * Kept per connection (a connection evicted from its cache takes its handles with it) and capped;
 * an evicted handle is not closed, since a request may still be using it, and holds no more than
 * caches. A call that fails inside LanceDB drops the handle it used, so a broken one is never
 * served twice; a request refused for its own input keeps it (engine.ts, `use`).
 */
const MAX_HANDLES_PER_CONNECTION = 64;
const handles = new WeakMap<Connection, Map<string, Promise<Table>>>();

export interface KeptHandle {
  readonly handle: Promise<Table>;
  /**
   * This call opened the handle, so it is at the latest version already. A call that joins an
   * open another call started is not: that open may have read the versions before this request
   * arrived.
   */
  readonly opened: boolean;
}

export function latestHandle(db: Connection, name: string): KeptHandle {
  let tables = handles.get(db);
  if (!tables) handles.set(db, (tables = new Map()));
  const kept = tables.get(name);
  if (kept) {
    // Map order is insertion order; re-inserting marks the entry as recently used.
    tables.delete(name);
    tables.set(name, kept);
    return { handle: kept, opened: false };
  }
  const opened = db.openTable(name);
  opened.catch(() => forgetHandle(db, name, opened));
  tables.set(name, opened);
  while (tables.size > MAX_HANDLES_PER_CONNECTION) tables.delete(tables.keys().next().value as string);
  return { handle: opened, opened: true };
}

/** Drops `handle` if it is still the one kept for `name`: the next call opens the table afresh. */
export function forgetHandle(db: Connection, name: string, handle: Promise<Table>): void {
  const tables = handles.get(db);
  if (tables?.get(name) === handle) tables.delete(name);
}
