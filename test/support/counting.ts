import type { CatalogServices } from '../../lib/catalog/services.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { Registry } from '../../lib/registry/registry.js';

const WRITES = new Set(['put', 'putIfAbsent', 'putIfMatch', 'delete', 'deleteIfMatch']);

/** An object store that counts the writes made through it (and lets everything through). */
export function countingWrites(store: ObjectStore, counter: { writes: string[] }): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (WRITES.has(String(prop))) counter.writes.push(`${String(prop)} ${String(args[0])}`);
        return value.apply(target, args);
      };
    },
  });
}

/** The same services with every registry and warehouse write recorded in `counter.writes`. */
export function withWriteCounter(services: CatalogServices, counter: { writes: string[] }): CatalogServices {
  return {
    ...services,
    registry: new Registry(countingWrites(services.registry.store, counter)),
    storageFor: (root) => countingWrites(services.storageFor(root), counter),
  };
}
