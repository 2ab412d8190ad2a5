import { afterEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { describeNamespace } from '../../lib/catalog/namespaces/describe.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { listNamespaces } from '../../lib/catalog/namespaces/list.js';
import { CatalogError } from '../../lib/errors.js';
import { decodeSegment, keys } from '../../lib/registry/keys.js';
import { Registry } from '../../lib/registry/registry.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { ConditionFailedError } from '../../lib/ports/object-store.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

import { later, laterMs } from '../support/table-invariants.js';

const settle = (p: Promise<unknown>) =>
  p.then(
    () => 'ok' as const,
    (e: unknown) => (e instanceof CatalogError ? e.code : Promise.reject(e)),
  );

/** Every child record must have a live parent record. */
async function assertNoOrphans(f: ServicesFixture) {
  const { services } = f;
  const all = await services.registry.store.list({ prefix: keys.subtree(services.project, []) });
  for (const obj of all.objects) {
    const parts = obj.key.slice(keys.subtree(services.project, []).length).split('/');
    const depth = parts.length - 2; // directories above the +n/+t marker
    if (depth === 0) continue;
    const parentId = parts.slice(0, depth).map(decodeSegment);
    const parent = await services.registry.read(keys.namespace(services.project, parentId));
    expect(parent, `orphan ${obj.key}`).toBeDefined();
  }
}

describe.each(['memory', 'fs'] as const)('namespace doors under real concurrency (%s store)', (kind) => {
  let f: ServicesFixture;
  afterEach(() => f?.cleanup());

  it('create child × Restrict drop of its parent: never a child without a parent', async () => {
    f = await servicesOver(kind, { jitterTurns: 3 });
    const s = f.services;
    const outcomes = new Set<string>();
    // The fs store's writes take thread-pool round trips (milliseconds), against which a few
    // microtask turns of offset do not change who starts first: offset its calls in milliseconds.
    const offset = kind === 'fs' ? laterMs : later;
    for (let i = 0; i < 40; i++) {
      const parent = [`p${i}`];
      await createNamespace(s, { id: parent, mode: 'create', properties: {} });
      const [create, drop] = await Promise.all([
        settle(offset(() => createNamespace(s, { id: [...parent, 'c'], mode: 'create', properties: {} }))),
        settle(offset(() => dropNamespace(s, { id: parent, mode: 'fail', behavior: 'restrict' }))),
      ]);
      outcomes.add(`${create}/${drop}`);
      if (create === 'ok' && drop === 'ok') {
        expect.fail('both the child create and the Restrict drop of its parent succeeded');
      }
      // Either the drop refused (3) and the parent lives, or the drop won and the child withdrew (1).
      if (drop === 'ok') expect(create).toBe(1);
      else expect(drop).toBe(3);
      const parentAlive = await s.registry.read(keys.namespace(s.project, parent));
      const childAlive = await s.registry.read(keys.namespace(s.project, [...parent, 'c']));
      if (childAlive) expect(parentAlive?.value).toMatchObject({ state: 'active' });
    }
    await assertNoOrphans(f);
    // The interleavings really varied: both "drop refused" and "create withdrew/missed" happened.
    expect(outcomes.size).toBeGreaterThan(1);
  });

  it('create grandchildren × Cascade drop of the root of the subtree: nothing survives', async () => {
    f = await servicesOver(kind, { jitterTurns: 3 });
    const s = f.services;
    for (let i = 0; i < 8; i++) {
      const top = [`t${i}`];
      await createNamespace(s, { id: top, mode: 'create', properties: {} });
      await createNamespace(s, { id: [...top, 'a'], mode: 'create', properties: {} });
      await createNamespace(s, { id: [...top, 'b'], mode: 'create', properties: {} });
      const creates = ['a', 'b'].flatMap((mid) =>
        [0, 1, 2].map((n) =>
          settle(later(() => createNamespace(s, { id: [...top, mid, `g${n}`], mode: 'create', properties: {} }), 40)),
        ),
      );
      const [drop, ...results] = await Promise.all([
        settle(dropNamespace(s, { id: top, mode: 'fail', behavior: 'cascade' })),
        ...creates,
      ]);
      expect(drop).toBe('ok');
      for (const r of results) expect(['ok', 1]).toContain(r);
      const left = await s.registry.store.list({ prefix: keys.subtree(s.project, top) });
      expect(left.objects.map((o) => o.key)).toEqual([]);
      await expect(describeNamespace(s, top)).rejects.toMatchObject({ code: 1 });
    }
    await assertNoOrphans(f);
  });

  it('create × create of one name: exactly one winner', async () => {
    f = await servicesOver(kind, { jitterTurns: 3 });
    const s = f.services;
    for (let i = 0; i < 20; i++) {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          settle(createNamespace(s, { id: [`dup${i}`], mode: 'create', properties: { n: String(n) } })),
        ),
      );
      expect(results.filter((r) => r === 'ok')).toHaveLength(1);
      expect(results.filter((r) => r === 2)).toHaveLength(5);
    }
    expect((await listNamespaces(s, { id: [] })).namespaces).toHaveLength(20);
  });
});

describe('registry retries', () => {
  it('turn exhausted lost races into code 14, never a 500', async () => {
    const registry = new Registry(new MemoryObjectStore(), { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 });
    let calls = 0;
    await expect(
      registry.retrying('always losing', async () => {
        calls++;
        throw new ConditionFailedError('k', 'etag-mismatch');
      }),
    ).rejects.toMatchObject({ code: 14, message: /lost 3 races/ });
    expect(calls).toBe(3);
  });

  it('do not retry other failures', async () => {
    const registry = new Registry(new MemoryObjectStore());
    let calls = 0;
    await expect(
      registry.retrying('boom', async () => {
        calls++;
        throw new Error('disk on fire');
      }),
    ).rejects.toThrow('disk on fire');
    expect(calls).toBe(1);
  });
});

describe('create under a drop, deterministic interleavings', () => {
  /**
   * The create stops at the gate just before its own record's put-if-absent, after it read its
   * parent as active. The test waits until it is really there (never on a timer): only then
   * does the drop run, so the create's re-check after its write is the only thing that can
   * notice the parent is gone.
   */
  async function gatedCreate(f: ServicesFixture, id: string[]) {
    const { gateFirst } = await import('../support/jittery-store.js');
    const s = f.services;
    const gate = gateFirst(s.registry.store, (c) => c.op === 'putIfAbsent' && c.key === keys.namespace(s.project, id));
    const create = settle(createNamespace({ ...s, registry: new Registry(gate.store) }, { id, mode: 'create', properties: {} }));
    await gate.reached;
    return { create, release: gate.release };
  }

  it('a child whose write lands after a Restrict drop finished withdraws itself', async () => {
    const f = await servicesOver('memory');
    const s = f.services;
    await createNamespace(s, { id: ['parent'], mode: 'create', properties: {} });
    const { create, release } = await gatedCreate(f, ['parent', 'late']);
    await dropNamespace(s, { id: ['parent'], mode: 'fail', behavior: 'restrict' });
    release();
    expect(await create).toBe(1);
    expect(await s.registry.read(keys.namespace(s.project, ['parent', 'late']))).toBeUndefined();
    await assertNoOrphans(f);
  });

  it('a child whose write lands after a Cascade drop finished withdraws itself', async () => {
    const f = await servicesOver('memory');
    const s = f.services;
    await createNamespace(s, { id: ['top'], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['top', 'mid'], mode: 'create', properties: {} });
    const { create, release } = await gatedCreate(f, ['top', 'mid', 'leaf']);
    await dropNamespace(s, { id: ['top'], mode: 'fail', behavior: 'cascade' });
    release();
    expect(await create).toBe(1);
    const left = await s.registry.store.list({ prefix: keys.subtree(s.project, ['top']) });
    expect(left.objects).toEqual([]);
  });
});
