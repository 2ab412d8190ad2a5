import { describe, expect, it } from 'vitest';
import { listIndices } from '../../lib/adapters/lance/indexes.js';

type Table = Parameters<typeof listIndices>[0];

/** Rule 14 (docs/rules.md): an index whose statistics cannot be read is UNKNOWN, never reported healthy. */
describe('index status', () => {
  const tableListing = (entries: object[]) => ({ listIndices: async () => entries }) as unknown as Table;
  const base = { name: 'v_idx', indexType: 'IvfPq', columns: ['v'], indexUuid: 'u1' };

  it('is done when the row counts were read', async () => {
    const { indexes } = await listIndices(tableListing([{ ...base, numIndexedRows: 10, numUnindexedRows: 0 }]), {});
    expect(indexes[0]).toMatchObject({ index_name: 'v_idx', status: 'done', num_indexed_rows: 10 });
  });

  it('is unknown when they could not be read', async () => {
    const { indexes } = await listIndices(tableListing([{ ...base }]), {});
    expect(indexes[0]).toMatchObject({ index_name: 'v_idx', status: 'unknown', index_type: 'IVF_PQ' });
    expect(indexes[0].num_indexed_rows).toBeUndefined();
  });
});
