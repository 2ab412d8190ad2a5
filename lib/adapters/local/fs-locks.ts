import { createHash, randomUUID } from 'node:crypto';
import { linkSync, renameSync, rmSync, statSync, type BigIntStats } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { code, inDirAsync, isAbsent, statOrAbsent } from './fs-files.js';

/**
 * Per-key lock files of the filesystem object store. Everything that replaces or removes an
 * existing file holds one across "read etag, compare, rename/unlink", so a check cannot be
 * overtaken by a write of another process (see the FsObjectStore class comment). A lock is a file
 * created with `wx` in `.locks/`, which works across processes without a lock server; a process
 * that crashes while holding one leaves it behind, so a lock older than the stale age is broken.
 * This module owns taking, releasing and breaking those files, apart from the store's operations.
 * Taking and releasing one run off the event loop (creating and removing a file waits for the
 * journal; see inDirAsync); breaking a stale one, rare, stays synchronous.
 */
export class KeyLocks {
  readonly #lockDir: string;
  readonly #lockStaleMs: number;

  constructor(lockDir: string, lockStaleMs: number) {
    this.#lockDir = lockDir;
    this.#lockStaleMs = lockStaleMs;
  }

  /** The lock file guarding `key`. */
  lockPath(key: string): string {
    return path.join(this.#lockDir, `${createHash('sha256').update(key).digest('hex')}.lock`);
  }

  async withLock<T>(key: string, critical: () => T | Promise<T>): Promise<T> {
    const lock = this.lockPath(key);
    const ours = await this.#acquire(lock);
    try {
      return await critical();
    } finally {
      // If our lock was broken as stale and someone else now holds the path, it is theirs.
      const current = statOrAbsent(lock, { follow: true });
      if (current !== undefined && sameFile(current, ours)) await rm(lock, { force: true });
    }
  }

  async #acquire(lock: string): Promise<BigIntStats> {
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await inDirAsync(this.#lockDir, () => open(lock, 'wx'));
        try {
          return await handle.stat({ bigint: true });
        } finally {
          await handle.close();
        }
      } catch (error) {
        if (code(error) !== 'EEXIST') throw error;
      }
      this.#breakIfStale(lock);
      await sleep(Math.min(2 ** attempt, 32) * (0.5 + Math.random()));
    }
  }

  /**
   * Removes a lock left by a crashed process. Two waiters can both see the same stale lock; the
   * rename-then-compare dance keeps the slower one from deleting the fresh lock the faster
   * one has just taken (it puts that lock back instead).
   */
  #breakIfStale(lock: string): void {
    const seen = statOrAbsent(lock, { follow: true });
    if (seen === undefined || Date.now() - Number(seen.mtimeMs) < this.#lockStaleMs) return;
    const grave = `${lock}.stale-${randomUUID()}`;
    try {
      renameSync(lock, grave);
    } catch (error) {
      if (isAbsent(error)) return;
      throw error;
    }
    if (!sameFile(statSync(grave, { bigint: true }), seen)) {
      try {
        linkSync(grave, lock);
      } catch {
        // Someone took the lock meanwhile: theirs now.
      }
    }
    rmSync(grave, { force: true });
  }
}

/** Inode numbers are reused quickly once freed, so a lock's identity is its inode plus its mtime. */
function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeMs === b.mtimeMs;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
