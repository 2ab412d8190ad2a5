/**
 * The orphan scan on real LanceDB datasets on local disk (several versions, deletions, a scalar
 * index, a tag): nothing a dataset reaches is reported; each exclusion has a test that fails
 * when the exclusion is removed; leftovers are reported with size and age; deleting re-checks.
 * Files are aged with utimes, so "older than the grace period" needs no clock games.
 */
import { createRequire } from 'node:module';
import { cp, mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { readManifestRefs } from '../../lib/maintenance/lance-manifest.js';
import { orphanScanWith, type OrphanCandidate } from '../../lib/maintenance/orphans.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

const lancedb = createRequire(import.meta.url)('@lancedb/lancedb') as typeof import('@lancedb/lancedb');

const DAY = 86_400_000;
const scan = orphanScanWith({ graceMs: DAY });

let f: ServicesFixture;
let s: CatalogServices;
let root: string;

/** Every file under `dir`, made `days` old. */
async function age(dir: string, days: number): Promise<void> {
  const t = new Date(Date.now() - days * DAY);
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) await utimes(path.join(entry.parentPath, entry.name), t, t);
  }
}

async function plant(rel: string, body = 'x', days = 10): Promise<void> {
  const file = path.join(root, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, body);
  const t = new Date(Date.now() - days * DAY);
  await utimes(file, t, t);
}

/** The manifest with a BasePath (field 18: {path = 4}) appended to its message. */
function withExternalBase(file: Buffer): Buffer {
  const pos = Number(file.readBigInt64LE(file.length - 16));
  const len = file.readUInt32LE(pos);
  const url = Buffer.from('s3://elsewhere/base');
  const basePath = Buffer.concat([Buffer.from([0x22, url.length]), url]);
  const message = Buffer.concat([file.subarray(pos + 4, pos + 4 + len), Buffer.from([0x92, 0x01, basePath.length]), basePath]);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(message.length);
  return Buffer.concat([file.subarray(0, pos), length, message, file.subarray(pos + 4 + len)]);
}

const keysOf = (items: readonly Readonly<Record<string, unknown>>[]) => items.map((i) => i.key as string).sort();

beforeAll(async () => {
  f = await servicesOver('fs');
  s = f.services;
  root = (s.storageFor({ kind: 'file', path: '' }) as unknown as { root?: string }).root ?? '';
  const warehouse = (await s.registry.read<{ storage: { path: string } }>(keys.warehouse(s.project, 'default')))!.value;
  root = warehouse.storage.path;
  // A real dataset: five versions, deletion files, a scalar index, a tag on version 2.
  const db = await lancedb.connect(path.join(root, 'ds'));
  const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, text: `w${i}` }));
  const t = await db.createTable('t', rows);
  await t.add(rows.slice(0, 50));
  await t.delete('id < 5');
  await t.createIndex('id');
  await (await t.tags()).create('keep', 2);
  await t.add(rows.slice(0, 10));
  await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
  await registerTable(s, { id: ['a', 't'], location: 'ds/t.lance', mode: 'create', properties: {} });
  await age(root, 10);
}, 60_000);

afterAll(() => f?.cleanup());

// Each test plants its own files under its own names; earlier plants are removed before every test
// (in both describes), so the manifest-vs-disk and healthy-warehouse checks see only LanceDB's files.
beforeEach(async () => {
  const store = s.storageFor({ kind: 'file', path: root });
  for (const k of (await store.list({})).objects.map((o) => o.key)) {
    if (/orphan|leftover|reserved|\.blob$|manifest-|fresh/.test(k)) await store.delete(k);
  }
});

describe('the orphan scan on a real dataset', () => {
  it('reads every file a manifest names (parser checked against the files LanceDB wrote)', async () => {
    const dir = path.join(root, 'ds/t.lance');
    const manifests = (await readdir(path.join(dir, '_versions'))).filter((n) => n.endsWith('.manifest'));
    const named = new Set<string>();
    const transactions: string[] = [];
    for (const m of manifests) {
      const r = readManifestRefs(await readFile(path.join(dir, '_versions', m)));
      expect(r.externalBases).toBe(false);
      for (const x of [...r.files, ...r.indexDirs]) named.add(x);
      if (r.transaction) transactions.push(r.transaction);
    }
    const all = (await readdir(dir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
    const onDisk = all
      .filter((p) => /^(data|_deletions|_indices)\//.test(p))
      .map((p) => (p.startsWith('_indices/') ? p.split('/').slice(0, 2).join('/') : p));
    expect([...named].sort()).toEqual([...new Set(onDisk)].sort());
    // Each version names its own transaction file (the sweep reclaims it with the version).
    expect(transactions.sort()).toEqual(all.filter((p) => p.startsWith('_transactions/')).sort());
    expect(transactions).toHaveLength(manifests.length);
    expect([...named].some((p) => p.startsWith('_deletions/'))).toBe(true);
    expect([...named].some((p) => p.startsWith('_indices/'))).toBe(true);
  });

  it('reports nothing in a healthy warehouse, counts transaction files separately, and writes nothing', async () => {
    const r = await scan(s, {});
    expect(r.complete).toBe(true);
    expect(r.items).toEqual([]);
    expect(r.summary.transactions).toBeGreaterThanOrEqual(5);
    expect(r.summary['excluded.tag-or-branch']).toBe(1);
    expect(r.summary.objects).toBeGreaterThan(10);
  });
});

describe('orphan scan exclusions and candidates', () => {
  it('reports an unreferenced data file and an unreferenced folder, with size and age', async () => {
    await plant('ds/t.lance/data/orphan-0001.lance', 'twelve bytes');
    await plant('leftover/x.lance/data/a.lance', 'abc');
    const r = await scan(s, {});
    const items = r.items as unknown as OrphanCandidate[];
    expect(keysOf(r.items)).toEqual(['ds/t.lance/data/orphan-0001.lance', 'leftover/x.lance/data/a.lance']);
    expect(items.find((i) => i.key.startsWith('ds/'))).toMatchObject({ reason: 'unreferenced-file', dataset: 'ds/t.lance', size: 12 });
    expect(items.find((i) => i.key.startsWith('leftover/'))).toMatchObject({ reason: 'unreferenced-folder', size: 3 });
    for (const i of items) expect(i.ageDays).toBeGreaterThanOrEqual(9.9);
    expect(r.summary.candidateBytes).toBe(15);
  });

  it('never reports a tag (_refs/tags/*.json)', async () => {
    // The real dataset's tag file: it is in the listing, and reported only without the exclusion.
    const r = await scan(s, {});
    expect((await readdir(path.join(root, 'ds/t.lance/_refs/tags')))).toEqual(['keep.json']);
    expect(keysOf(r.items)).toEqual([]);
  });

  it('never reports .lance-reserved', async () => {
    await plant('ds/t.lance/.lance-reserved', '');
    expect(keysOf((await scan(s, {})).items)).toEqual([]);
  });

  it('never reports a blob sidecar (data/<stem>/*.blob)', async () => {
    const stem = (await readdir(path.join(root, 'ds/t.lance/data')))[0].replace(/\.lance$/, '');
    await plant(`ds/t.lance/data/${stem}/0001.blob`, 'blob bytes');
    const r = await scan(s, {});
    expect(keysOf(r.items)).toEqual([]);
    expect(r.summary['excluded.blob-sidecar']).toBe(1);
  });

  it('takes a staging manifest once past the grace period (CreateTableVersion leaves them)', async () => {
    const key = 'ds/t.lance/_versions/3.manifest-2f7c1a9e-aaaa-bbbb-cccc-0123456789ab';
    await plant(key, 'staged', 10);
    const r = await scan(s, {});
    expect(r.items).toEqual([expect.objectContaining({ key, reason: 'stale-staging-manifest', dataset: 'ds/t.lance' })]);
    await scan(s, { delete: true });
    expect(await s.storageFor({ kind: 'file', path: root }).head(key)).toBeUndefined();
    expect(keysOf((await scan(s, {})).items)).toEqual([]);
  });

  it('never reports a staging manifest within the grace period', async () => {
    await plant('ds/t.lance/_versions/3.manifest-2f7c1a9e-aaaa-bbbb-cccc-0123456789ab', 'staged', 0);
    const r = await scan(s, {});
    expect(keysOf(r.items)).toEqual([]);
    expect(r.summary['excluded.staging-manifest']).toBe(1);
  });

  it('never reports anything younger than the grace period', async () => {
    await plant('ds/t.lance/data/fresh-write.lance', 'in flight', 0);
    await plant('leftover-fresh/y.lance/data/b.lance', 'in flight', 0);
    const r = await scan(s, {});
    expect(keysOf(r.items)).toEqual([]);
    expect(r.summary['excluded.young']).toBe(2);
  });

  it('deletes only with delete: true, re-checking each candidate first', async () => {
    await plant('leftover/gone.lance/data/a.lance');
    await plant('leftover/rewritten.lance/data/b.lance');
    expect(keysOf((await scan(s, { dryRun: true, delete: true })).items)).toHaveLength(2);
    expect(keysOf((await scan(s, {})).items)).toHaveLength(2);
    // Between the scan and the delete, one candidate is written again (a writer reused it).
    const base = s.storageFor({ kind: 'file', path: root });
    const rewriting: ObjectStore = new Proxy(base, {
      get(target, prop, receiver) {
        if (prop === 'head') {
          return async (key: string) => {
            if (key.includes('rewritten')) await writeFile(path.join(root, key), 'new');
            return target.head(key);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const r = await scan({ ...s, storageFor: () => rewriting }, { delete: true });
    const items = r.items as unknown as OrphanCandidate[];
    expect(items.find((i) => i.key.includes('gone'))).toMatchObject({ deleted: true });
    expect(items.find((i) => i.key.includes('rewritten'))).toMatchObject({ kept: expect.stringMatching(/young/) });
    expect(await base.head('leftover/gone.lance/data/a.lance')).toBeUndefined();
    expect(await base.head('leftover/rewritten.lance/data/b.lance')).toBeDefined();
    // The real dataset is whole.
    const db = await lancedb.connect(path.join(root, 'ds'));
    expect(await (await db.openTable('t')).countRows()).toBe(350); // 300 + 50, ids 0–4 deleted (twice over), + 10
  });

  it('refuses a dataset with external base paths: no candidate of its warehouse is reported', async () => {
    // A copy of the dataset whose newest manifest names an external base (as a shallow clone's does).
    await cp(path.join(root, 'ds/t.lance'), path.join(root, 'clone/c.lance'), { recursive: true });
    await registerTable(s, { id: ['a', 'clone'], location: 'clone/c.lance', mode: 'create', properties: {} });
    const dir = path.join(root, 'clone/c.lance/_versions');
    const newest = (await readdir(dir)).filter((n) => n.endsWith('.manifest')).sort()[0];
    await writeFile(path.join(dir, newest), withExternalBase(await readFile(path.join(dir, newest))));
    await plant('leftover/x.lance/data/a.lance');
    try {
      const r = await scan(s, {});
      expect(r.complete).toBe(false);
      expect(r.items).toEqual([]);
      expect(r.summary.refusedDatasets).toBe(1);
      expect(r.problems.join('\n')).toMatch(/clone\/c\.lance.*external base paths/);
    } finally {
      await dropTable(s, ['a', 'clone']);
    }
  });

  it('reports an unreadable bucket as incomplete, never as an empty scan', async () => {
    const broken: ObjectStore = new Proxy(s.storageFor({ kind: 'file', path: root }), {
      get(target, prop, receiver) {
        if (prop === 'list') return async () => Promise.reject(new Error('AccessDenied'));
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await plant('leftover/z.lance/data/a.lance');
    const r = await scan({ ...s, storageFor: () => broken }, {});
    expect(r.complete).toBe(false);
    expect(r.items).toEqual([]);
    expect(r.problems.join('\n')).toMatch(/could not be listed.*AccessDenied/);
  });

  it('reports an unreadable registry as incomplete, and then reports no candidates for it', async () => {
    await plant('leftover/z.lance/data/a.lance');
    const key = keys.table(s.project, ['a', 'broken']);
    await s.registry.store.put(key, '{not json');
    try {
      const r = await scan(s, {});
      expect(r.complete).toBe(false);
      expect(r.items).toEqual([]);
    } finally {
      await s.registry.store.delete(key);
    }
  });
});
