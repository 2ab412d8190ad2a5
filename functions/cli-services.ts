/**
 * What the `rask` CLI's commands run against besides the local data directory: the S3 registry
 * (`--registry-bucket`), with credentials from the usual AWS environment.
 */
import { randomUUID } from 'node:crypto';
import type { CatalogServices } from '../lib/catalog/services.js';
import { noCredentials } from '../lib/ports/credential-vendor.js';
import type { StorageRoot } from '../lib/ports/storage-root.js';
import { Registry } from '../lib/registry/registry.js';

export interface S3Registry {
  readonly bucket: string;
  readonly prefix: string;
  readonly region?: string;
}

/** Services over the S3 registry: warehouses' storage is reached as their records say. */
export async function s3Services(s3: S3Registry, project: string, warehouse: string): Promise<CatalogServices> {
  const { S3Client } = await import('@aws-sdk/client-s3');
  const { S3ObjectStore } = await import('../lib/adapters/aws/s3-object-store.js');
  const { FsObjectStore } = await import('../lib/adapters/local/fs-object-store.js');
  const client = new S3Client(s3.region ? { region: s3.region } : {});
  return {
    registry: new Registry(new S3ObjectStore({ client, bucket: s3.bucket, prefix: s3.prefix })),
    project,
    defaultWarehouse: warehouse,
    storageFor: (root: StorageRoot) =>
      root.kind === 's3' ? new S3ObjectStore({ client, bucket: root.bucket, prefix: root.prefix }) : new FsObjectStore(root.path),
    vendor: noCredentials,
    // The registry is never a warehouse's (the orphan scan's backstop, lib/catalog/storage-claims.ts).
    reservedRoots: [{ kind: 's3', bucket: s3.bucket, prefix: s3.prefix }],
    now: () => new Date(),
    newId: () => randomUUID(),
  };
}


/** The S3 registry's history: its bucket's object versions (lib/adapters/aws/s3-registry-history.ts). */
export async function s3History(s3: S3Registry, retainedDays: number) {
  const { S3Client } = await import('@aws-sdk/client-s3');
  const { s3RegistryHistory } = await import('../lib/adapters/aws/s3-registry-history.js');
  return s3RegistryHistory({ client: new S3Client(s3.region ? { region: s3.region } : {}), bucket: s3.bucket, prefix: s3.prefix, retainedDays });
}
