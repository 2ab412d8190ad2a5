// @covers ListNamespaces, DescribeNamespace, DropNamespace
/**
 * Issue 26 item 3: after a crash anywhere in a cascade drop, ListNamespaces of the parent must
 * name exactly the namespaces DescribeNamespace answers 200 for. Before the drop marks
 * (lib/catalog/namespaces/drop-marks.ts) the listing named a namespace left `dropping` while
 * describe and a second drop answered 404, until a describe settled it.
 *
 * The crash is deterministic: the registry store throws right after its k-th write (the write
 * is durable, nothing after it runs), the way a process killed there leaves it; the "restarted"
 * catalog is a fresh Registry over the same store. Every k is tried until the drop completes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { describeNamespace } from '../../lib/catalog/namespaces/describe.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { listNamespaces } from '../../lib/catalog/namespaces/list.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import { Registry } from '../../lib/registry/registry.js';
import { outcome, warehouseStore, writeFakeDataset } from '../support/table-invariants.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

class Crash extends Error {}

const WRITES = new Set(['putIfAbsent', 'putIfMatch', 'put', 'deleteIfMatch', 'delete', 'copyIfAbsent']);

/** The store, throwing right after its k-th write (counted from arming). */
function killedAfter(store: ObjectStore, k: number): { store: ObjectStore; arm: () => void; fired: () => boolean } {
  let armed = false;
  let seen = 0;
  let fired = false;
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (fired) throw new Crash('the process is gone');
        const out = await value.apply(target, args);
        if (armed && WRITES.has(String(prop)) && ++seen === k) {
          fired = true;
          throw new Crash(`killed after registry write #${k} (${String(prop)} ${String(args[0])})`);
        }
        return out;
      };
    },
  });
  return { store: wrapped, arm: () => (armed = true), fired: () => fired };
}

let f: ServicesFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

/** p > n (child namespace n.c, table n.t with bytes), and a sibling p.s that is not dropped. */
async function world(s: CatalogServices) {
  const store = await warehouseStore(s);
  for (const ns of [['p'], ['p', 'n'], ['p', 'n', 'c'], ['p', 's']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
  await declareTable(s, { id: ['p', 'n', 't'], properties: {}, identity: {} });
  await writeFakeDataset(store, (await readTable(s, ['p', 'n', 't']))!.value.path);
}

for (const kind of ['memory', 'fs'] as const) {
  describe(`${kind} store: the listing after a kill at each registry write of a cascade drop`, () => {
    it('ListNamespaces names exactly what DescribeNamespace answers 200 for, and a second drop agrees', async () => {
      let completed = false;
      for (let k = 1; k <= 60 && !completed; k++) {
        f = await servicesOver(kind);
        const kill = killedAfter(f.services.registry.store, k);
        const dying: CatalogServices = { ...f.services, registry: new Registry(kill.store) };
        await world(dying);
        kill.arm();
        const result = await dropNamespace(dying, { id: ['p', 'n'], mode: 'fail', behavior: 'cascade' }).catch((e: unknown) => e);
        if (!kill.fired()) {
          expect(result).toEqual({ properties: {} });
          completed = true;
        } else {
          expect(result, `k=${k}`).toBeInstanceOf(Crash);
        }
        // The restart: a fresh registry over what the dead process left.
        const s: CatalogServices = { ...f.services, registry: new Registry(f.services.registry.store) };
        // Listed first: a describe would settle the drop and hide the disagreement.
        const listed = (await listNamespaces(s, { id: ['p'] })).namespaces;
        const describable: string[] = [];
        for (const name of ['n', 's']) if ((await outcome(describeNamespace(s, ['p', name]))) === 'ok') describable.push(name);
        expect(listed, `after a kill at registry write #${k}`).toEqual(describable);
        // Whatever the listing names, a drop of it finds it; what it leaves out, a drop does not.
        const again = await outcome(dropNamespace(s, { id: ['p', 'n'], mode: 'fail', behavior: 'cascade' }));
        expect(again, `second drop after a kill at registry write #${k}`).toBe(listed.includes('n') ? 'ok' : 1);
        expect((await listNamespaces(s, { id: ['p'] })).namespaces).toEqual(['s']);
        await f.cleanup();
        f = undefined;
      }
      expect(completed, 'the drop ran to its end within 60 writes').toBe(true);
    }, 120_000);
  });
}

describe('a drop mark a crash left behind (namespaces/drop-marks.ts)', () => {
  it('is never a name, never contents, and goes with its parent', async () => {
    f = await servicesOver('fs');
    const s = f.services;
    for (const ns of [['p'], ['p', 'live']]) await createNamespace(s, { id: ns, mode: 'create', properties: {} });
    // Left by a crash after the record's removal (`gone`) and before the record's mark (`live`).
    for (const id of [['p', 'gone'], ['p', 'live']]) await s.registry.create(keys.namespaceDropMark(s.project, id), { kind: 'namespace-drop-mark', nonce: 'n0' });
    expect((await listNamespaces(s, { id: ['p'] })).namespaces).toEqual(['live']);
    expect((await listNamespaces(s, { id: ['p'], limit: 1 })).namespaces).toEqual(['live']);
    expect(await outcome(describeNamespace(s, ['p', 'live']))).toBe('ok');
    // A restrict drop of `p` sees `live` as contents, and not the stale mark of `gone`.
    expect(await outcome(dropNamespace(s, { id: ['p'], mode: 'fail', behavior: 'restrict' }))).toBe(3);
    await dropNamespace(s, { id: ['p', 'live'], mode: 'fail', behavior: 'restrict' });
    // Its own drop took over and removed `live`'s mark; `gone`'s is no contents.
    expect(await s.registry.read(keys.namespaceDropMark(s.project, ['p', 'live']))).toBeUndefined();
    expect(await outcome(dropNamespace(s, { id: ['p'], mode: 'fail', behavior: 'restrict' }))).toBe('ok');
    expect(await s.registry.store.list({ prefix: keys.subtree(s.project, ['p']) })).toMatchObject({ objects: [] });
  });

  it('a cascade of the parent removes it with everything else', async () => {
    f = await servicesOver('memory');
    const s = f.services;
    await createNamespace(s, { id: ['p'], mode: 'create', properties: {} });
    await s.registry.create(keys.namespaceDropMark(s.project, ['p', 'gone']), { kind: 'namespace-drop-mark', nonce: 'n0' });
    expect(await outcome(dropNamespace(s, { id: ['p'], mode: 'fail', behavior: 'cascade' }))).toBe('ok');
    expect(await s.registry.store.list({ prefix: keys.subtree(s.project, []) })).toMatchObject({ objects: [] });
  });
});
