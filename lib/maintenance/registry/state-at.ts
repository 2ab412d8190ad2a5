import { HistoryUnavailableError, type KeyVersion, type RegistryHistory } from '../../ports/registry-history.js';
import { keys } from '../../registry/keys.js';

/**
 * The registry's state at one instant T, key by key, from its history (lib/ports/registry-history.ts):
 * what export writes and restore puts back. Every version with time ≤ T is in, every later one
 * out, so the state is causally closed: a state a crash at T could have left, which the next
 * read of each object repairs (docs/protocols.md, "Repair paths"). That is the whole consistency
 * argument of export and restore (docs/operations.md, "Registry backup and restore").
 */

/** A whole registry, or one project: its record and everything under `p/<project>/`. */
export type Scope = { readonly all: true } | { readonly project: string };

/** The key ranges of a scope: one history listing each. */
export function scopeRanges(scope: Scope): { readonly prefix: string; readonly exact?: boolean }[] {
  if ('all' in scope) return [{ prefix: '' }];
  return [{ prefix: keys.project(scope.project), exact: true }, { prefix: keys.warehousesPrefix(scope.project).slice(0, -'w/'.length) }];
}

export interface KeyAt {
  readonly key: string;
  /** The version current at T; absent when the key did not exist then. */
  readonly at?: KeyVersion;
  /** The version current now; absent when the key does not exist now. */
  readonly now?: KeyVersion;
}

/**
 * Refuses an instant the history cannot answer for: before it begins, or in the future (the
 * state there is not known yet).
 */
export async function checkInstant(history: RegistryHistory, at: Date, now: Date = new Date()): Promise<void> {
  const from = await history.retainedFrom();
  if (at.getTime() < from.getTime()) {
    throw new HistoryUnavailableError(
      `${at.toISOString()} is older than the registry's retained history, which begins at ${from.toISOString()} (${history.url}); nothing was read or changed`,
    );
  }
  if (at.getTime() > now.getTime()) throw new HistoryUnavailableError(`${at.toISOString()} is in the future; nothing was read or changed`);
}

/** Every key of the scope that exists at T or now, in byte order of each range. */
export async function* keysAt(history: RegistryHistory, scope: Scope, at: Date, options: { onRequest?: () => void } = {}): AsyncIterable<KeyAt> {
  const t = at.getTime();
  for (const range of scopeRanges(scope)) {
    for await (const versions of history.versions(range.prefix, options)) {
      const key = versions[0]!.key;
      if (range.exact && key !== range.prefix) continue;
      const then = versions.find((v) => v.time.getTime() <= t);
      const latest = versions[0]!;
      const now = latest.current && !latest.deleted ? latest : undefined;
      const entry: KeyAt = { key, ...(then && !then.deleted ? { at: then } : {}), ...(now ? { now } : {}) };
      if (entry.at || entry.now) yield entry;
    }
  }
}
