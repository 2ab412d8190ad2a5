/**
 * Object quotas (lib/catalog/quotas.ts; docs/operations.md, "Object quotas"): a create reserves
 * a slot in the project's usage record by compare-and-swap before it writes, so concurrent
 * creates at the quota's edge admit exactly the quota — on random interleavings of the memory
 * store and on the filesystem store's real concurrency — and a refusal writes nothing. Drops are
 * found by a recount, made only when a create would be refused, at most once per interval.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../lib/errors.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { listNamespaces } from '../../lib/catalog/namespaces/list.js';
import { readQuotas, RECOUNT_INTERVAL_MS, reserveQuota, SETTLE_MS, type QuotaDefaults } from '../../lib/catalog/quotas.js';
import { PROJECT_CACHE_MS } from '../../lib/catalog/control/project-cache.js';
import { setProjectLimits } from '../../lib/catalog/control/limits.js';
import { keys } from '../../lib/registry/keys.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

let fixtures: ServicesFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.map((f) => f.cleanup()));
  fixtures = [];
});
async function fixture(kind: 'memory' | 'fs', options: Parameters<typeof servicesOver>[1] = {}) {
  const f = await servicesOver(kind, options);
  fixtures.push(f);
  return f;
}

/** What the router does around a create door: reserve, run, hand the slot back on a refusal. */
async function create(services: CatalogServices, name: string, defaults: QuotaDefaults): Promise<'created' | 'quota' | 'exists'> {
  const hold = await reserveQuota(services, 'namespaces', keys.namespace(services.project, [name]), defaults).catch((err: unknown) => {
    if (err instanceof QuotaExceededError) return 'quota' as const;
    throw err;
  });
  if (hold === 'quota') return 'quota';
  try {
    await createNamespace(services, { id: [name], mode: 'create', properties: {} });
    return 'created';
  } catch (err) {
    await hold?.failed(err);
    if ((err as { code?: number }).code === 2) return 'exists';
    throw err;
  }
}

const count = async (services: CatalogServices) => (await listNamespaces(services, { id: [] })).namespaces.length;

/** A clock the test moves: quotas read time through services.now(). */
function clocked(services: CatalogServices) {
  let t = Date.parse('2026-12-02T12:00:00Z');
  return { services: { ...services, now: () => new Date(t) } as CatalogServices, advance: (ms: number) => (t += ms) };
}

describe('object quotas', () => {
  it('16 concurrent creates against a quota of 10 admit exactly 10, on random interleavings (memory store)', async () => {
    for (let round = 0; round < 25; round++) {
      const { services, direct } = await fixture('memory', { jitterTurns: 4 });
      const limit = 1 + (round % 10);
      const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => create(services, `n${i}`, { namespaces: limit, tables: 0 })));
      expect(outcomes.filter((o) => o === 'created').length, `round ${round}: ${outcomes}`).toBe(limit);
      expect(outcomes.filter((o) => o === 'quota').length).toBe(16 - limit);
      expect(await count(direct)).toBe(limit);
    }
  });

  it('16 concurrent creates against a quota of 10 admit exactly 10 on the filesystem store (real concurrency)', async () => {
    for (let round = 0; round < 3; round++) {
      const { services, direct } = await fixture('fs');
      const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => create(services, `n${i}`, { namespaces: 10, tables: 0 })));
      expect(outcomes.filter((o) => o === 'created').length, String(outcomes)).toBe(10);
      expect(await count(direct)).toBe(10);
      expect((await readQuotas(direct, undefined, { namespaces: 10, tables: 0 })).namespaces).toMatchObject({ limit: 10, source: 'default', in_use: 10 });
    }
  });

  it('a refusal writes nothing and names the quota; a drop frees its slot at the next recount, at most one per interval', async () => {
    const f = await fixture('memory');
    const { services, advance } = clocked(f.services);
    const q = { namespaces: 3, tables: 0 };
    for (const n of ['a', 'b', 'c']) expect(await create(services, n, q)).toBe('created');
    const usage = keys.quota('default', 'namespaces');
    const before = await services.registry.store.get(usage);
    const refused = await reserveQuota(services, 'namespaces', keys.namespace('default', ['d']), q).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QuotaExceededError);
    expect((refused as QuotaExceededError).message).toMatch(/project "default" has reached its quota of 3 namespaces \(3 in use or being created\).*POST \/v1\/limits/);
    expect((refused as QuotaExceededError).code).toBe(15);
    expect((await services.registry.store.get(usage))?.etag).toBe(before?.etag);

    advance(SETTLE_MS);
    // This refusal recounts (nothing dropped yet) and still writes nothing.
    expect(await create(services, 'd', q)).toBe('quota');
    expect((await services.registry.store.get(usage))?.etag).toBe(before?.etag);
    await dropNamespace(services, { id: ['a'], mode: 'fail', behavior: 'restrict' });
    // Within the interval no second scan: the drop is not seen yet.
    advance(RECOUNT_INTERVAL_MS - 1);
    expect(await create(services, 'd', q)).toBe('quota');
    advance(1);
    expect(await create(services, 'd', q)).toBe('created');
    expect(await create(services, 'e', q)).toBe('quota');
    expect(await count(services)).toBe(3);
  });

  it('an object created and dropped within SETTLE_MS keeps its slot until then (a recount cannot tell it from a create still running)', async () => {
    const f = await fixture('memory');
    const { services, advance } = clocked(f.services);
    const q = { namespaces: 2, tables: 0 };
    for (const n of ['a', 'b']) expect(await create(services, n, q)).toBe('created');
    await dropNamespace(services, { id: ['a'], mode: 'fail', behavior: 'restrict' });
    advance(RECOUNT_INTERVAL_MS);
    expect(await create(services, 'c', q)).toBe('quota');
    advance(SETTLE_MS - RECOUNT_INTERVAL_MS);
    expect(await create(services, 'c', q)).toBe('created');
  });

  it('a create refused by its door (already exists) gives its slot back at once', async () => {
    const { services } = await fixture('memory');
    const q = { namespaces: 2, tables: 0 };
    expect(await create(services, 'a', q)).toBe('created');
    expect(await create(services, 'a', q)).toBe('exists');
    expect(await create(services, 'b', q)).toBe('created');
    expect(await create(services, 'c', q)).toBe('quota');
  });

  it('a recount keeps the slot of a create still running, and forgets it once it cannot be', async () => {
    const f = await fixture('memory');
    const { services, advance } = clocked(f.services);
    const q = { namespaces: 2, tables: 0 };
    expect(await create(services, 'a', q)).toBe('created');
    // A create that reserved and has not written yet (or crashed before writing).
    await reserveQuota(services, 'namespaces', keys.namespace('default', ['slow']), q);
    advance(RECOUNT_INTERVAL_MS);
    expect(await create(services, 'b', q)).toBe('quota');
    advance(SETTLE_MS);
    expect(await create(services, 'b', q)).toBe('created');
    expect(await count(services)).toBe(2);
  });

  it("a project's own quota overrides the default, counts what exists when set, and null goes back to the default", async () => {
    const f = await fixture('memory');
    const { services, advance } = clocked(f.services);
    const none = { namespaces: 0, tables: 0 };
    // Created under no quota: nothing counted, nothing written.
    for (const n of ['a', 'b']) expect(await create(services, n, none)).toBe('created');
    expect(await services.registry.store.get(keys.quota('default', 'namespaces'))).toBeUndefined();
    expect((await setProjectLimits(services, { namespaces: 3 })).namespaces).toEqual({ limit: 3, source: 'project', in_use: 2 });
    expect(await create(services, 'c', none)).toBe('created');
    expect(await create(services, 'd', none)).toBe('quota');
    // Until no process can still hold the old setting, every create recounts: one made meanwhile
    // without a slot (another process under no quota) is seen at once.
    await createNamespace(services, { id: ['uncounted'], mode: 'create', properties: {} });
    await dropNamespace(services, { id: ['a'], mode: 'fail', behavior: 'restrict' });
    advance(PROJECT_CACHE_MS + SETTLE_MS);
    expect(await create(services, 'd', none)).toBe('quota');
    expect((await setProjectLimits(services, { namespaces: null })).namespaces).toEqual({ limit: null, source: 'default', in_use: null });
    expect(await create(services, 'd', none)).toBe('created');
    // A default that comes into force later starts from a recount, never from a stale count.
    expect(await create(services, 'e', { namespaces: 5, tables: 0 })).toBe('created');
    expect(await create(services, 'f', { namespaces: 5, tables: 0 })).toBe('quota');
  });
});
