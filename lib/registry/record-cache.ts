import type { Registry } from './registry.js';

/**
 * Registry records a process keeps for a short time, per registry: bounded in age and in count
 * (least recently read dropped first), so a process serving many projects or warehouses keeps a
 * bounded map (docs/architecture.md, "Caches and their bounds"). Map order is insertion order:
 * a hit is re-inserted, so the first key is always the least recently read.
 */
export class RecordCache<V> {
  private readonly byRegistry = new WeakMap<Registry, Map<string, { value: V; until: number }>>();

  constructor(
    private readonly ttlMs: number,
    readonly maxEntries: number,
  ) {}

  private mapOf(registry: Registry) {
    let map = this.byRegistry.get(registry);
    if (!map) this.byRegistry.set(registry, (map = new Map()));
    return map;
  }

  /** The value cached for `key`, if it is younger than the cache's age. */
  get(registry: Registry, key: string, now = Date.now()): V | undefined {
    const map = this.mapOf(registry);
    const hit = map.get(key);
    if (!hit || hit.until <= now) return undefined;
    map.delete(key);
    map.set(key, hit);
    return hit.value;
  }

  set(registry: Registry, key: string, value: V, now = Date.now()): void {
    const map = this.mapOf(registry);
    map.delete(key);
    map.set(key, { value, until: now + this.ttlMs });
    while (map.size > this.maxEntries) map.delete(map.keys().next().value!);
  }

  delete(registry: Registry, key: string): void {
    this.mapOf(registry).delete(key);
  }

  /** Entries held for `registry` now, for tests. */
  size(registry: Registry): number {
    return this.mapOf(registry).size;
  }
}
