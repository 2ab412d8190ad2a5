import { createHash } from 'node:crypto';
import { lstatSync, statSync, type BigIntStats } from 'node:fs';
import { mkdir } from 'node:fs/promises';

/**
 * The file facts the filesystem object store's mechanisms share (fs-object-store.ts, the locks,
 * the listing and read caches, the link guard): which root directories the store keeps for
 * itself, what a file version's etag is made of, which errno codes mean "no such file", a stat
 * that answers a miss without throwing, and a write that creates its directory. They live apart
 * so each mechanism can import them without importing the store, and no module imports another
 * in a circle.
 */

/**
 * Root-level directories the store keeps for itself; keys whose first segment is one of these
 * are refused and never listed. Staged writes live in `.tmp/` (same filesystem as the targets, so
 * link/rename are atomic); per-key lock files live in `.locks/`.
 */
export const RESERVED_ROOT_DIRS: readonly string[] = ['.tmp', '.locks'];

/** What a file version's etag is made of. */
export function statIdentity(stat: BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}`;
}

export function fileEtag(stat: BigIntStats): string {
  return `"${createHash('md5').update(statIdentity(stat)).digest('hex')}"`;
}

/**
 * The file's stat — of a final link itself unless `follow` — or undefined when nothing is there.
 * Synchronous, and a miss does not throw (see SYNC_IO_MAX_BYTES in fs-object-store.ts).
 */
export function statOrAbsent(file: string, options: { follow?: boolean } = {}): BigIntStats | undefined {
  try {
    const how = { bigint: true, throwIfNoEntry: false } as const;
    return options.follow ? statSync(file, how) : lstatSync(file, how);
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
}

/**
 * Runs a write into `dir`, creating the directory when missing. Retries because a concurrent
 * delete (another process's) may prune the momentarily empty directory between our mkdir and our
 * write. Off the event loop: a call that changes a directory (create, link, rename, unlink) waits
 * for the filesystem journal, which a concurrent fsync can hold for milliseconds, and on the loop
 * that wait stalled every other request (issue #36, the memory soak's p99).
 */
export async function inDirAsync<T>(dir: string, write: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (code(error) !== 'ENOENT' || attempt === 5) throw error;
    }
    await mkdir(dir, { recursive: true });
  }
}

export function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * The path does not name a file: missing, a path segment is a file rather than a directory, or
 * a segment is longer than a file name can be (so no such file can exist).
 */
export function isAbsent(error: unknown): boolean {
  const c = code(error);
  return c === 'ENOENT' || c === 'ENOTDIR' || c === 'EISDIR' || c === 'ENAMETOOLONG';
}
