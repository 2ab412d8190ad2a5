// @covers ListTableVersions, DescribeTableVersion, CreateTableVersion, BatchDeleteTableVersions
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { storePath } from '../../lib/catalog/dataset/version-chain.js';
import { createTableVersion } from '../../lib/catalog/tables/version-create.js';
import { deleteTableVersions } from '../../lib/catalog/tables/version-delete.js';
import { describeTableVersion, listTableVersions } from '../../lib/catalog/tables/versions.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { CatalogError } from '../../lib/errors.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import type { StorageRoot } from '../../lib/ports/storage-root.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { finalKey, outcome, stageManifest } from '../support/versions.js';

/**
 * Managed versioning on local disk, through the catalog functions themselves: the FsObjectStore
 * is the same store the local server hands the official client's commits to.
 */
describe('managed versioning (fs store)', () => {
  let f: ServicesFixture;
  let svc: CatalogServices;
  let store: ObjectStore;
  let root: StorageRoot;
  let tablePath: string;
  const id = ['ns', 't'];

  beforeEach(async () => {
    f = await servicesOver('fs');
    svc = f.services;
    await createNamespace(svc, { id: ['ns'], mode: 'create', properties: {} });
    await declareTable(svc, { id, properties: {}, identity: {} });
    tablePath = (await readTable(svc, id))!.value.path;
    root = (await svc.registry.read<WarehouseRecord>(keys.warehouse(svc.project, svc.defaultWarehouse)))!.value.storage;
    store = svc.storageFor(root);
  });
  afterEach(() => f.cleanup());

  /** A client commit: stage, then version/create with the staging path as the client names it. */
  async function commit(version: number, body: string, options: { branch?: string } = {}) {
    const staged = await stageManifest(store, tablePath, version, body, options);
    return createTableVersion(svc, {
      id,
      version,
      manifestPath: storePath(root, staged.key),
      manifestSize: staged.size,
      namingScheme: 'V2',
      ...options,
    });
  }
  const code = (p: Promise<unknown>) => outcome(p);

  it('a declared table with no data lists no versions, and describes none', async () => {
    expect(await listTableVersions(svc, { id, descending: true, limit: 1 })).toEqual({ versions: [] });
    expect(await code(describeTableVersion(svc, { id, version: 1 }))).toBe(11);
    expect(await code(describeTableVersion(svc, { id }))).toBe(11);
    expect(await code(listTableVersions(svc, { id: ['ns', 'missing'], descending: true }))).toBe(4);
  });

  it('copies the staging manifest to the final name and answers the final path, true size, etag, timestamp', async () => {
    const staged = await stageManifest(store, tablePath, 1, 'manifest-one');
    const res = await createTableVersion(svc, { id, version: 1, manifestPath: storePath(root, staged.key), manifestSize: 12 });
    const final = await store.get(finalKey(tablePath, 1));
    expect(final?.body.toString()).toBe('manifest-one');
    // The staging file stays (no DELETE on the commit path): the orphan scan takes it later.
    expect((await store.get(staged.key))?.body.toString()).toBe('manifest-one');
    expect(res.version).toEqual({
      version: 1,
      manifest_path: storePath(root, finalKey(tablePath, 1)),
      manifest_size: 12,
      e_tag: final!.etag,
      timestamp_millis: final!.lastModified.getTime(),
    });
    // Object-store relative, as the client sent it: no leading slash, ends in the V2 name.
    expect(res.version.manifest_path.startsWith('/')).toBe(false);
    expect(res.version.manifest_path.endsWith(`/_versions/${manifestName(1, 'V2')}`)).toBe(true);
    // Read-your-writes: the very next latest-lookup sees it, identically.
    expect((await listTableVersions(svc, { id, descending: true, limit: 1 })).versions).toEqual([res.version]);
    expect((await describeTableVersion(svc, { id, version: 1 })).version).toEqual(res.version);
  });

  it('treats an identical retry as success and a different manifest for a taken version as 14', async () => {
    const first = await commit(1, 'same-bytes');
    const retry = await commit(1, 'same-bytes');
    expect(retry.version.manifest_path).toBe(first.version.manifest_path);
    expect(await code(commit(1, 'other-bytes'))).toBe(14);
    expect((await store.get(finalKey(tablePath, 1)))?.body.toString()).toBe('same-bytes');
  });

  it('a retry after a lost answer succeeds while its staging file is there; once the orphan scan took it, 14 (local etags are not content hashes)', async () => {
    // The S3 suite covers the other half: there the client's etag is the content md5 and proves
    // the committed manifest is its own.
    const staged = await stageManifest(store, tablePath, 1, 'lost-response');
    const input = { id, version: 1, manifestPath: storePath(root, staged.key), manifestSize: staged.size };
    const first = await createTableVersion(svc, input);
    expect(await createTableVersion(svc, input)).toEqual(first);
    await store.delete(staged.key); // what the orphan scan does past its grace period
    expect(await code(createTableVersion(svc, input))).toBe(14);
    expect(await code(createTableVersion(svc, { ...input, eTag: '"not-it"' }))).toBe(14);
  });

  it('enforces strict CAS: the next version is latest + 1, and 1 on an empty chain', async () => {
    expect(await code(commit(2, 'too-early'))).toBe(14);
    await commit(1, 'v1');
    expect(await code(commit(3, 'gap'))).toBe(14);
    await commit(2, 'v2');
    expect((await listTableVersions(svc, { id, descending: true })).versions.map((v) => v.version)).toEqual([2, 1]);
  });

  it('refuses staging paths that are not this table\u2019s staging file for this version (13)', async () => {
    const staged = await stageManifest(store, tablePath, 1, 'x');
    const bad = async (manifestPath: string, extra: object = {}) =>
      code(createTableVersion(svc, { id, version: 1, manifestPath, ...extra }));
    expect(await bad(storePath(root, finalKey(tablePath, 1)))).toBe(13); // final name, not staging
    expect(await bad(storePath(root, staged.key).replace(manifestName(1, 'V2'), manifestName(2, 'V2')))).toBe(13);
    expect(await bad(storePath(root, staged.key).replace(tablePath, 'tables/elsewhere/u.lance'))).toBe(13);
    expect(await bad('/etc/passwd')).toBe(13);
    expect(await bad(storePath(root, `${tablePath}/data/${manifestName(1, 'V2')}-x`))).toBe(13);
    expect(await bad(storePath(root, staged.key), { manifestSize: 999 })).toBe(13);
    expect(await bad(storePath(root, staged.key), { namingScheme: 'V1' })).toBe(13);
    const missing = storePath(root, staged.key).replace(/-[^-/]+$/, '-nothing-here');
    expect(await bad(missing)).toBe(13);
    expect(await store.head(finalKey(tablePath, 1))).toBeUndefined();
  });

  it('lists newest-first with one LIST for descending&limit=1, pages with exclusive version tokens', async () => {
    for (let v = 1; v <= 5; v++) await commit(v, `v${v}`);
    // Leftovers of crashed writers sort among the manifests and must be skipped.
    await stageManifest(store, tablePath, 6, 'crashed');
    await store.put(`${tablePath}/_versions/latest_version_hint.json`, '{}');

    // One listing, of names with details (S3, memory) or of names alone (the filesystem store,
    // which then reads the details of the one version answered).
    let lists = 0;
    const counting = new Proxy(store, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        return prop === 'list' || prop === 'listKeys' ? (...args: unknown[]) => (lists++, bound(...args)) : bound;
      },
    });
    const svcCounting = { ...svc, storageFor: () => counting };
    const head = await listTableVersions(svcCounting, { id, descending: true, limit: 1 });
    expect(head.versions.map((v) => v.version)).toEqual([5]);
    expect(head.page_token).toBe('5');
    expect(lists).toBe(1);

    const seen: number[] = [];
    let token: string | undefined;
    do {
      const page = await listTableVersions(svc, { id, descending: true, limit: 2, pageToken: token });
      seen.push(...page.versions.map((v) => v.version));
      token = page.page_token;
    } while (token);
    expect(seen).toEqual([5, 4, 3, 2, 1]);

    const asc = await listTableVersions(svc, { id, descending: false, limit: 2, pageToken: '2' });
    expect(asc).toMatchObject({ versions: [{ version: 3 }, { version: 4 }], page_token: '4' });
    expect((await listTableVersions(svc, { id, descending: false })).versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(await listTableVersions(svc, { id, descending: true, limit: 0 })).toEqual({ versions: [] });
    expect(await code(listTableVersions(svc, { id, descending: true, pageToken: 'abc' }))).toBe(13);
  });

  it('orders V1-named chains by version, not by name', async () => {
    for (const v of [1, 2, 9, 10, 11, 100]) await store.put(finalKey(tablePath, v, { scheme: 'V1' }), `v${v}`);
    const desc = await listTableVersions(svc, { id, descending: true });
    expect(desc.versions.map((v) => v.version)).toEqual([100, 11, 10, 9, 2, 1]);
    expect((await listTableVersions(svc, { id, descending: true, limit: 2, pageToken: '10' })).versions.map((v) => v.version)).toEqual([9, 2]);
    expect((await describeTableVersion(svc, { id, version: 10 })).version.manifest_path.endsWith('/_versions/10.manifest')).toBe(true);
    // The next commit on a V1 chain is checked against the true latest (100), not the last name.
    expect(await code(commit(12, 'x'))).toBe(14);
  });

  it('answers 22 for a branch that does not exist and reads an existing branch\u2019s own chain', async () => {
    await commit(1, 'main-1');
    expect(await code(listTableVersions(svc, { id, descending: true, branch: 'dev' }))).toBe(22);
    expect(await code(describeTableVersion(svc, { id, version: 1, branch: 'dev' }))).toBe(22);
    expect(await code(listTableVersions(svc, { id, descending: true, branch: '../x' }))).toBe(13);
    // LanceDB commits a branch's first manifest (at the parent version) before writing its ref.
    await commit(1, 'dev-1', { branch: 'dev' });
    await store.put(`${tablePath}/_refs/branches/dev.json`, JSON.stringify({ parentBranch: null, parentVersion: 1 }));
    expect(await code(commit(3, 'dev-gap', { branch: 'dev' }))).toBe(14);
    await commit(2, 'dev-2', { branch: 'dev' });
    expect((await listTableVersions(svc, { id, descending: true, branch: 'dev' })).versions.map((v) => v.version)).toEqual([2, 1]);
    expect((await listTableVersions(svc, { id, descending: true, branch: 'main' })).versions.map((v) => v.version)).toEqual([1]);
  });

  describe('BatchDeleteTableVersions', () => {
    beforeEach(async () => {
      for (let v = 1; v <= 6; v++) await commit(v, `v${v}`);
    });
    const versions = async () => (await listTableVersions(svc, { id, descending: false })).versions.map((v) => v.version);

    it('deletes [start, end) ranges and counts what it removed', async () => {
      expect(await deleteTableVersions(svc, { id, ranges: [{ start: 1, end: 3 }, { start: 4, end: 5 }] })).toEqual({ deleted_count: 3 });
      expect(await versions()).toEqual([3, 5, 6]);
      expect(await deleteTableVersions(svc, { id, ranges: [{ start: 1, end: 3 }] })).toEqual({ deleted_count: 0 });
    });

    it('refuses to delete the latest version (end -1 reaches it), deleting nothing', async () => {
      const err = await deleteTableVersions(svc, { id, ranges: [{ start: 0, end: -1 }] }).catch((e: CatalogError) => e);
      expect(err).toBeInstanceOf(CatalogError);
      expect((err as CatalogError).code).toBe(19);
      expect((err as CatalogError).message).toMatch(/version 6 .*latest/);
      expect(await versions()).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('refuses to delete a tagged version, naming the tag, deleting nothing', async () => {
      // The tag format LanceDB 0.31 writes.
      await store.put(`${tablePath}/_refs/tags/keep me.json`, JSON.stringify({ branch: null, version: 2, manifestSize: 2 }));
      await store.put(`${tablePath}/_refs/tags/on-dev.json`, JSON.stringify({ branch: 'dev', version: 3, manifestSize: 2 }));
      const err = (await deleteTableVersions(svc, { id, ranges: [{ start: 1, end: 4 }] }).catch((e) => e)) as CatalogError;
      expect(err.code).toBe(19);
      expect(err.message).toContain('"keep me" → 2');
      expect(await versions()).toEqual([1, 2, 3, 4, 5, 6]);
      // A tag on another branch does not protect main's version 3.
      expect(await deleteTableVersions(svc, { id, ranges: [{ start: 3, end: 4 }] })).toEqual({ deleted_count: 1 });
    });
  });

  it('under real concurrency, exactly one of many commits of the same version wins; the rest get 14', async () => {
    await commit(1, 'base');
    const racers = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const staged = await stageManifest(store, tablePath, 2, `writer-${i}`);
        return { i, staged };
      }),
    );
    const results = await Promise.all(
      racers.map(({ staged }) =>
        code(createTableVersion(svc, { id, version: 2, manifestPath: storePath(root, staged.key), manifestSize: staged.size })),
      ),
    );
    const winners = results.flatMap((r, i) => (r === 'ok' ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r === 14)).toHaveLength(15);
    expect((await store.get(finalKey(tablePath, 2)))?.body.toString()).toBe(`writer-${winners[0]}`);
    expect((await listTableVersions(svc, { id, descending: true })).versions.map((v) => v.version)).toEqual([2, 1]);
  });
});
