/**
 * The data-plane operations reach datasets only through the DataEngine port the composition
 * hands them (CatalogServices.data): with a counting twin in LanceDB's place, each request makes
 * exactly the engine calls its operation needs, on the table's location, and answers what the
 * engine answered. Without an engine a data operation answers a plain wiring error.
 */
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { buildApp } from '../../lib/app/build.js';
import type { Router } from '../../lib/http/router.js';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import type { DataEngine } from '../../lib/ports/data-engine.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { countingEngine } from '../support/counting-engine.js';

async function app(data?: DataEngine): Promise<Router> {
  const stores = new Map<string, ObjectStore>();
  const { router } = await buildApp({
    registryStore: new MemoryObjectStore(),
    storageFor: (root) => {
      const id = JSON.stringify(root);
      if (!stores.has(id)) stores.set(id, new MemoryObjectStore());
      return stores.get(id)!;
    },
    project: 'default',
    warehouse: 'default',
    warehouseRoot: { kind: 'file', path: '/warehouses/default' },
    managedVersioning: true,
    trashGraceDays: 0,
    handlers: allHandlers,
    maxBodyBytes: 1 << 20,
    vendor: noCredentials,
    dataLimits: { maxResultBytes: 4096, maxSyncVectorIndexRows: 10 },
    ...(data ? { data } : {}),
  });
  return router;
}

function send(router: Router, path: string, body: Buffer | object, rawQuery = '') {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' };
  return router({ method: 'POST', rawPath: path, rawQuery, headers, body: bytes, requestId: 'r' });
}

const rows = () => Buffer.from(tableToIPC(tableFromArrays({ id: Int32Array.from([1, 2]) }), 'stream'));

describe('the data plane through the DataEngine port', () => {
  it('QueryTable, CountTableRows and InsertIntoTable each make one call on the table location', async () => {
    const answer = Buffer.from('arrow file bytes');
    const twin = countingEngine({
      query: async () => answer,
      countRows: async () => 7,
      insert: async () => ({ version: 2, num_inserted_rows: 2 }),
    });
    const router = await app(twin.engine);
    const declared = await send(router, '/v1/table/t1/declare', {});
    expect(declared.status, declared.body.toString()).toBe(200);
    const { location } = JSON.parse(declared.body.toString()) as { location: string };

    const query = await send(router, '/v1/table/t1/query', { k: 3, columns: ['id'] });
    expect(query.status, query.body.toString()).toBe(200);
    expect(Buffer.from(query.body)).toEqual(answer);
    expect(twin.calls).toEqual([{ method: 'query', location, args: [expect.objectContaining({ k: 3, columns: ['id'] }), { maxBytes: 4096 }] }]);

    twin.calls.length = 0;
    const count = await send(router, '/v1/table/t1/count_rows', { predicate: 'id > 1' });
    expect(JSON.parse(count.body.toString())).toBe(7);
    expect(twin.calls).toEqual([{ method: 'countRows', location, args: [expect.objectContaining({ predicate: 'id > 1' })] }]);

    twin.calls.length = 0;
    const bytes = rows();
    const insert = await send(router, '/v1/table/t1/insert', bytes, 'mode=append');
    expect(insert.status, insert.body.toString()).toBe(200);
    expect(JSON.parse(insert.body.toString())).toMatchObject({ version: 2, num_inserted_rows: 2 });
    expect(twin.calls).toEqual([{ method: 'insert', location, args: [bytes, 'append', { branch: undefined }] }]);
  });

  it('a vector build above the synchronous limit is checked and queued, never built in the request', async () => {
    const twin = countingEngine({
      countRows: async () => 100,
      describe: async () => ({
        version: 1,
        schema: { fields: [{ name: 'v', nullable: true, type: { type: 'fixed_size_list', length: 128, fields: [] } }] } as never,
      }),
      checkIndex: async () => ({ name: 'v_idx' }),
    });
    const router = await app(twin.engine);
    const { location } = JSON.parse((await send(router, '/v1/table/t1/declare', {})).body.toString()) as { location: string };
    const res = await send(router, '/v1/table/t1/create_index', { column: 'v', index_type: 'IVF_PQ' });
    expect(res.status, res.body.toString()).toBe(200);
    expect(JSON.parse(res.body.toString())).toHaveProperty('transaction_id');
    // 100 rows of 128-d IVF_PQ is above the limit of 10: the build is queued, not run.
    expect(twin.calls.map((c) => [c.method, c.location])).toEqual([
      ['countRows', location],
      ['describe', location],
      ['checkIndex', location],
    ]);
  });

  it('a composition without an engine answers a data operation with a plain wiring error, and calls nothing', async () => {
    const router = await app();
    expect((await send(router, '/v1/table/t1/declare', {})).status).toBe(200);
    const res = await send(router, '/v1/table/t1/query', { k: 3 });
    expect(res.status).toBe(500);
    const body = JSON.parse(res.body.toString()) as { code: number; error: string };
    expect(body.code).toBe(18);
    expect(JSON.stringify(body)).toContain('no data engine');
  });
});
