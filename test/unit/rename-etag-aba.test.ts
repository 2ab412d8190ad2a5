import { describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { readRaw } from '../../lib/catalog/protocols/move.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { undropTable } from '../../lib/catalog/tables/undrop.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { Registry, WRITE_ID } from '../../lib/registry/registry.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { gateFirst } from '../support/jittery-store.js';
import { servicesOver } from '../support/services.js';
import { outcome } from '../support/table-invariants.js';

/**
 * Etags are the md5 of the body (S3, and the memory store that mimics it), and several doors
 * write a table record back to the value it held before: an undone rename, a rename there and
 * back, a recoverable drop and its undrop. The registry stamps every write with a fresh id
 * (registry.ts, WRITE_ID), so the bytes, and with them the etag, still differ: "the source's etag
 * differs from the one a request read, or the source is gone" proves that request's If-Match on
 * that etag can never land. RenameTable's parallel mark and arrival rely on it
 * (docs/protocols.md, "Etags never come back"). Each test here failed before the stamp: the etag
 * came back.
 */

const identity = {};

describe('a table record\'s etag never comes back (no ABA)', () => {
  it('a rename that is undone writes the source\'s value back, under a new etag', async () => {
    const { services: s } = await servicesOver('memory');
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    await declareTable(s, { id: ['a', 'x'], properties: {}, identity });
    const before = (await readRaw(s, ['a', 't']))!;
    // a.x is taken: step 0 answers 5 before any write, so take it between step 0 and the arrival.
    const arrivalAtY = (c: { op: string; key: string }) => c.op === 'putIfAbsent' && c.key === keys.table(s.project, ['a', 'y']);
    const gate = gateFirst(s.registry.store, arrivalAtY);
    const rename = outcome(renameTable({ ...s, registry: new Registry(gate.store) }, { id: ['a', 't'], newName: 'y' }));
    await gate.reached;
    const moving = (await readRaw(s, ['a', 't']))!;
    expect(moving.value.state).toBe('moving');
    expect(moving.etag).not.toBe(before.etag);
    await declareTable(s, { id: ['a', 'y'], properties: {}, identity });
    gate.release();
    expect(await rename).toBe(5);
    const after = (await readRaw(s, ['a', 't']))!;
    expect(after.value).toEqual(before.value);
    expect(after.etag).not.toBe(before.etag);
  });

  it('a rename there and back writes the source\'s value back, under a new etag', async () => {
    // A rename keeps every field but the id (liveRecord strips only state/move), so moving a
    // table away and back restores the source's value; only the write id tells the records apart.
    const { services: s } = await servicesOver('memory');
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    const before = (await readRaw(s, ['a', 't']))!;
    await renameTable(s, { id: ['a', 't'], newName: 'x' });
    expect(await readRaw(s, ['a', 't'])).toBeUndefined();
    await renameTable(s, { id: ['a', 'x'], newName: 't' });
    const after = (await readRaw(s, ['a', 't']))!;
    expect(after.value).toEqual(before.value);
    expect(after.etag).not.toBe(before.etag);
  });

  it('a recoverable drop and its undrop write the record\'s value back, under a new etag', async () => {
    const { services: s } = await servicesOver('memory');
    const wkey = keys.warehouse(s.project, s.defaultWarehouse);
    const wh = (await s.registry.read<WarehouseRecord>(wkey))!;
    await s.registry.replace(wkey, { ...wh.value, trashGraceDays: 1 }, wh.etag);
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    const before = (await readRaw(s, ['a', 't']))!;
    await dropTable(s, ['a', 't']);
    expect(await readRaw(s, ['a', 't'])).toBeUndefined();
    await undropTable(s, { id: ['a', 't'] });
    const after = (await readRaw(s, ['a', 't']))!;
    expect(after.value).toEqual(before.value);
    expect(after.etag).not.toBe(before.etag);
  });

  it('the registry stores a fresh write id with every write and never hands it to a reader', async () => {
    const registry = new Registry(new MemoryObjectStore());
    const first = await registry.create('k', { a: 1 });
    const second = await registry.replace('k', { a: 1 }, first);
    expect(second).not.toBe(first);
    const stored = JSON.parse((await registry.store.get('k'))!.body.toString('utf8'));
    expect(typeof stored[WRITE_ID]).toBe('string');
    expect(await registry.read('k')).toEqual({ value: { a: 1 }, etag: second });
    // Only objects can carry the id: anything else is refused before a write.
    await expect(registry.create('list', [1, 2])).rejects.toThrow('must be a JSON object');
    expect(await registry.store.get('list')).toBeUndefined();
  });
});
