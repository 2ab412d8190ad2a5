import { afterEach, describe, expect, it } from 'vitest';
import { decodeIpc } from '../../lib/data/arrow.js';
import { datasetState } from '../../lib/adapters/lance/maintenance.js';
import { jobContext } from '../../lib/queue/context.js';
import { indexBuild, makeIndexBuilder, type IndexFinding } from '../../lib/maintenance/index-builder.js';
import { setPolicy } from '../support/policy.js';
import { ipcRows } from '../data/fixtures.js';
import { estate, openClient, tableWithAppends, type Estate } from './fixtures.js';

let current: Estate | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const findings = (report: { items: readonly Readonly<Record<string, unknown>>[] }) =>
  Object.fromEntries(((report.items[0].indices as IndexFinding[]) ?? []).map((f) => [f.name, f]));

describe('index builder', () => {
  it('builds missing scalar indices, queues large vector builds as jobs once, folds past the threshold, reports health', async () => {
    const e = (current = await estate('fs'));
    const services = { ...e.services, dataLimits: { maxResultBytes: 1 << 20, maxSyncVectorIndexRows: 10 } };
    const { location } = await tableWithAppends(services, ['a', 't'], 3, 100);
    await setPolicy(services, { level: 'namespace', id: ['a'] }, {
      policy: {
        fold_threshold: 0.1,
        indices: [
          { name: 'id_idx', column: 'id', type: 'BTREE' },
          { name: 'vec_idx', column: 'vec', type: 'IVF_PQ', params: { num_partitions: 2, num_sub_vectors: 2 } },
          { name: 'text_idx', column: 'text', type: 'BITMAP', min_rows: 1000 },
        ],
      },
    });

    const first = await indexBuild(services, {});
    expect(first.problems).toEqual([]);
    const f1 = findings(first);
    expect(f1.id_idx.action).toBe('built');
    expect(f1.vec_idx.action).toBe('queued');
    expect(f1.text_idx).toMatchObject({ action: 'waiting-for-rows' });
    expect(first.items[0].policy_source).toMatchObject({ level: 'namespace', id: ['a'] });
    const live = await jobContext(services).queue.listLive({ limit: 100 });
    expect(live.jobs.map((j) => [j.value.type, j.value.params.name, j.value.status])).toEqual([['create_index', 'vec_idx', 'Queued']]);
    expect(f1.vec_idx.transaction_id).toBe(live.jobs[0].value.id);
    const built = (await datasetState(location)).indices.find((i) => i.index_name === 'id_idx');
    expect(built).toMatchObject({ columns: ['id'], num_indexed_rows: 300, num_unindexed_rows: 0 });

    // Second run: healthy, and the queued build is not queued again.
    const second = findings(await indexBuild(services, {}));
    expect(second.id_idx).toMatchObject({ health: 'HEALTHY', action: 'none' });
    expect(second.vec_idx.action).toBe('already-queued');
    expect((await jobContext(services).queue.listLive({ limit: 100 })).jobs).toHaveLength(1);

    // 100 new rows are 25 % of the index: past the 10 % threshold, so they are folded in.
    const client = await openClient(location);
    await client.add(decodeIpc(ipcRows(100, 300)));
    client.close();
    const third = findings(await indexBuild(services, {}));
    expect(third.id_idx).toMatchObject({ health: 'NEEDS_FOLD', unindexed_rows: 100, action: 'folded' });
    const after = (await datasetState(location)).indices.find((i) => i.index_name === 'id_idx');
    expect(after).toMatchObject({ num_indexed_rows: 400, num_unindexed_rows: 0 });
  });

  it('without compaction, rebuilds a declared scalar index to fold it, and a client\'s own one from the definition it records on first sight', async () => {
    const e = (current = await estate('fs'));
    const { location } = await tableWithAppends(e.services, ['a', 't'], 1, 100);
    await setPolicy(e.services, { level: 'table', id: ['a', 't'] }, {
      policy: { compact_enabled: false, indices: [{ name: 'id_idx', column: 'id', type: 'BTREE' }] },
    });
    await indexBuild(e.services, {});
    const client = await openClient(location);
    await client.createIndex('text', { name: 'text_idx' }); // a client's own index: the policy does not know it
    await client.add(decodeIpc(ipcRows(100, 100)));
    client.close();
    const f = findings(await indexBuild(e.services, {}));
    expect(f.id_idx).toMatchObject({ health: 'NEEDS_FOLD', action: 'folded' });
    // The policy does not know it, but the pass records its definition on first sight (#33 item 3) and rebuilds from that.
    expect(f.text_idx).toMatchObject({ health: 'NEEDS_FOLD', action: 'folded', definition: 'discovered' });
    const state = await datasetState(location);
    expect(state.fragments).toBe(2); // nothing compacted
    const byName = Object.fromEntries(state.indices.map((i) => [i.index_name, i]));
    expect(byName.id_idx).toMatchObject({ num_indexed_rows: 200, num_unindexed_rows: 0 });
    expect(byName.text_idx).toMatchObject({ num_indexed_rows: 200, num_unindexed_rows: 0 });
  });

  it('reports an index whose statistics cannot be read as UNKNOWN, never healthy, and stores the report', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ['a', 't'], 1);
    const builder = makeIndexBuilder({
      datasetState: async () => ({
        version: 1,
        fragments: 1,
        rows: 10,
        bytes: 1,
        versions: [],
        indices: [{ index_name: 'broken', index_uuid: 'u', columns: ['id'], status: 'unknown', index_type: 'BTREE' }],
      }),
      compactAndFold: async () => {
        throw new Error('must not fold an index it cannot read');
      },
      rebuildIndex: async () => {
        throw new Error('must not rebuild an index it cannot read');
      },
      createIndex: async () => {
        throw new Error('nothing to build');
      },
      distanceType: async () => undefined,
      dropIndex: async () => {
        throw new Error('nothing to drop');
      },
    });
    const report = await builder(e.services, {});
    expect(findings(report).broken).toMatchObject({ health: 'UNKNOWN', action: 'none' });
    expect(report.summary).toMatchObject({ indices_unknown: 1, indices_healthy: 0 });
    expect(report.reportKey).toMatch(/^reports\/index\//);
  });
});
