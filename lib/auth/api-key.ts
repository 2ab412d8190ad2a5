import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * API key checking, independent of where keys are stored and of the transport. Used by the
 * API Gateway authorizer (functions/authorizer.ts); usable by any other front door.
 */

/** Shortest key accepted from the key store: an empty or short secret must never match. */
export const MIN_KEY_LENGTH = 16;

/** Where the accepted keys come from (Secrets Manager in AWS; a fake in tests). */
export interface KeySource {
  /** The raw secret text. */
  read(): Promise<string>;
}

export class KeyStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyStoreError';
  }
}

/**
 * The accepted keys in a secret: either the key itself, or JSON `{"keys": ["k1", "k2"]}` so that
 * a rotation can accept the old and the new key for a while. Surrounding whitespace is ignored.
 * A secret with no usable key is an error (the caller must fail closed), never "accept nothing
 * silently" or, worse, "accept the empty string".
 */
export function parseKeys(secret: string): string[] {
  const text = secret.trim();
  let keys: unknown[];
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new KeyStoreError('the key secret looks like JSON but does not parse');
    }
    const list = (parsed as { keys?: unknown }).keys;
    if (!Array.isArray(list)) throw new KeyStoreError('a JSON key secret must be {"keys": ["<key>", ...]}');
    keys = list;
  } else {
    keys = [text];
  }
  const valid = keys.filter((k): k is string => typeof k === 'string').map((k) => k.trim());
  if (valid.length !== keys.length || valid.some((k) => k.length < MIN_KEY_LENGTH || /\s/.test(k))) {
    throw new KeyStoreError(`every key must be a string of at least ${MIN_KEY_LENGTH} characters without whitespace`);
  }
  if (valid.length === 0) throw new KeyStoreError('the key secret holds no key');
  return valid;
}

/**
 * The credentials a request presents: the `x-api-key` header and/or the token of an
 * `Authorization: Bearer <token>` header. Header names are matched case-insensitively.
 */
export function presentedKeys(headers: Readonly<Record<string, string | undefined>> | null | undefined): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (lower === 'x-api-key') {
      if (value.trim()) found.push(value.trim());
    } else if (lower === 'authorization') {
      const match = /^\s*bearer\s+(\S+)\s*$/i.exec(value);
      if (match) found.push(match[1]);
    }
  }
  return found;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether any presented credential equals any accepted key. Comparison is on SHA-256 digests
 * with `timingSafeEqual`, so neither the length nor a matching prefix of a key shows in the
 * timing, and every pair is compared (no early exit).
 */
export function matchesAnyKey(presented: readonly string[], accepted: readonly string[]): boolean {
  let ok = false;
  const acceptedDigests = accepted.map(digest);
  for (const candidate of presented) {
    const d = digest(candidate);
    for (const a of acceptedDigests) ok = timingSafeEqual(d, a) || ok;
  }
  return ok;
}

/**
 * Caches the parsed keys of a KeySource for `ttlMs`, so a warm container checks a key without a
 * network call while a rotated secret still takes effect within the TTL. Concurrent callers
 * share one read; a failed read is not cached (the next request retries).
 */
export class CachedKeys {
  private cached?: { keys: Promise<string[]>; at: number };

  constructor(
    private readonly source: KeySource,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<string[]> {
    const t = this.now();
    if (this.cached && t - this.cached.at < this.ttlMs) return this.cached.keys;
    const entry = { keys: this.source.read().then(parseKeys), at: t };
    this.cached = entry;
    entry.keys.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return entry.keys;
  }
}
