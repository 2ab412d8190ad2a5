import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../functions/cli.js';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { datasetState } from '../../lib/adapters/lance/maintenance.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import { ensureDefaults, ensureLayout } from '../../lib/registry/layout.js';
import { Registry } from '../../lib/registry/registry.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';
import { tableWithAppends } from './fixtures.js';

/**
 * `rask maintenance … --registry-bucket`: the CLI against an S3 registry, in-process so the S3
 * fake intercepts the client the CLI constructs. The dataset is on local disk (its warehouse
 * root is a directory): LanceDB cannot reach an in-process fake.
 */
describe('rask CLI with an S3 registry (through the S3 fake)', () => {
  let fake: S3Fake;
  let dir: string;
  let location: string;
  let registryStore: S3ObjectStore;
  beforeAll(async () => {
    fake = createS3Fake({ target: S3Client });
    dir = await mkdtemp(path.join(tmpdir(), 'rask-cli-s3-'));
    registryStore = new S3ObjectStore({ client: new S3Client({ region: 'us-east-1' }), bucket: 'reg', prefix: 'registry/' });
    const registry = new Registry(registryStore);
    await ensureLayout(registry);
    const root = { kind: 'file' as const, path: path.join(dir, 'warehouse') };
    await ensureDefaults(registry, { project: 'default', warehouse: 'default', storage: root, managedVersioning: true, trashGraceDays: 0 });
    const services: CatalogServices = {
      registry,
      project: 'default',
      defaultWarehouse: 'default',
      storageFor: (r) => new FsObjectStore(r.kind === 'file' ? r.path : '/nonexistent'),
      vendor: noCredentials,
      now: () => new Date(),
      newId: () => randomUUID(),
    };
    ({ location } = await tableWithAppends(services, ['s', 't'], 5));
  });
  afterAll(async () => {
    fake.mock.restore();
    await rm(dir, { recursive: true, force: true });
  });

  it('sweeps the tables the S3 registry names and writes its report there', async () => {
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
    let code: number;
    try {
      code = await main(['maintenance', 'sweep', '--registry-bucket', 'reg', '--region', 'us-east-1', '--older-than-days', '0', '--json']);
    } finally {
      log.mockRestore();
    }
    expect(code).toBe(0);
    const report = JSON.parse(out.join('\n'));
    expect(report.summary).toMatchObject({ tables_visited: 1, fragments_before: 5, fragments_after: 1 });
    expect((await datasetState(location)).fragments).toBe(1);
    const reports = [...fake.bucketContents('reg').keys()].filter((k) => k.startsWith('registry/reports/sweep/'));
    expect(reports).toEqual([`registry/${report.reportKey}`]);
  });
});
