import type { ObjectStore } from '../../lib/ports/object-store.js';

/**
 * A store that refuses every write, as S3 does for a role holding only GetObject and ListBucket
 * (the per-operation deployment's read functions): reads pass through, each attempted write is
 * counted and throws. A read path that tries to repair what it meets fails here exactly as it
 * would fail on AWS.
 */
export interface WriteRefusingStore extends ObjectStore {
  /** The writes attempted so far, as `method key`. */
  readonly attempts: readonly string[];
}

const WRITES = new Set(['putIfAbsent', 'putIfMatch', 'copyIfAbsent', 'put', 'deleteIfMatch', 'delete']);

export class WriteRefusedError extends Error {
  constructor(method: string, key: string) {
    super(`AccessDenied: ${method} ${key} (the role may only read)`);
    this.name = 'WriteRefusedError';
  }
}

export function refusingWrites(inner: ObjectStore): WriteRefusingStore {
  const attempts: string[] = [];
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'attempts') return attempts;
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop === 'string' && WRITES.has(prop)) {
        return (key: string) => {
          attempts.push(`${prop} ${key}`);
          return Promise.reject(new WriteRefusedError(prop, key));
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as WriteRefusingStore;
}
