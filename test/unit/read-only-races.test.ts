// @covers DescribeTable, RenameTable
/**
 * Read-only readers racing a rename (docs/protocols.md, "Repair on read, and the read-only
 * mode"): readers of either name, in read-only mode over a store that refuses writes, run while
 * a writer renames the table. Each name's answers must move one way only — the source present
 * then absent, the destination absent then present — so no reader sees the table come back
 * where it left, or vanish from where it arrived; and none attempts a write.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { Registry } from '../../lib/registry/registry.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { refusingWrites } from '../support/write-refusing-store.js';

let f: ServicesFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

/** Answers move one way: `from` answers, then only `to` answers. */
function monotone(answers: readonly boolean[], from: boolean): boolean {
  const flip = answers.indexOf(!from);
  return flip < 0 || answers.slice(flip).every((a) => a === !from);
}

describe.each(['memory', 'fs'] as const)('read-only readers × rename (%s store)', (kind) => {
  it('each name answers monotonically, the final answers are the renamed table, nothing is written', async () => {
    f = await servicesOver(kind, { jitterTurns: 6, tmpfs: true });
    const s = f.services;
    const store = refusingWrites(s.registry.store);
    const ro: CatalogServices = { ...s, readOnly: true, registry: new Registry(store) };
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    const iterations = kind === 'memory' ? 30 : 12;
    for (let i = 0; i < iterations; i++) {
      const from = ['a', `t${i}`];
      const to = ['a', `u${i}`];
      const { uid } = await declareTable(s, { id: from, properties: {}, identity: {} }).then(async () => (await readTable(s, from))!.value);
      let done = false;
      const reader = async (id: string[]) => {
        const seen: boolean[] = [];
        // At least one read after the rename answered: the settled-state answer.
        for (let last = false; !last; ) {
          last = done;
          const found = await readTable(ro, id);
          if (found) expect(found.value.uid).toBe(uid);
          seen.push(found !== undefined);
        }
        return seen;
      };
      const readers = [reader(from), reader(to), reader(from), reader(to)];
      await renameTable(s, { id: from, newName: to[1] });
      done = true;
      const [f1, t1, f2, t2] = await Promise.all(readers);
      for (const seen of [f1, f2]) {
        expect(monotone(seen, true), `source answers ${seen.join(',')}`).toBe(true);
        expect(seen[seen.length - 1]).toBe(false);
      }
      for (const seen of [t1, t2]) {
        expect(monotone(seen, false), `destination answers ${seen.join(',')}`).toBe(true);
        expect(seen[seen.length - 1]).toBe(true);
      }
    }
    expect(store.attempts).toEqual([]);
  });
});
