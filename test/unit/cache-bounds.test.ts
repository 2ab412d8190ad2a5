/**
 * Per-process caches outside the data plane stay bounded (docs/architecture.md, "Caches and their
 * bounds"; issue #36): filling each one past its bound evicts. The data plane's own (LanceDB
 * session, kept handles, connections) are in test/data/memory-bounds.test.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { cachedProject, cachedProjects, MAX_CACHED_PROJECTS } from '../../lib/catalog/control/project-cache.js';
import { cachedPrincipal, cachedPrincipals, MAX_CACHED_PRINCIPALS } from '../../lib/catalog/control/principal-cache.js';
import type { Registry } from '../../lib/registry/registry.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { cachedWarehouses, MAX_CACHED_WAREHOUSES, requireWarehouse } from '../../lib/catalog/warehouses.js';

const preparedIds = vi.hoisted(() => new Set<string>());
vi.mock('@cedar-policy/cedar-wasm/nodejs', async (importOriginal) => {
  const cedar = await importOriginal<typeof import('@cedar-policy/cedar-wasm/nodejs')>();
  return {
    ...cedar,
    preparsePolicySet: (id: string, policies: Parameters<typeof cedar.preparsePolicySet>[1]) => {
      preparedIds.add(id);
      return cedar.preparsePolicySet(id, policies);
    },
  };
});
const { authorize, MAX_POLICY_SETS } = await import('../../lib/governance/policy-engine.js');

describe('filesystem store caches', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-bounds-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  // Written behind the store's back (as another process would): fsync'd puts are slow in bulk.
  const fill = async (prefix: string, n: number) => {
    mkdirSync(path.join(dir, prefix), { recursive: true });
    for (let i = 0; i < n; i++) writeFileSync(path.join(dir, prefix, String(i).padStart(4, '0')), 'x');
    const past = new Date('2020-01-01T00:00:00Z'); // settled: the listing may be cached
    await utimes(path.join(dir, ...prefix.split('/')), past, past);
  };

  it('listings hold at most the configured number of entries between them, oldest dropped first', async () => {
    const store = new FsObjectStore(dir, { listingCacheChildren: 600 });
    for (const d of ['a', 'b', 'c']) await fill(d, 260);
    await fill('huge', 610);
    for (const d of ['a', 'b']) await store.list({ prefix: `${d}/`, limit: 10 });
    expect(store.cacheUse()).toMatchObject({ listings: 2, listedChildren: 520 });
    await store.list({ prefix: 'c/', limit: 10 });
    // c pushed a out: 780 entries would be over the bound.
    expect(store.cacheUse()).toMatchObject({ listings: 2, listedChildren: 520 });
    // A directory larger than the whole bound is listed, never cached.
    const huge = await store.list({ prefix: 'huge/', limit: 1000 });
    expect(huge.objects).toHaveLength(610);
    expect(store.cacheUse().listedChildren).toBeLessThanOrEqual(600);
  });

  it('small bodies: at most 1,024 of at most 16 KiB each', async () => {
    const store = new FsObjectStore(dir);
    mkdirSync(path.join(dir, 'k'));
    for (let i = 0; i < 1100; i++) writeFileSync(path.join(dir, 'k', String(i)), `value ${i}`);
    for (let i = 0; i < 1100; i++) await store.get(`k/${i}`);
    writeFileSync(path.join(dir, 'big'), Buffer.alloc(16 * 1024 + 1));
    await store.get('big');
    const use = store.cacheUse();
    expect(use.bodies).toBe(1024);
    expect(use.bodyBytes).toBeLessThanOrEqual(1024 * 16 * 1024);
  });
});

describe('warehouse cache', () => {
  it(`keeps at most ${MAX_CACHED_WAREHOUSES} warehouse records per registry, least recently read dropped first`, async () => {
    const reads: string[] = [];
    const registry = {
      read: async (key: string) => {
        reads.push(key);
        return { value: { kind: 'warehouse', name: key, storage: { kind: 'file', path: `/w/${key}` } }, etag: '"1"' };
      },
    } as unknown as Registry;
    const services = (project: string) => ({ registry, project, fileRootBase: undefined }) as unknown as CatalogServices;
    await requireWarehouse(services('p'), 'first');
    for (let i = 0; i < MAX_CACHED_WAREHOUSES + 50; i++) {
      await requireWarehouse(services(`p${i % 7}`), `w${i}`);
      if (i % 100 === 0) await requireWarehouse(services('p'), 'first'); // kept warm
    }
    expect(cachedWarehouses(registry)).toBe(MAX_CACHED_WAREHOUSES);
    const before = reads.length;
    await requireWarehouse(services('p'), 'first');
    expect(reads.length).toBe(before); // still cached
    await requireWarehouse(services('p0'), 'w0');
    expect(reads.length).toBe(before + 1); // the oldest was dropped
    await requireWarehouse(services('p'), 'first', { strict: true });
    expect(reads.length).toBe(before + 2); // strict reads always go to the registry
  });
});

describe('project cache', () => {
  it(`keeps at most ${MAX_CACHED_PROJECTS} projects per registry, least recently read dropped first`, async () => {
    const reads: string[] = [];
    const registry = {
      read: async (key: string) => {
        reads.push(key);
        return { value: { kind: 'project', name: key }, etag: '"1"' };
      },
    } as unknown as Registry;
    await cachedProject(registry, 'p-first');
    for (let i = 0; i < MAX_CACHED_PROJECTS + 50; i++) {
      await cachedProject(registry, `p${i}`);
      if (i % 100 === 0) await cachedProject(registry, 'p-first'); // kept warm: recently read
    }
    expect(cachedProjects(registry)).toBe(MAX_CACHED_PROJECTS);
    const before = reads.length;
    await cachedProject(registry, 'p-first');
    await cachedProject(registry, `p${MAX_CACHED_PROJECTS + 49}`);
    expect(reads.length).toBe(before); // both still cached
    await cachedProject(registry, 'p0');
    expect(reads.length).toBe(before + 1); // the oldest was dropped
  });
});

describe('principal cache', () => {
  it(`keeps at most ${MAX_CACHED_PRINCIPALS} principals per registry, a missing one too (one read per 30 s, not per request)`, async () => {
    const reads: string[] = [];
    const registry = {
      read: async (key: string) => {
        reads.push(key);
        return key.endsWith('nobody') ? undefined : { value: { kind: 'principal', name: key }, etag: '"1"' };
      },
    } as unknown as Registry;
    for (let i = 0; i < MAX_CACHED_PRINCIPALS + 50; i++) await cachedPrincipal(registry, `u${i}`);
    expect(cachedPrincipals(registry)).toBe(MAX_CACHED_PRINCIPALS);
    const before = reads.length;
    expect(await cachedPrincipal(registry, 'nobody')).toBeUndefined();
    expect(await cachedPrincipal(registry, 'nobody')).toBeUndefined();
    expect(reads.length).toBe(before + 1);
    await cachedPrincipal(registry, 'u0');
    expect(reads.length).toBe(before + 2); // the oldest was dropped
  });
});

describe('Cedar policy sets', () => {
  it(`never hold more than ${MAX_POLICY_SETS} in the engine, however many distinct grant lists it meets`, async () => {
    const project = { type: 'Project', id: 'p' } as const;
    const tableOf = (i: number) => ({ type: 'Table', id: `t${i}` }) as const;
    const ask = (grantOn: number, target: number) =>
      authorize({
        principal: 'alice',
        platformAdmin: false,
        action: 'table:read',
        target: { resource: tableOf(target), ancestors: [project, { type: 'Platform', id: 'rask' }] },
        grants: [{ grant: { role: 'reader', scope: { kind: 'table', id: [`t${grantOn}`] } }, on: tableOf(grantOn) }],
        quarantined: false,
      });
    for (let i = 0; i < MAX_POLICY_SETS + 40; i++) expect((await ask(i, i)).allowed).toBe(true);
    expect(preparedIds.size).toBeLessThanOrEqual(MAX_POLICY_SETS);
    // The first lists were evicted and their ids reused: asked again, they decide as before.
    expect((await ask(0, 0)).allowed).toBe(true);
    expect((await ask(0, 1)).allowed).toBe(false);
    expect((await ask(MAX_POLICY_SETS + 39, MAX_POLICY_SETS + 39)).allowed).toBe(true);
    expect(preparedIds.size).toBeLessThanOrEqual(MAX_POLICY_SETS);
  });
});
