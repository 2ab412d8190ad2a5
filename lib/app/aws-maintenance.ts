import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { awsJobSettings } from './aws-jobs.js';
import { createS3Client } from './aws-s3.js';
import { S3ObjectStore } from '../adapters/aws/s3-object-store.js';
import type { CatalogServices } from '../catalog/services.js';
import type { AwsConfig } from '../config.js';
import { InternalError } from '../errors.js';
import { noCredentials } from '../ports/credential-vendor.js';
import type { ObjectStore } from '../ports/object-store.js';
import { keys } from '../registry/keys.js';
import { LAYOUT_VERSION } from '../registry/layout.js';
import type { WarehouseRecord } from '../registry/records.js';
import type { StorageRoot } from '../ports/storage-root.js';
import { awsStorage } from './storage.js';
import { Registry } from '../registry/registry.js';

/**
 * Services for the scheduled maintenance functions (functions/maintenance-*.ts). Unlike the API
 * composition (./aws.ts) this writes nothing at start-up: reconcile and the orphan scan run with
 * read-only roles unless repair / delete is enabled, so they only check that the registry's
 * layout is one they understand. They vend no credentials.
 */
export async function createMaintenanceServices(config: AwsConfig, client: S3Client = createS3Client(config)): Promise<CatalogServices> {
  const conflictAttempts = config.RASK_S3_CONFLICT_ATTEMPTS;
  const registry = new Registry(new S3ObjectStore({ client, bucket: config.RASK_REGISTRY_BUCKET, prefix: config.RASK_REGISTRY_PREFIX, conflictAttempts }));
  const layout = await registry.read<{ version: number }>(keys.layout());
  if (!layout) throw new InternalError('the registry has no layout record: deploy and start the catalog before its maintenance');
  if (layout.value.version !== LAYOUT_VERSION) {
    throw new InternalError(`registry layout ${layout.value.version} is not the one this function understands (${LAYOUT_VERSION})`);
  }
  const stores = new Map<string, ObjectStore>();
  const storageFor = (root: StorageRoot): ObjectStore => {
    if (root.kind !== 's3') throw new Error(`the AWS deployment only has S3 storage, not ${root.kind}`);
    const id = `${root.bucket}/${root.prefix}`;
    let store = stores.get(id);
    if (!store) stores.set(id, (store = new S3ObjectStore({ client, bucket: root.bucket, prefix: root.prefix, conflictAttempts })));
    return store;
  };
  const jobs = awsJobSettings(config);
  // The deleting passes' backstops (lib/catalog/storage-claims.ts) need the declared storage and
  // the default warehouse's root as recorded (an older deployment's may be the whole prefix).
  const { reservedRoots, warehouseRoot, storageRoots } = awsStorage(config);
  const platform = await registry.read<WarehouseRecord>(keys.warehouse(config.RASK_PROJECT, config.RASK_WAREHOUSE));
  return {
    registry,
    project: config.RASK_PROJECT,
    defaultWarehouse: config.RASK_WAREHOUSE,
    storageFor,
    vendor: noCredentials,
    reservedRoots,
    storage: { roots: storageRoots, platformWarehouse: platform?.value.storage ?? warehouseRoot },
    ...(jobs ? { jobs } : {}),
    now: () => new Date(),
    newId: () => randomUUID(),
  };
}
