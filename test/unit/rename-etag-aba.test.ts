import { describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { dropTable } from '../../lib/catalog/tables/drop.js';
import { readRaw } from '../../lib/catalog/tables/move.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { undropTable } from '../../lib/catalog/tables/trash.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { gateFirst } from '../support/jittery-store.js';
import { servicesOver } from '../support/services.js';
import { outcome } from '../support/table-invariants.js';

/**
 * Etags are the md5 of the body (S3, and the memory store that mimics it), and several doors
 * write a table record back to bytes it held before. So "the source's etag differs from the one
 * a request read" does not prove that request's If-Match on that etag can never land: the etag
 * can come back. Any rule that deletes something on that inference must first make the
 * source's bytes unrepeatable (docs/protocols.md, "RenameTable", on why the source is marked
 * before the arrival is written).
 */

const identity = {};

describe('a table record\'s etag can come back (ABA)', () => {
  it('a rename that is undone writes the source back byte for byte', async () => {
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
    expect((await readRaw(s, ['a', 't']))!.etag).toBe(before.etag);
  });

  it('a rename there and back writes the source back byte for byte (the record leaves the name and returns)', async () => {
    // A rename keeps every field but the id (liveRecord strips only state/move), so moving a
    // table away and back restores the source's bytes. A rule that treats "the source record is
    // gone" (or holds another uid) as "a request's If-Match on its old etag can never land" must
    // account for this door too: a token the rename keeps does not make the bytes unrepeatable.
    const { services: s } = await servicesOver('memory');
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    const before = (await readRaw(s, ['a', 't']))!;
    await renameTable(s, { id: ['a', 't'], newName: 'x' });
    expect(await readRaw(s, ['a', 't'])).toBeUndefined();
    await renameTable(s, { id: ['a', 'x'], newName: 't' });
    expect((await readRaw(s, ['a', 't']))!.etag).toBe(before.etag);
  });

  it('a recoverable drop and its undrop write the record back byte for byte', async () => {
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
    expect((await readRaw(s, ['a', 't']))!.etag).toBe(before.etag);
  });
});
