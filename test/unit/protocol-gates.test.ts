// @covers RenameTable, DeclareTable, DropNamespace
import { describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { addClaimId } from '../../lib/catalog/protocols/claims.js';
import { liveRecord, readRaw } from '../../lib/catalog/protocols/move.js';
import { markMoving } from '../support/renames.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { keys } from '../../lib/registry/keys.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { crashAfterWrites, gateFirst, SimulatedCrash, type StoreCall } from '../support/jittery-store.js';
import { servicesOver } from '../support/services.js';
import {
  allClaims,
  allTableRecords,
  assertTableInvariants,
  objectsUnder,
  outcome,
  warehouseStore,
  writeFakeDataset,
} from '../support/table-invariants.js';

/**
 * Protocol steps pinned by deterministic interleavings: each test stops one request at a named
 * store call (a gate it waits on, never a timer) or crashes it after its n-th write, and then
 * checks what only that protocol step guarantees. Each test here fails when the step it names
 * is removed (scripts/mutations.ts applies those removals one at a time).
 */

const identity = {};

async function fixture() {
  const f = await servicesOver('memory');
  const s = f.services;
  const store = await warehouseStore(s);
  return { f, s, store };
}

async function tableIn(s: CatalogServices, store: Awaited<ReturnType<typeof warehouseStore>>, id: string[]): Promise<TableRecord> {
  await declareTable(s, { id, properties: {}, identity });
  const record = (await readTable(s, id))!.value;
  await writeFakeDataset(store, record.path);
  return record;
}

const over = (s: CatalogServices, store: CatalogServices['registry']['store']): CatalogServices => ({ ...s, registry: new Registry(store) });

/** Every id holding a record of table `uid`, as stored. */
async function whereIs(s: CatalogServices, uid: string): Promise<string[]> {
  return (await allTableRecords(s)).filter((r) => r.uid === uid).map((r) => r.id.join('.'));
}

describe('RenameTable: the decisive compare-and-swap (source moving → moved)', () => {
  it('loses to an undo that happened while it was in flight: the table stays at its source', async () => {
    const { s, store } = await fixture();
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['b'], mode: 'create', properties: {} });
    const t = await tableIn(s, store, ['a', 't']);
    const sourceKey = keys.table(s.project, ['a', 't']);
    // The rename stops right before it commits: its arrival at b.dest has landed and it has
    // seen namespace b active. Any write of the `moved` state to the source is gated, whether
    // it is a compare-and-swap or not.
    const commit = (c: StoreCall) => c.key === sourceKey && c.body.includes('"state":"moved"');
    const gate = gateFirst(s.registry.store, commit);
    const rename = outcome(renameTable(over(s, gate.store), { id: ['a', 't'], newName: 'dest', newNamespace: ['b'] }));
    await gate.reached;
    expect((await readRaw(s, ['b', 'dest']))?.value.state).toBe('arriving');
    // Meanwhile a cascade drop of b settles the arrival: b is dropping, so it undoes the move
    // (source back to active, arrival withdrawn) and removes b.
    await dropNamespace(s, { id: ['b'], mode: 'fail', behavior: 'cascade' });
    expect((await readRaw(s, ['a', 't']))?.value.state).toBeUndefined();
    gate.release();
    // The rename's commit must now lose: the move was decided (undone) by someone else.
    expect(await rename).toBe(1);
    expect(await whereIs(s, t.uid)).toEqual(['a.t']);
    expect(await objectsUnder(store, t.path)).toHaveLength(2);
    await assertTableInvariants(s);
  });
});

describe('RenameTable: the arrival written alongside the source\'s mark', () => {
  // The mark (source active → moving) and the arrival go out together; here the mark is held at
  // the store until the test lets it go, so the arrival is on record while the source is still
  // live at the etag the mark is conditional on.
  /** a.t renamed to a.u with its mark held: answers once the arrival is on record beside it. */
  async function heldMark() {
    const { s, store } = await fixture();
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    const t = await tableIn(s, store, ['a', 't']);
    const before = (await readRaw(s, ['a', 't']))!;
    const mark = (c: StoreCall) => c.key === keys.table(s.project, ['a', 't']) && c.body.includes('"state":"moving"');
    const gate = gateFirst(s.registry.store, mark);
    const rename = outcome(renameTable(over(s, gate.store), { id: ['a', 't'], newName: 'u' }));
    await gate.reached;
    // Let the arrival land beside the held mark (a few turns: it was sent in the same breath).
    for (let i = 0; i < 20 && !(await readRaw(s, ['a', 'u'])); i++) await new Promise((r) => setImmediate(r));
    const arrival = (await readRaw(s, ['a', 'u']))!;
    expect(arrival.value.state).toBe('arriving');
    expect(arrival.value.move?.sourceEtag).toBe(before.etag);
    return { s, store, t, before, gate, rename };
  }

  it('a reader of the destination fences the source before it deletes the arrival: the held mark then fails and the rename starts over', async () => {
    const { s, store, t, before, gate, rename } = await heldMark();
    // A reader of a.u: the move is undecided (the source is unmarked), so a.u holds nothing. It
    // rewrites the source (same value, a new etag) so the held mark can never land, and deletes
    // the arrival.
    expect(await readTable(s, ['a', 'u'])).toBeUndefined();
    expect(await readRaw(s, ['a', 'u'])).toBeUndefined();
    const fenced = (await readRaw(s, ['a', 't']))!;
    expect(fenced.value).toEqual(before.value);
    expect(fenced.etag).not.toBe(before.etag);
    // The held mark fails; the rename reads the source again and completes.
    gate.release();
    expect(await rename).toBe('ok');
    expect(await whereIs(s, t.uid)).toEqual(['a.u']);
    expect(await objectsUnder(store, t.path)).toHaveLength(2);
    await assertTableInvariants(s);
  });

  it('a source that another rename marked and undid meanwhile is not the one the held mark expects: the arrival is stale, and the held mark fails (etags never come back)', async () => {
    const { s, t, before, gate, rename: first } = await heldMark();
    // A second rename marks the source and is undone (its destination is taken while its own
    // arrival is held back): the source holds its old value again, under a new etag.
    const arrivalAtY = (c: StoreCall) => c.op === 'putIfAbsent' && c.key === keys.table(s.project, ['a', 'y']);
    const second = gateFirst(s.registry.store, arrivalAtY);
    const undoneRename = outcome(renameTable(over(s, second.store), { id: ['a', 't'], newName: 'y' }));
    await second.reached;
    await declareTable(s, { id: ['a', 'y'], properties: {}, identity });
    second.release();
    expect(await undoneRename).toBe(5);
    const undone = (await readRaw(s, ['a', 't']))!;
    expect(undone.value).toEqual(before.value);
    expect(undone.etag).not.toBe(before.etag);
    // A reader of a.u: the source is not at the etag the arrival names, so no mark can land on
    // it any more: the arrival is deleted, nothing is fenced.
    expect(await readTable(s, ['a', 'u'])).toBeUndefined();
    expect((await readRaw(s, ['a', 't']))!.etag).toBe(undone.etag);
    gate.release();
    expect(await first).toBe('ok');
    expect(await whereIs(s, t.uid)).toEqual(['a.u']);
    await assertTableInvariants(s);
  });
});

describe('RenameTable crashing after any one of its writes', () => {
  /**
   * Runs the rename on a store that crashes after its n-th write, for n = 1, 2, … until the
   * rename completes. After each crash the next request (on a healthy store) must find the table
   * under exactly one name with its bytes, every record settled and every claim matching. This
   * covers every crash point of the protocol, including "source marked moved, destination still
   * arriving" and whichever order the completion steps run in.
   */
  it.each([
    ['within a namespace', ['a'], 'a.dest'],
    ['across namespaces', ['b'], 'b.dest'],
  ] as const)('%s: the table is never lost, never doubled', async (_label, namespace, expected) => {
    let completed = false;
    for (let n = 1; n < 40 && !completed; n++) {
      const { s, store } = await fixture();
      await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
      await createNamespace(s, { id: ['b'], mode: 'create', properties: {} });
      const t = await tableIn(s, store, ['a', 't']);
      const crashing = crashAfterWrites(s.registry.store, n);
      try {
        await renameTable(over(s, crashing.store), { id: ['a', 't'], newName: 'dest', newNamespace: [...namespace] });
        completed = !crashing.crashed();
      } catch (err) {
        if (!(err instanceof SimulatedCrash)) throw err;
      }
      // The next requests touch both names; each settles whatever rename state it finds.
      const atSource = await readTable(s, ['a', 't']);
      const atDest = await readTable(s, [...namespace, 'dest']);
      const found = [atSource, atDest].filter((r) => r !== undefined);
      expect(found.map((r) => r!.value.uid), `crash after write ${n}`).toEqual([t.uid]);
      expect(await whereIs(s, t.uid), `crash after write ${n}`).toEqual([completed ? expected : found[0]!.value.id.join('.')]);
      expect(await objectsUnder(store, t.path), `crash after write ${n}`).toHaveLength(2);
      await assertTableInvariants(s);
      if (completed) expect(atDest?.value.uid).toBe(t.uid);
    }
    expect(completed, 'the rename never completed within 40 writes').toBe(true);
  });

  it.each(['source', 'destination'] as const)(
    'source marked moved, destination still arriving: a reader of the %s finishes the commit',
    async (reader) => {
      const { s, store } = await fixture();
      await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
      await createNamespace(s, { id: ['b'], mode: 'create', properties: {} });
      const t = await tableIn(s, store, ['a', 't']);
      // The state a rename leaves when it dies right after its decisive compare-and-swap.
      const moving = await markMoving(s, ['a', 't'], (await readRaw(s, ['a', 't']))!, ['b', 'dest']);
      await addClaimId(s, moving.value, ['b', 'dest']);
      await s.registry.create<TableRecord>(keys.table(s.project, ['b', 'dest']), {
        ...liveRecord(moving.value),
        id: ['b', 'dest'],
        state: 'arriving',
        move: { nonce: moving.value.move!.nonce, from: ['a', 't'] },
      });
      await s.registry.replace(keys.table(s.project, ['a', 't']), { ...moving.value, state: 'moved' }, moving.etag);

      const read = await readTable(s, reader === 'source' ? ['a', 't'] : ['b', 'dest']);
      expect(read?.value.uid).toBe(reader === 'source' ? undefined : t.uid);
      expect(await whereIs(s, t.uid)).toEqual(['b.dest']);
      expect((await readRaw(s, ['b', 'dest']))?.value.state).toBeUndefined();
      expect(await readRaw(s, ['a', 't'])).toBeUndefined();
      expect(await objectsUnder(store, t.path)).toHaveLength(2);
      await assertTableInvariants(s);
    },
  );
});

describe('DeclareTable: the namespace re-check after the record is written', () => {
  async function gatedDeclare(s: CatalogServices, id: string[]) {
    const gate = gateFirst(s.registry.store, (c) => c.op === 'putIfAbsent' && c.key === keys.table(s.project, id));
    const declared = outcome(declareTable(over(s, gate.store), { id, properties: {}, identity }));
    await gate.reached; // it read the namespace as active and claimed its location
    return { declared, release: gate.release };
  }

  it.each(['restrict', 'cascade'] as const)('a record that lands after a %s drop of its namespace is withdrawn (1)', async (behavior) => {
    const { s } = await fixture();
    await createNamespace(s, { id: ['n'], mode: 'create', properties: {} });
    const { declared, release } = await gatedDeclare(s, ['n', 't']);
    expect(await outcome(dropNamespace(s, { id: ['n'], mode: 'fail', behavior }))).toBe('ok');
    release();
    expect(await declared).toBe(1);
    expect(await readRaw(s, ['n', 't'])).toBeUndefined();
    expect(await allTableRecords(s)).toEqual([]);
    expect(await allClaims(s)).toEqual([]);
    await assertTableInvariants(s);
  });

  it('a record that lands while its namespace is active stays (the gate itself changes nothing)', async () => {
    const { s } = await fixture();
    await createNamespace(s, { id: ['n'], mode: 'create', properties: {} });
    const { declared, release } = await gatedDeclare(s, ['n', 't']);
    release();
    expect(await declared).toBe('ok');
    expect((await readRaw(s, ['n', 't']))?.value.state).toBeUndefined();
    await assertTableInvariants(s);
  });
});

describe('RegisterTable: a drop that takes the new table before its claim is confirmed', () => {
  it('a cascade that drops the table between its record and the claim confirmation: the registration answers ok, the drop answers for the claim and bytes', async () => {
    const { s, store } = await fixture();
    await createNamespace(s, { id: ['n'], mode: 'create', properties: {} });
    await writeFakeDataset(store, 'imports/x.lance');
    const claim = keys.locationClaim(s.project, s.defaultWarehouse, 'imports/x.lance');
    // The register's first call on its claim after its record landed is the confirmation.
    let recordWritten = false;
    const gate = gateFirst(s.registry.store, (c: StoreCall) => {
      if (c.op === 'putIfAbsent' && c.key === keys.table(s.project, ['n', 'r'])) recordWritten = true;
      return recordWritten && c.key === claim;
    });
    const registered = outcome(registerTable(over(s, gate.store), { id: ['n', 'r'], location: 'imports/x.lance', mode: 'create', properties: {} }));
    await gate.reached; // record written, claim still pending
    expect(await outcome(dropNamespace(s, { id: ['n'], mode: 'fail', behavior: 'cascade' }))).toBe('ok');
    gate.release();
    // Before: 13 "registered by a concurrent request", about data the cascade had already deleted.
    expect(await registered).toBe('ok');
    expect(await allTableRecords(s)).toEqual([]);
    expect(await allClaims(s)).toEqual([]);
    expect(await objectsUnder(store, 'imports/x.lance')).toEqual([]);
    await assertTableInvariants(s);
  });

  it('a competitor that takes the still-pending claim over before the record lands wins; the owner\'s confirmation (a compare-and-swap on the etag it wrote) fails and it withdraws (13)', async () => {
    const { s, store } = await fixture();
    await createNamespace(s, { id: ['n'], mode: 'create', properties: {} });
    await writeFakeDataset(store, 'imports/x.lance');
    const gate = gateFirst(s.registry.store, (c: StoreCall) => c.op === 'putIfAbsent' && c.key === keys.table(s.project, ['n', 'first']));
    const first = outcome(registerTable(over(s, gate.store), { id: ['n', 'first'], location: 'imports/x.lance', mode: 'create', properties: {} }));
    await gate.reached; // its claim is written (pending), its record not yet: the claim looks stale
    expect(await outcome(registerTable(s, { id: ['n', 'second'], location: 'imports/x.lance', mode: 'create', properties: {} }))).toBe('ok');
    gate.release();
    expect(await first).toBe(13);
    expect((await allTableRecords(s)).map((r) => r.id.join('.'))).toEqual(['n.second']);
    const claims = await allClaims(s);
    expect(claims.map((c) => [c.ids, c.state])).toEqual([[[['n', 'second']], 'held']]);
    await assertTableInvariants(s);
  });
});
