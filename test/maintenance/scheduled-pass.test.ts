/**
 * The scheduled pass functions (functions/maintenance-*.ts through lib/app/scheduled-pass.ts):
 * their switches come from the validated configuration, a bad value fails the invocation naming
 * the variable, and a failed start-up is tried again by the next invocation. The entries run
 * in-process against the S3 fake, which intercepts the clients they construct.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { scheduledPass } from '../../lib/app/scheduled-pass.js';
import type { PassOptions, PassReport } from '../../lib/maintenance/pass.js';
import { ensureDefaults, ensureLayout } from '../../lib/registry/layout.js';
import { Registry } from '../../lib/registry/registry.js';
import { lambdaContext } from '../support/lambda-context.js';
import { createS3Fake, type S3Fake } from '../support/s3-fake.js';

const ENV = { AWS_REGION: 'us-east-1', RASK_REGISTRY_BUCKET: 'reg', RASK_WAREHOUSE_BUCKET: 'wh-b', RASK_LOG_LEVEL: 'silent' };

async function seed(prefix: string): Promise<void> {
  const registry = new Registry(new S3ObjectStore({ client: new S3Client({ region: 'us-east-1' }), bucket: 'reg', prefix }));
  await ensureLayout(registry);
  const storage = { kind: 's3' as const, bucket: 'wh-b', prefix: 'warehouse/default/' };
  await ensureDefaults(registry, { project: 'default', warehouse: 'default', storage, managedVersioning: true, trashGraceDays: 0 });
}

const entries = {
  reconcile: () => import('../../functions/maintenance-reconcile.js'),
  orphans: () => import('../../functions/maintenance-orphans.js'),
};

/** The entry module as a fresh container loads it, with `env` as its environment. */
async function entry(name: keyof typeof entries, env: Record<string, string>) {
  vi.resetModules();
  vi.unstubAllEnvs();
  for (const [k, v] of Object.entries({ ...ENV, ...env })) vi.stubEnv(k, v);
  return entries[name]();
}

describe('scheduled pass functions', () => {
  let fake: S3Fake;
  beforeAll(async () => {
    fake = createS3Fake({ target: S3Client });
    await seed('registry/');
  });
  afterAll(() => fake.mock.restore());
  afterEach(() => vi.unstubAllEnvs());

  it('reconcile repairs only when RASK_RECONCILE_REPAIR=true', async () => {
    // Only a repairing run counts its repairs (lib/maintenance/reconcile.ts).
    const repairing = await (await entry('reconcile', { RASK_RECONCILE_REPAIR: 'true' })).handler({}, lambdaContext());
    expect(repairing).toMatchObject({ pass: 'reconcile', summary: { repaired: 0 } });
    const reporting = await (await entry('reconcile', {})).handler({}, lambdaContext());
    expect(reporting.pass).toBe('reconcile');
    expect(reporting.summary).not.toHaveProperty('repaired');
  });

  it('refuses a bad switch by name before the pass runs', async () => {
    const orphans = await entry('orphans', { RASK_ORPHANS_DELETE: 'yes' });
    await expect(orphans.handler({}, lambdaContext())).rejects.toThrow('RASK_ORPHANS_DELETE: must be true or false');
    // A fresh module graph: its own ConfigError class, so by name.
    await expect(orphans.handler({}, lambdaContext())).rejects.toMatchObject({ name: 'ConfigError' });
  });

  it('hands the pass its fixed options with the cursor and deadline, and retries a failed start-up', async () => {
    const seen: PassOptions[] = [];
    const idle = async (_s: unknown, options: PassOptions): Promise<PassReport> => {
      seen.push(options);
      const at = new Date().toISOString();
      return { pass: 'orphans', startedAt: at, finishedAt: at, complete: true, summary: {}, items: [], problems: [] };
    };
    // A registry prefix with no layout yet: the start-up fails, and must not stick.
    const env = { ...ENV, RASK_REGISTRY_PREFIX: 'late/', RASK_ORPHANS_DELETE: 'true' };
    const { handler } = scheduledPass({ name: 'orphans', pass: idle, options: (c) => ({ delete: c.RASK_ORPHANS_DELETE }) }, env);
    await expect(handler({}, lambdaContext())).rejects.toThrow(/no layout record/);
    expect(seen).toEqual([]);
    await seed('late/');
    await expect(handler({}, lambdaContext({ getRemainingTimeInMillis: () => 120_000 }))).resolves.toMatchObject({ pass: 'orphans', items: 0 });
    expect(seen).toHaveLength(1);
    expect(seen[0].delete).toBe(true);
    // The deadline is a minute before the function's timeout.
    expect(seen[0].deadline).toBeGreaterThan(Date.now() + 50_000);
    expect(seen[0].deadline).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('appends a run that did material work to the change log as its maintenance.<pass>.completed event; an idle run says nothing', async () => {
    const at = new Date().toISOString();
    const base = { pass: 'orphans' as const, startedAt: at, finishedAt: at, complete: true, problems: [] };
    let items: Record<string, unknown>[] = [];
    const { handler } = scheduledPass({ name: 'orphans', pass: async () => ({ ...base, summary: { candidates: items.length }, items }) }, { ...ENV, RASK_REGISTRY_PREFIX: 'registry/' });
    const store = new S3ObjectStore({ client: new S3Client({ region: 'us-east-1' }), bucket: 'reg', prefix: 'registry/' });
    const logged = async () => {
      const listed = await store.list({ prefix: 'changes/' });
      return Promise.all(listed.objects.map(async (o) => JSON.parse((await store.get(o.key))!.body.toString('utf8')) as { type: string; data: Record<string, unknown> }));
    };
    const before = (await logged()).length;
    await expect(handler({}, lambdaContext())).resolves.toMatchObject({ items: 0, report: undefined });
    expect(await logged()).toHaveLength(before);
    items = [{ key: 'warehouse/default/stray.bin' }];
    const run = await handler({}, lambdaContext());
    const events = (await logged()).slice(before);
    expect(events.map((e) => [e.type, e.data.kind, e.data.request_id, (e.data.details as { report?: string }).report])).toEqual([
      ['dev.rask.maintenance.orphans.completed', 'maintenance', run.report, run.report],
    ]);
  });
});
