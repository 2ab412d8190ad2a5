/**
 * Lazy access to @lancedb/lancedb. Its native module is ~190 MB and takes ~100 ms to load, so
 * nothing is loaded until the first data-plane call; importing lib/data costs nothing. It is
 * loaded through `require` so that it and lib/data/arrow.ts share the same (CJS) apache-arrow.
 */
import { createRequire } from 'node:module';
import type * as LanceDbModule from '@lancedb/lancedb';

export type LanceDb = typeof LanceDbModule;
export type { Connection, Session, Table } from '@lancedb/lancedb';

let loaded: LanceDb | undefined;

export function loadLanceDb(): LanceDb {
  loaded ??= createRequire(import.meta.url)('@lancedb/lancedb') as LanceDb;
  return loaded;
}
