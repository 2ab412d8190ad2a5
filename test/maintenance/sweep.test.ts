import type { RaskEvent } from '../../lib/events/cloudevent.js';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { datasetState } from '../../lib/adapters/lance/maintenance.js';
import { decodeIpc } from '../../lib/data/arrow.js';
import { setPolicy } from '../support/policy.js';
import { REPORTS_PREFIX } from '../../lib/maintenance/reports.js';
import { makeSweep, sweep, type SweepItem } from '../../lib/maintenance/sweep.js';
import { keys } from '../../lib/registry/keys.js';
import type { LocationClaimRecord, TableRecord } from '../../lib/registry/records.js';
import { ipcRows } from '../data/fixtures.js';
import { diskAgainstManifests, estate, openClient, tableWithAppends, type Estate, type RegistryKind } from './fixtures.js';

let current: Estate | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const itemOf = (report: { items: readonly Readonly<Record<string, unknown>>[] }, name: string) =>
  report.items.find((i) => (i.table as string[]).join('.') === name) as SweepItem;

async function storedReports(e: Estate) {
  const page = await e.registryStore.list({ prefix: REPORTS_PREFIX });
  return Promise.all(page.objects.map(async (o) => JSON.parse((await e.registryStore.get(o.key))!.body.toString('utf8'))));
}

describe.each<RegistryKind>(['fs', 's3-fake'])('sweep (registry on %s, datasets on local disk)', (kind) => {
  it('20 appends of 10 rows: after a sweep ≤ 2 fragments, rows unchanged, old versions reclaimed except the tagged one', async () => {
    const e = (current = await estate(kind));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 20);
    const client = await openClient(location);
    await (await client.tags()).create('keep', 5);
    client.close();
    const before = await datasetState(location);
    expect(before.fragments).toBe(20);
    expect(before.versions.length).toBe(20);

    // Change events (docs/events.md): one for the run that did material work, none for an idle one.
    const events: RaskEvent[] = [];
    const services = { ...e.services, events: { stats: { published: 0, retried: 0, failed: 0 }, publish: async (batch: readonly RaskEvent[]) => void events.push(...batch) } };
    const report = await sweep(services, { overrides: { olderThanDays: 0 } });
    expect(report.problems).toEqual([]);
    expect(events.map((x) => [x.type, x.data.details?.report])).toEqual([['dev.rask.maintenance.sweep.completed', report.reportKey]]);
    const item = itemOf(report, 'a.t');
    expect(item.steps?.compact.status).toBe('done');
    expect(item.steps?.cleanup).toMatchObject({ status: 'done', protected_tags: [{ name: 'keep', version: 5 }], limited_by_tags: [{ name: 'keep', version: 5 }] });
    expect(item.policy_source).toEqual({ level: 'builtin' });
    expect(item.overrides).toEqual({ older_than_days: 0 });

    const after = await datasetState(location);
    expect(after.fragments).toBeLessThanOrEqual(2);
    expect(after.rows).toBe(200);
    expect(item).toMatchObject({ fragments_before: 20, fragments_after: after.fragments, rows_before: 200, rows_after: 200 });
    // Only the tagged version and the latest are left.
    expect(after.versions.map((v) => v.version)).toEqual([5, after.version]);
    // Every version but those two: the 20 writes' and the compaction's own commits.
    expect(item.versions_removed).toBeGreaterThanOrEqual(before.versions.length - 1);
    const tagged = await openClient(location);
    await tagged.checkout('keep');
    expect(await tagged.countRows()).toBe(50);
    tagged.close();
    // The versions between the tag and the latest lost their manifests by hand (stage 2): the
    // files only they named are gone too, at once; the tag's and the latest's stay.
    const disk = await diskAgainstManifests(location);
    expect([...disk.onDisk.keys()].sort()).toEqual([...disk.kept].sort());
    expect(disk.missing).toEqual([]);
    expect(item.steps?.cleanup.files_removed).toBeGreaterThan(0);

    expect(report.material).toBe(true);
    expect(report.reportKey).toMatch(/^reports\/sweep\/\d{4}-\d{2}-\d{2}\//);
    const stored = await storedReports(e);
    expect(stored).toHaveLength(1);
    expect(stored[0].items).toHaveLength(1);

    // An idle run stores its summary only.
    const idle = await sweep(services, { overrides: { olderThanDays: 0 } });
    expect(idle.material).toBe(false);
    expect(events).toHaveLength(1);
    const both = await storedReports(e);
    expect(both).toHaveLength(2);
    const idleStored = both.find((r) => r.material === false);
    expect(idleStored.items).toBeUndefined();
    expect(idleStored.summary).toMatchObject({ tables_visited: 1, versions_removed: 0 });
  });

  it('without a tag in the way, Lance\'s own cleanup reclaims the old versions\' files too', async () => {
    const e = (current = await estate(kind));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 12);
    const dataFiles = async () => (await readdir(path.join(location, 'data'))).length;
    expect(await dataFiles()).toBe(12);
    const report = await makeSweep(undefined, 0)(e.services, { overrides: { olderThanDays: 0 } });
    const item = itemOf(report, 'a.t');
    expect(item.steps?.cleanup).toMatchObject({ status: 'done' });
    expect(item.steps?.cleanup.manifest_only_versions).toBeLessThan(item.versions_removed!);
    expect(await dataFiles()).toBe(1);
    const after = await datasetState(location);
    expect(after.versions.map((v) => v.version)).toEqual([after.version]);
    expect(after.rows).toBe(120);
  });

  it('with the default clock margin (versions too young for Lance\'s cutoff), no file only removed versions named is left', async () => {
    const e = (current = await estate(kind));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 12);
    const report = await sweep(e.services, { overrides: { olderThanDays: 0 } });
    const item = itemOf(report, 'a.t');
    expect(item.steps?.cleanup).toMatchObject({ status: 'done' });
    const after = await datasetState(location);
    expect(after.versions.map((v) => v.version)).toEqual([after.version]);
    const disk = await diskAgainstManifests(location);
    expect([...disk.onDisk.keys()].sort()).toEqual([...disk.kept].sort());
    expect([...disk.onDisk.keys()].filter((k) => k.startsWith('data/'))).toHaveLength(1);
    expect(after.rows).toBe(120);
  });

  it('a policy disabling compaction skips exactly that step', async () => {
    const e = (current = await estate(kind));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 6);
    const client = await openClient(location);
    await client.createIndex('id', { name: 'id_idx' });
    await client.add(decodeIpc(ipcRows(10, 60)));
    client.close();
    const versionsBefore = (await datasetState(location)).versions.length;
    await setPolicy(e.services, { level: 'table', id: ['a', 't'] }, {
      policy: { compact_enabled: false, older_than_days: 0, indices: [{ name: 'id_idx', column: 'id', type: 'BTREE' }] },
    });
    // Setting a policy is a registry write: the dataset gains no version.
    expect((await datasetState(location)).versions.length).toBe(versionsBefore);
    const report = await sweep(e.services, {});
    const item = itemOf(report, 'a.t');
    expect(item.policy_source).toMatchObject({ level: 'table', id: ['a', 't'] });
    expect(item.steps?.compact).toEqual({ status: 'skipped', reason: 'disabled by the effective policy' });
    // The other two steps still run: the index is folded (by a rebuild) and old versions go.
    expect(item.steps?.optimize_indices).toMatchObject({ status: 'done', method: 'rebuild', rebuilt: ['id_idx'] });
    expect(item.steps?.cleanup.status).toBe('done');
    const after = await datasetState(location);
    expect(after.fragments).toBe(7);
    expect(after.rows).toBe(70);
    expect(after.indices[0]).toMatchObject({ index_name: 'id_idx', num_indexed_rows: 70, num_unindexed_rows: 0 });
    expect(after.versions.map((v) => v.version)).toEqual([after.version]);
  });
});

describe('sweep: what it never touches', () => {
  it('skips moving, purging and declared-only tables with the reason, and leaves their bytes alone', async () => {
    const e = (current = await estate('fs'));
    const moving = await tableWithAppends(e.services, ['a', 'moving'], 3);
    const purging = await tableWithAppends(e.services, ['a', 'purging'], 3);
    await tableWithAppends(e.services, ['a', 'declared'], 0);
    const reg = e.services.registry;
    const mk = keys.table('default', ['a', 'moving']);
    const rec = (await reg.read<TableRecord>(mk))!;
    await reg.replace(mk, { ...rec.value, state: 'moving', move: { nonce: 'n', to: ['a', 'elsewhere'] } }, rec.etag);
    const pr = (await reg.read<TableRecord>(keys.table('default', ['a', 'purging'])))!.value;
    const ck = keys.locationClaim('default', pr.warehouse, pr.path);
    const claim = (await reg.read<LocationClaimRecord>(ck))!;
    await reg.replace(ck, { ...claim.value, state: 'purging' }, claim.etag);

    const report = await sweep(e.services, { overrides: { olderThanDays: 0 } });
    expect(itemOf(report, 'a.moving')).toMatchObject({ skipped: 'moving' });
    expect(itemOf(report, 'a.purging')).toMatchObject({ skipped: 'purging' });
    expect(itemOf(report, 'a.declared')).toMatchObject({ skipped: 'declared-only' });
    for (const loc of [moving.location, purging.location]) {
      const s = await datasetState(loc);
      expect(s.fragments).toBe(3);
      expect(s.versions.length).toBe(3);
    }
    expect(report.material).toBe(false);
  });

  it('scopes to a namespace subtree or one table, and stops at a deadline with a cursor to resume from', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 'x'], 2);
    await tableWithAppends(e.services, ['a', 'b', 'y'], 2);
    await tableWithAppends(e.services, ['c', 'z'], 2);
    const names = (r: { items: readonly Readonly<Record<string, unknown>>[] }) => r.items.map((i) => (i.table as string[]).join('.'));
    expect(names(await sweep(e.services, { scope: { namespace: ['a'] }, dryRun: true }))).toEqual(['a.x', 'a.b.y']);
    expect(names(await sweep(e.services, { scope: { table: ['c', 'z'] }, dryRun: true }))).toEqual(['c.z']);
    const stopped = await sweep(e.services, { dryRun: true, deadline: 0 });
    expect(stopped.cursor).toBeUndefined();
    expect(stopped.items).toEqual([]);
    expect(stopped.complete).toBe(false);
    // Stop after the first unit: the deadline passes while it is visited.
    let deadline = Number.MAX_SAFE_INTEGER;
    const first = await sweep(e.services, { dryRun: true, get deadline() { return deadline; }, onProgress: () => { deadline = 0; } });
    expect(names(first)).toEqual(['a.x']);
    expect(first.cursor).toBeDefined();
    const rest = await sweep(e.services, { dryRun: true, cursor: first.cursor });
    expect(names(rest)).toEqual(['a.b.y', 'c.z']);
    expect(rest.cursor).toBeUndefined();
  });
});

describe('sweep: target_rows_per_fragment is the compaction trigger', () => {
  const compactStep = (report: { items: readonly Readonly<Record<string, unknown>>[] }) => itemOf(report, 'a.t').steps!.compact;

  it('skips compaction while at most one fragment is below the target, and compacts once more are', async () => {
    const e = (current = await estate('fs'));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 5); // five fragments of 10 rows
    await setPolicy(e.services, { level: 'table', id: ['a', 't'] }, { policy: { target_rows_per_fragment: 10, cleanup_enabled: false } });
    const atTarget = await sweep(e.services, {});
    expect(compactStep(atTarget)).toMatchObject({ status: 'skipped', reason: 'fragments already at target', target_rows_per_fragment: 10, fragments: 5, small_fragments: 0 });
    expect((await datasetState(location)).fragments).toBe(5);

    // Deleted rows count: one fragment down to 5 live rows is one small fragment, still no compaction.
    const client = await openClient(location);
    await client.delete('id < 5');
    expect(compactStep(await sweep(e.services, {}))).toMatchObject({ status: 'skipped', small_fragments: 1 });
    // A second one makes two: compaction runs.
    await client.delete('id >= 10 AND id < 13');
    client.close();
    const compacted = await sweep(e.services, {});
    expect(compactStep(compacted)).toMatchObject({ status: 'done', target_rows_per_fragment: 10, fragments: 5, small_fragments: 2 });
    const after = await datasetState(location);
    expect(after.fragments).toBeLessThan(5);
    expect(after.rows).toBe(42);
  });

  it('with a larger target the same fragments are small, and a dry run says it would compact', async () => {
    const e = (current = await estate('fs'));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 5);
    await setPolicy(e.services, { level: 'table', id: ['a', 't'] }, { policy: { target_rows_per_fragment: 11, cleanup_enabled: false } });
    expect(compactStep(await sweep(e.services, { dryRun: true }))).toMatchObject({ status: 'would-run', small_fragments: 5 });
    expect(compactStep(await sweep(e.services, {}))).toMatchObject({ status: 'done', small_fragments: 5 });
    expect((await datasetState(location)).fragments).toBe(1);
  });
});

describe('sweep: interval_minutes', () => {
  it('skips a table the sweep changed less than the policy\'s interval ago, and sweeps it once due', async () => {
    let clock = Date.parse('2026-06-01T00:00:00Z');
    const e = (current = await estate('fs', () => new Date(clock)));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 3);
    await setPolicy(e.services, { level: 'table', id: ['a', 't'] }, { policy: { interval_minutes: 60, older_than_days: 0 } });
    expect(itemOf(await sweep(e.services, {}), 'a.t').steps?.compact.status).toBe('done');
    const client = await openClient(location);
    await client.add(decodeIpc(ipcRows(10, 100)));
    client.close();
    clock += 30 * 60_000;
    expect(itemOf(await sweep(e.services, {}), 'a.t')).toMatchObject({ skipped: 'interval' });
    expect((await datasetState(location)).fragments).toBe(2);
    clock += 31 * 60_000;
    expect(itemOf(await sweep(e.services, {}), 'a.t').steps?.compact).toMatchObject({ status: 'done', fragments_removed: 2 });
  });
});

describe('sweep concurrent with client writers', () => {
  it('loses no row while 4 writers append', async () => {
    const e = (current = await estate('fs'));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 10);
    const WRITERS = 4;
    const APPENDS = 8;
    // Gate: the sweep starts only once every writer has committed at least once, so the sweep's
    // commits really interleave with theirs.
    let started = 0;
    let release!: () => void;
    const allStarted = new Promise<void>((r) => (release = r));
    // With a cutoff of "now" (olderThanDays 0) the cleanup may reclaim the version an append read
    // while that append is still committing on top of it: the append then fails without writing
    // (Lance cannot find the base manifest) and a client retries it, as docs/maintenance.md says
    // ("How young a version may be reclaimed"). Any other failure fails the test, and the counts
    // below would show a retried append that had committed after all (its ids twice).
    const append = async (t: Awaited<ReturnType<typeof openClient>>, start: number) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await t.add(decodeIpc(ipcRows(10, start)));
        } catch (err) {
          if (attempt >= 3 || !/_versions\/\d+\.manifest not found/.test(String(err))) throw err;
        }
      }
    };
    const writer = async (w: number) => {
      const t = await openClient(location);
      for (let i = 0; i < APPENDS; i++) {
        await append(t, 10_000 * (w + 1) + i * 10);
        if (i === 0 && ++started === WRITERS) release();
      }
      t.close();
    };
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    await allStarted;
    const report = await sweep(e.services, { overrides: { olderThanDays: 0 } });
    await Promise.all(writers);
    expect(report.problems).toEqual([]);
    expect(itemOf(report, 'a.t').steps?.compact.status).toBe('done');
    const t = await openClient(location);
    expect(await t.countRows()).toBe(100 + WRITERS * APPENDS * 10);
    for (let w = 0; w < WRITERS; w++) {
      expect(await t.countRows(`id >= ${10_000 * (w + 1)} AND id < ${10_000 * (w + 1) + APPENDS * 10}`)).toBe(APPENDS * 10);
    }
    t.close();
  });
});
