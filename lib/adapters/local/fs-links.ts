import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { LinkRefusedError } from '../../ports/object-store.js';
import { code, isAbsent, statOrAbsent } from './fs-files.js';

/**
 * Symbolic-link safety of the filesystem object store: the check that the directory a key
 * resolves in is reached from the root without passing through a link. A link can point out of
 * the root, and the catalog must not read, write or delete bytes it does not own (the FsObjectStore
 * class comment lists the other guards: `O_NOFOLLOW` reads, links listed as leaves). The check is
 * one `realpath` compared with the root's real path rather than an lstat per segment, which is
 * why it keeps the root's real path and needs a slow path to name the offending link.
 */
export class LinkGuard {
  readonly #root: string;
  #realRoot?: string;

  constructor(root: string) {
    this.#root = root;
  }

  /**
   * Throws LinkRefusedError unless `dir` (under the root) resolves to itself under the root's
   * real path: one realpath (of its deepest existing ancestor) instead of an lstat per segment.
   * Synchronous: one libc realpath of a local path costs less than a thread-pool round trip.
   */
  checkDir(dir: string, key: string): void {
    const rel = path.relative(this.#root, dir);
    this.#realRoot ??= realpathOfExisting(this.#root);
    if (realpathOfExisting(dir) === path.join(this.#realRoot, rel)) return;
    throw new LinkRefusedError(key, this.#firstLink(rel));
  }

  /** The key prefix of the first link on the way to `rel` (for the error; the slow path). */
  #firstLink(rel: string): string {
    const segments = rel.split(path.sep).filter(Boolean);
    for (let i = 1; i <= segments.length; i++) {
      if (statOrAbsent(path.join(this.#root, ...segments.slice(0, i)))?.isSymbolicLink()) return segments.slice(0, i).join('/');
    }
    return segments.join('/');
  }
}

/**
 * The real path of `p` where it exists; where it does not yet, the real path of its deepest
 * existing ancestor joined with the missing rest (a write creates those as plain directories).
 * A link loop resolves to nothing real, so it never matches.
 */
function realpathOfExisting(p: string): string {
  const missing: string[] = [];
  for (let current = p; ; ) {
    try {
      return path.join(realpathSync.native(current), ...missing.reverse());
    } catch (error) {
      if (code(error) === 'ELOOP') return `\0loop:${p}`;
      if (!isAbsent(error)) throw error;
    }
    const parent = path.dirname(current);
    if (parent === current) return p;
    missing.push(path.basename(current));
    current = parent;
  }
}
