import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { ObjectStoreIdempotency } from '../../lib/registry/idempotency-records.js';
import { createS3Fake } from '../support/s3-fake.js';
import { runIdempotencyStoreContract } from './idempotency-store.suite.js';

// Locally: the registry's directory.
runIdempotencyStoreContract('on the filesystem store (the local server)', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'rask-idem-'));
  return { store: new ObjectStoreIdempotency(new FsObjectStore(root)), cleanup: () => rm(root, { recursive: true, force: true }) };
});

// On AWS: the registry bucket, with S3's conditional writes.
runIdempotencyStoreContract('on the S3 store (the Lambda functions), over the S3 fake', async () => {
  const fake = createS3Fake();
  return { store: new ObjectStoreIdempotency(new S3ObjectStore({ client: fake.client, bucket: 'registry', prefix: 'registry' })), cleanup: async () => fake.mock.restore() };
});

runIdempotencyStoreContract('on the memory store', async () => ({ store: new ObjectStoreIdempotency(new MemoryObjectStore()) }));
