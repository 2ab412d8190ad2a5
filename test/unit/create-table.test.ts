/**
 * CreateTable's data-then-record protocol (lib/catalog/tables/create.ts) with a scripted
 * dataset writer, to reach the interleavings real LanceDB writes rarely produce on demand.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { createTable, type DatasetWrite } from '../../lib/catalog/tables/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable, tableKey } from '../../lib/catalog/protocols/lookup.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { CatalogError, InvalidInputError, TableAlreadyExistsError } from '../../lib/errors.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { gateFirst } from '../support/jittery-store.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

let f: ServicesFixture;
beforeEach(async () => {
  f = await servicesOver('fs');
  await createNamespace(f.services, { id: ['ns'], mode: 'create', properties: {} });
});
afterEach(() => f.cleanup());

const input = (name: string, mode: 'create' | 'exist_ok' | 'overwrite' = 'create') => ({
  id: ['ns', name],
  mode,
  properties: { p: '1' },
  identity: {},
});

async function warehouseRoot(): Promise<string> {
  const { requireWarehouse } = await import('../../lib/catalog/warehouses.js');
  const w = await requireWarehouse(f.services, 'default');
  if (w.storage.kind !== 'file') throw new Error('expected file storage');
  return w.storage.path;
}

/** Objects under an absolute location in the warehouse. */
async function filesUnder(location: string): Promise<string[]> {
  const rel = path.relative(await warehouseRoot(), location);
  const store = f.services.storageFor({ kind: 'file', path: await warehouseRoot() });
  return (await store.list({ prefix: `${rel}/` })).objects.map((o) => o.key);
}

/** Commits a (fake) manifest at `location`, the way hasData() looks for a dataset. */
async function markWritten(location: string): Promise<void> {
  const rel = path.relative(await warehouseRoot(), location);
  await f.services.storageFor({ kind: 'file', path: await warehouseRoot() }).put(`${rel}/_versions/1.manifest`, 'm');
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof CatalogError ? e.code : Promise.reject(e)),
  );

describe('createTable', () => {
  it('writes the data at a fresh location with "create", then creates the record pointing there', async () => {
    const calls: [string, string][] = [];
    const write: DatasetWrite = async (location, mode) => {
      calls.push([location, mode]);
      expect(await readTable(f.services, ['ns', 'a'])).toBeUndefined(); // data first
      return { version: 1 };
    };
    const res = await createTable(f.services, input('a', 'overwrite'), write);
    expect(res).toMatchObject({ version: 1, properties: { p: '1' } });
    expect(res).not.toHaveProperty('storage_options');
    expect(calls).toEqual([[res.location, 'create']]);
    const record = (await readTable(f.services, ['ns', 'a']))?.value;
    expect(record?.properties).toEqual({ p: '1' });
    expect(path.join(await warehouseRoot(), record!.path)).toBe(res.location);
  });

  it('a failed write creates no record and empties the location it wrote to', async () => {
    let written = '';
    const write: DatasetWrite = async (location) => {
      written = location;
      await markWritten(location);
      throw new InvalidInputError('bad data');
    };
    expect(await code(createTable(f.services, input('b'), write))).toBe(13);
    expect(await readTable(f.services, ['ns', 'b'])).toBeUndefined();
    expect(await filesUnder(written)).toEqual([]);
  });

  it('losing the record race: the loser discards its data and answers as for an existing table', async () => {
    const calls: [string, string][] = [];
    let declared = '';
    const write: DatasetWrite = async (location, mode) => {
      calls.push([location, mode]);
      if (calls.length === 1) {
        await markWritten(location);
        // Meanwhile another request creates the table and gives it data.
        declared = (await declareTable(f.services, { id: ['ns', 'c'], properties: {}, identity: {} })).location;
        await markWritten(declared);
        return { version: 1 };
      }
      throw new TableAlreadyExistsError('Table already exists');
    };
    expect(await code(createTable(f.services, input('c'), write))).toBe(5);
    expect(calls.map(([, m]) => m)).toEqual(['create', 'create']);
    expect(calls[1][0]).toBe(declared);
    expect(await filesUnder(calls[0][0])).toEqual([]);
    expect((await readTable(f.services, ['ns', 'c']))?.value.properties).toEqual({});
  });

  it('a location another table registered between the data write and the claim is left to it (its bytes are not ours to empty)', async () => {
    let written = '';
    const write: DatasetWrite = async (location) => {
      written = location;
      await markWritten(location);
      // A RegisterTable of the fresh directory lands before this create claims it.
      await registerTable(f.services, { id: ['ns', 'other'], location, mode: 'create', properties: {} });
      return { version: 1 };
    };
    expect(await code(createTable(f.services, input('mine'), write))).toBe(13);
    expect(await readTable(f.services, ['ns', 'mine'])).toBeUndefined();
    expect((await readTable(f.services, ['ns', 'other']))?.value.path).toBe(path.relative(await warehouseRoot(), written));
    expect(await filesUnder(written)).toEqual([`${path.relative(await warehouseRoot(), written)}/_versions/1.manifest`]);
  });

  it('a RegisterTable that takes the still-pending claim over before the record lands keeps the location: the create withdraws its record (14) and leaves the bytes', async () => {
    // The create's record write is held at the store: its data is written and its claim is
    // pending, so a registration of that directory finds no live holder and takes the claim.
    const gate = gateFirst(f.services.registry.store, (c) => c.op === 'putIfAbsent' && c.key === tableKey(f.services, ['ns', 'mine']));
    let written = '';
    const write: DatasetWrite = async (location) => {
      written = location;
      await markWritten(location);
      return { version: 1 };
    };
    const created = code(createTable({ ...f.services, registry: new Registry(gate.store) }, input('mine'), write));
    await gate.reached;
    await registerTable(f.services, { id: ['ns', 'other'], location: written, mode: 'create', properties: {} });
    gate.release();
    // Its confirmation (a compare-and-swap on the claim it wrote) fails: the claim is another's.
    expect(await created).toBe(14);
    expect(await readTable(f.services, ['ns', 'mine'])).toBeUndefined();
    const rel = path.relative(await warehouseRoot(), written);
    expect((await readTable(f.services, ['ns', 'other']))?.value.path).toBe(rel);
    expect(await filesUnder(written)).toEqual([`${rel}/_versions/1.manifest`]);
  });

  it('an existing record with data gets the caller\'s mode at its own location and keeps its properties', async () => {
    const declared = await declareTable(f.services, { id: ['ns', 'd'], properties: { owner: 'x' }, identity: {} });
    await markWritten(declared.location);
    const calls: [string, string][] = [];
    const res = await createTable(f.services, input('d', 'exist_ok'), async (location, mode) => {
      calls.push([location, mode]);
      return { version: 3 };
    });
    expect(calls).toEqual([[declared.location, 'exist_ok']]);
    expect(res).toMatchObject({ version: 3, location: declared.location, properties: { owner: 'x' } });
  });

  it('a declared (dataless) record: the data is staged inside it and its manifest published there', async () => {
    const declared = await declareTable(f.services, { id: ['ns', 'h'], properties: { owner: 'x' }, identity: {} });
    const calls: [string, string][] = [];
    const res = await createTable(f.services, input('h', 'exist_ok'), async (location, mode) => {
      calls.push([location, mode]);
      await markWritten(location);
      return { version: 1 };
    });
    expect(calls).toHaveLength(1);
    expect(calls[0][0].startsWith(`${declared.location}/_staging/`)).toBe(true);
    expect(calls[0][1]).toBe('create');
    expect(res).toMatchObject({ version: 1, location: declared.location, properties: { owner: 'x' } });
    // Published at the table, staging removed.
    const rel = path.relative(await warehouseRoot(), declared.location);
    expect(await filesUnder(declared.location)).toEqual([`${rel}/_versions/1.manifest`]);
  });

  it('a failure writing into an existing record never withdraws it', async () => {
    await declareTable(f.services, { id: ['ns', 'e'], properties: {}, identity: {} });
    expect(await code(createTable(f.services, input('e'), async () => Promise.reject(new InvalidInputError('no'))))).toBe(13);
    expect(await readTable(f.services, ['ns', 'e'])).toBeDefined();
  });

  it('reports a conflict (14) when the record it wrote into was replaced while writing', async () => {
    await declareTable(f.services, { id: ['ns', 'g'], properties: {}, identity: {} });
    const key = tableKey(f.services, ['ns', 'g']);
    const write: DatasetWrite = async (location) => {
      // Meanwhile the table is dropped and declared again: a different table (new uid).
      const now = (await f.services.registry.read<TableRecord>(key))!;
      await f.services.registry.remove(key, now.etag);
      await declareTable(f.services, { id: ['ns', 'g'], properties: {}, identity: {} });
      await markWritten(location);
      return { version: 1 };
    };
    expect(await code(createTable(f.services, input('g'), write))).toBe(14);
  });

  it('a missing namespace is 1 and nothing is written', async () => {
    let wrote = false;
    const res = code(createTable(f.services, { ...input('x'), id: ['nope', 'x'] }, async () => ((wrote = true), { version: 1 })));
    expect(await res).toBe(1);
    expect(wrote).toBe(false);
  });
});
