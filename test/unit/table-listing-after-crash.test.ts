// @covers ListTables, ListAllTables, DescribeTable, RenameTable
/**
 * Issue 26 item 3, the table side: after a crash anywhere in a rename, ListTables and
 * ListAllTables must name only tables DescribeTable answers 200 for. Before the rename marks
 * (lib/catalog/protocols/rename-marks.ts) both listings named the source of a rename the process
 * died in, which describe then settled and answered 404 for (a crash after each of the first five
 * writes, within a namespace and across two).
 *
 * The crash is deterministic: the registry store throws right after its n-th write (durable,
 * nothing after it runs); the "restarted" catalog is a fresh Registry over the same store, and
 * every n is tried until the rename completes. Everything is listed first (a describe would
 * settle the rename and hide the disagreement), then each listed name is described.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { describeTable } from '../../lib/catalog/tables/describe.js';
import { listAllTables, listTables } from '../../lib/catalog/tables/list.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { keys } from '../../lib/registry/keys.js';
import { Registry } from '../../lib/registry/registry.js';
import { crashAfterWrites, SimulatedCrash } from '../support/jittery-store.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { outcome, warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

const over = (s: CatalogServices, store: CatalogServices['registry']['store']): CatalogServices => ({ ...s, registry: new Registry(store) });

let f: ServicesFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

/** Every table id a listing names: ListTables of each namespace, ListAllTables whole and in pages of one. */
async function everyListing(s: CatalogServices, namespaces: string[][]): Promise<string[]> {
  const named: string[] = [];
  for (const ns of namespaces) for (const t of (await listTables(s, { namespace: ns, includeDeclared: true })).tables) named.push([...ns, t].join('.'));
  for (const t of (await listAllTables(s, { delimiter: '.', includeDeclared: true })).tables) named.push(t);
  let token: string | undefined;
  for (let n = 0; n < 20; n++) {
    const page = await listAllTables(s, { delimiter: '.', includeDeclared: true, limit: 1, pageToken: token });
    named.push(...page.tables);
    token = page.page_token;
    if (token === undefined) break;
  }
  return named;
}

describe.each(['memory', 'fs'] as const)('%s store: the table listings after a kill at each registry write of a rename', (kind) => {
  it.each([
    ['within a namespace', ['a']],
    ['across namespaces', ['b']],
  ] as const)('%s: every listed table describes', async (_label, destNamespace) => {
    let completed = false;
    for (let n = 1; n < 40 && !completed; n++) {
      f = await servicesOver(kind);
      const s = f.services;
      const store = await warehouseStore(s);
      for (const ns of [['a'], ['b']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
      for (const t of ['t', 'z']) await declareTable(s, { id: ['a', t], properties: {}, identity: {} });
      await writeFakeDataset(store, (await readTable(s, ['a', 't']))!.value.path);
      const crashing = crashAfterWrites(s.registry.store, n);
      try {
        await renameTable(over(s, crashing.store), { id: ['a', 't'], newName: 'dest', newNamespace: [...destNamespace] });
        completed = !crashing.crashed();
      } catch (err) {
        if (!(err instanceof SimulatedCrash)) throw err;
      }
      const restarted = over(s, s.registry.store);
      const named = await everyListing(restarted, [['a'], ['b']]);
      for (const id of named) {
        expect(await outcome(describeTable(restarted, { id: id.split('.'), identity: {} })), `${id}, listed after a crash at write ${n}`).toBe('ok');
      }
      // The table is listed under exactly one name (the sibling z always). A mark may outlive its
      // move (a crash before the move wrote a record, or after it ended), only at the move's names.
      const settled = await everyListing(restarted, [['a'], ['b']]);
      expect(new Set(settled).size, `crash at write ${n}: ${settled}`).toBe(2);
      const marks = (await s.registry.store.list({ prefix: keys.subtree(s.project, []) })).objects.filter((o) => o.key.endsWith('!'));
      const names = [keys.tableRenameMark(s.project, ['a', 't']), keys.tableRenameMark(s.project, [...destNamespace, 'dest'])];
      for (const m of marks) expect(names, `mark left after a crash at write ${n}`).toContain(m.key);
      if (completed) expect(marks, 'a completed rename leaves no mark').toEqual([]);
      await f.cleanup();
      f = undefined;
    }
    expect(completed, 'the rename ran to its end within 40 writes').toBe(true);
  });
});

describe('a rename mark a crash left behind (protocols/rename-marks.ts)', () => {
  it('is never a table, costs a listing only a read, and goes with its namespace', async () => {
    f = await servicesOver('fs');
    const s = f.services;
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['a', 'live'], properties: {}, identity: {} });
    // Left by crashes after a move's end: beside a live table, and where no table is.
    for (const id of [['a', 'live'], ['a', 'gone']]) await s.registry.create(keys.tableRenameMark(s.project, id), { kind: 'table-rename-mark', nonce: 'n0' });
    expect((await listTables(s, { namespace: ['a'], includeDeclared: true })).tables).toEqual(['live']);
    expect((await listAllTables(s, { delimiter: '.', includeDeclared: true })).tables).toEqual(['a.live']);
    // A later rename of the name takes the mark over and removes it at its end.
    await renameTable(s, { id: ['a', 'live'], newName: 'moved' });
    expect(await s.registry.read(keys.tableRenameMark(s.project, ['a', 'live']))).toBeUndefined();
    expect((await listTables(s, { namespace: ['a'], includeDeclared: true })).tables).toEqual(['moved']);
    const { dropNamespace } = await import('../../lib/catalog/namespaces/drop.js');
    expect(await outcome(dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' }))).toBe('ok');
    expect((await s.registry.store.list({ prefix: keys.subtree(s.project, []) })).objects).toEqual([]);
  });
});
