/**
 * Real LanceDB datasets behind real catalog records, for the maintenance passes' tests. The
 * registry runs on the filesystem store or on the stateful S3 fake; the datasets are always on
 * local disk, because LanceDB talks to storage from native code over HTTP and cannot reach an
 * in-process aws-sdk-client-mock fake.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { decodeIpc } from '../../lib/data/arrow.js';
import { loadLanceDb, type Connection } from '../../lib/adapters/lance/lancedb.js';
import { parseLocation } from '../../lib/data/location.js';
import { isManifestKey, namedPaths } from '../../lib/maintenance/dataset-refs.js';
import { readManifestRefs } from '../../lib/maintenance/lance-manifest.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { ensureDefaults, ensureLayout } from '../../lib/registry/layout.js';
import { Registry } from '../../lib/registry/registry.js';
import { ipcRows } from '../data/fixtures.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';

export type RegistryKind = 'fs' | 's3-fake';

export interface Estate {
  readonly services: CatalogServices;
  readonly registryStore: ObjectStore;
  readonly dir: string;
  cleanup(): Promise<void>;
}

export async function estate(kind: RegistryKind, now: () => Date = () => new Date()): Promise<Estate> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rask-maint-'));
  let fake: S3Fake | undefined;
  const registryStore: ObjectStore =
    kind === 'fs'
      ? new FsObjectStore(path.join(dir, 'registry'))
      : new S3ObjectStore({ client: (fake = createS3Fake()).client, bucket: 'registry-bucket', prefix: 'registry/' });
  const registry = new Registry(registryStore);
  await ensureLayout(registry);
  const root = { kind: 'file' as const, path: path.join(dir, 'warehouse') };
  await ensureDefaults(registry, { project: 'default', warehouse: 'default', storage: root, managedVersioning: false, trashGraceDays: 0 });
  const stores = new Map<string, ObjectStore>();
  const services: CatalogServices = {
    registry,
    project: 'default',
    defaultWarehouse: 'default',
    storageFor: (r) => {
      if (r.kind !== 'file') throw new Error('file warehouses only');
      let s = stores.get(r.path);
      if (!s) stores.set(r.path, (s = new FsObjectStore(r.path)));
      return s;
    },
    vendor: noCredentials,
    now,
    newId: () => randomUUID(),
  };
  return {
    services,
    registryStore,
    dir,
    cleanup: async () => {
      fake?.mock.restore();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A connection of its own, as a separate client process would have. */
export function clientConnection(location: string): Promise<Connection> {
  return loadLanceDb().connect(parseLocation(location).parent, {
    readConsistencyInterval: 0,
    manifestEnabled: false,
    namespaceClientProperties: { manifest_enabled: 'false' },
  });
}

/** Namespace + declared table + `writes` commits of `rows` rows each (the first creates it). */
export async function tableWithAppends(
  services: CatalogServices,
  id: readonly string[],
  writes: number,
  rows = 10,
): Promise<{ location: string }> {
  for (let i = 1; i < id.length; i++) {
    await createNamespace(services, { id: id.slice(0, i), mode: 'exist_ok', properties: {} });
  }
  const { location } = await declareTable(services, { id, properties: {}, identity: {} });
  if (writes === 0) return { location };
  const db = await clientConnection(location);
  const name = parseLocation(location).name;
  const table = await db.createTable(name, decodeIpc(ipcRows(rows, 0)));
  for (let w = 1; w < writes; w++) await table.add(decodeIpc(ipcRows(rows, w * rows)));
  table.close();
  return { location };
}

export async function openClient(location: string) {
  const db = await clientConnection(location);
  return db.openTable(parseLocation(location).name);
}

/**
 * A dataset's files on disk (path relative to its root → bytes) and the ones its committed
 * manifests keep: the manifests themselves and Lance's version hint, tags and branches
 * (`_refs/`), and everything a manifest names (data, deletion and transaction files, every file
 * of a named index directory). After a sweep the two must be the same set (docs/maintenance.md,
 * "What a sweep reclaims"); `missing` lists what a manifest names that is not on disk.
 */
export async function diskAgainstManifests(location: string): Promise<{ onDisk: Map<string, number>; kept: Set<string>; missing: string[] }> {
  const onDisk = new Map<string, number>();
  for (const e of await readdir(location, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    onDisk.set(path.relative(location, file), (await stat(file)).size);
  }
  const named = new Set<string>();
  const kept = new Set<string>();
  for (const rel of onDisk.keys()) {
    if (rel.startsWith('_refs/') || /(^|\/)_versions\/latest_version_hint\.json$/.test(rel)) kept.add(rel);
    if (!isManifestKey(rel)) continue;
    kept.add(rel);
    for (const p of namedPaths(readManifestRefs(await readFile(path.join(location, rel))))) named.add(p);
  }
  for (const rel of onDisk.keys()) {
    const index = /^_indices\/[^/]+/.exec(rel)?.[0];
    if (named.has(index ?? rel)) kept.add(rel);
  }
  const missing = [...named].filter((p) => !onDisk.has(p) && ![...onDisk.keys()].some((k) => k.startsWith(`${p}/`)));
  return { onDisk, kept, missing };
}
