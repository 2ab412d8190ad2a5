import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config.js';
import { keys } from '../registry/keys.js';
import type { WarehouseRecord } from '../registry/records.js';
import type { StorageRoot } from '../ports/storage-root.js';
import type { Registry } from '../registry/registry.js';

/** Where the local default warehouse lives, relative to the data directory (as recorded). */
export function localWarehouseRoot(warehouse: string): StorageRoot {
  return { kind: 'file', path: path.join('warehouses', warehouse) };
}

/**
 * Makes the local default warehouse's recorded root relative to the data directory.
 *
 * Servers before this change recorded the absolute root of their first start. A server started
 * on a copy (`cp -a`) or a moved directory then served, and dropped tables from, the ORIGINAL
 * directory. A recorded absolute root inside this data directory is rewritten as a relative
 * one (compare-and-swap; a concurrent start doing the same wins harmlessly). One outside it
 * belongs to another directory: refuse to start, naming both, rather than destroy bytes under
 * a root this catalog does not own.
 */
export async function adoptLocalWarehouseRoot(
  registry: Registry,
  options: { project: string; warehouse: string; dataDir: string },
): Promise<void> {
  const key = keys.warehouse(options.project, options.warehouse);
  for (;;) {
    const found = await registry.read<WarehouseRecord>(key);
    if (!found) return;
    const storage = found.value.storage;
    if (storage.kind !== 'file' || !path.isAbsolute(storage.path)) return;
    const [dataDir, recorded] = await Promise.all([realOrSelf(options.dataDir), realOrSelf(storage.path)]);
    const rel = path.relative(dataDir, recorded);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new ConfigError(
        `the data directory ${options.dataDir} records its warehouse ${JSON.stringify(options.warehouse)} at ${storage.path}, ` +
          `which is outside it (was the directory copied or moved?). Refusing to start: this catalog would read and delete ` +
          `tables of another directory. Start on ${path.dirname(path.dirname(storage.path))} instead, or give this copy a fresh data directory.`,
      );
    }
    try {
      await registry.replace<WarehouseRecord>(key, { ...found.value, storage: { kind: 'file', path: rel } }, found.etag);
      return;
    } catch {
      // Another process changed the record meanwhile (most likely the same adoption): look again.
    }
  }
}

async function realOrSelf(p: string): Promise<string> {
  return realpath(p).catch(() => path.resolve(p));
}
