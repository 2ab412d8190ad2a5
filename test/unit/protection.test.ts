import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { describeNamespace } from '../../lib/catalog/namespaces/describe.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import { describeProtection, setProtection } from '../../lib/catalog/protection.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { deregisterTable, dropTable } from '../../lib/catalog/tables/drop.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import { registerTable } from '../../lib/catalog/tables/register.js';
import { renameTable } from '../../lib/catalog/tables/rename.js';
import { keys } from '../../lib/registry/keys.js';
import type { NamespaceRecord, TableRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';
import { warehouseStore, writeFakeDataset } from '../support/table-invariants.js';

/** Settles to 'ok' or the catalog error code. */
const code = (p: Promise<unknown>): Promise<'ok' | number> =>
  p.then(
    () => 'ok' as const,
    (e: { code?: number }) => {
      if (typeof e.code !== 'number') throw e;
      return e.code;
    },
  );

/** Protection on namespaces and tables (docs/lifecycle.md), at the catalog level, on both local stores. */
describe.each(['memory', 'fs'] as const)('protection (%s store)', (kind) => {
  let f: ServicesFixture;
  let s: CatalogServices;
  const identity = {};
  const protect = (k: 'namespace' | 'table', id: string[], on = true) => setProtection(s, { kind: k, id, protected: on, principal: 'ana' });
  const exists = async (id: string[]) => (await readTable(s, id)) !== undefined;

  beforeEach(async () => {
    f = await servicesOver(kind);
    s = f.services;
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['a', 'b'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    await declareTable(s, { id: ['a', 'b', 'deep'], properties: {}, identity });
  });
  afterEach(() => f.cleanup());

  const doors = {
    drop: (id: string[], force: boolean) => dropTable(s, id, { force }),
    deregister: (id: string[], force: boolean) => deregisterTable(s, id, { force }),
    rename: (id: string[], force: boolean) => renameTable(s, { id, newName: 'renamed', force }),
  };

  for (const [door, run] of Object.entries(doors)) {
    it(`${door}: a protected table refuses with 409 / 19 and stays; force=true goes through`, async () => {
      expect(await protect('table', ['a', 't'])).toMatchObject({ protected: true, set_by: 'ana' });
      expect(await code(run(['a', 't'], false))).toBe(19);
      expect(await exists(['a', 't'])).toBe(true);
      expect(await code(run(['a', 't'], true))).toBe('ok');
      expect(await exists(['a', 't'])).toBe(false);
    });

    it(`${door}: an unprotected table needs no force, and unprotecting lifts the refusal`, async () => {
      await protect('table', ['a', 't']);
      await protect('table', ['a', 't'], false);
      expect(await code(run(['a', 't'], false))).toBe('ok');
    });
  }

  it('a forced rename carries the protection to the new name', async () => {
    await protect('table', ['a', 't']);
    await renameTable(s, { id: ['a', 't'], newName: 'renamed', force: true });
    expect(await describeProtection(s, 'table', ['a', 'renamed'])).toMatchObject({ protected: true });
    expect(await code(dropTable(s, ['a', 'renamed']))).toBe(19);
  });

  it('a re-created name does not inherit the protection of the table that had it', async () => {
    await protect('table', ['a', 't']);
    await dropTable(s, ['a', 't'], { force: true });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    expect(await describeProtection(s, 'table', ['a', 't'])).toMatchObject({ protected: false });
    expect(await code(dropTable(s, ['a', 't']))).toBe('ok');
  });

  it('a protected namespace refuses restrict and cascade drops; force drops it', async () => {
    await dropTable(s, ['a', 'b', 'deep']);
    await protect('namespace', ['a', 'b']);
    expect(await code(dropNamespace(s, { id: ['a', 'b'], mode: 'fail', behavior: 'restrict' }))).toBe(19);
    expect(await code(dropNamespace(s, { id: ['a', 'b'], mode: 'fail', behavior: 'restrict', force: true }))).toBe('ok');
  });

  it('a cascade checks every descendant first: refuses naming the protected one, and drops nothing', async () => {
    await protect('table', ['a', 'b', 'deep']);
    const refused = await dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' }).catch((e: Error & { code: number }) => e);
    expect(refused).toMatchObject({ code: 19 });
    expect((refused as Error).message).toContain('table ["a","b","deep"] is protected');
    expect(await exists(['a', 't'])).toBe(true);
    expect(await exists(['a', 'b', 'deep'])).toBe(true);
    expect((await s.registry.read(keys.namespace('default', ['a'])))?.value).toMatchObject({ state: 'active' });
  });

  it('a protected child namespace also stops the cascade of its parent', async () => {
    await protect('namespace', ['a', 'b']);
    expect(await code(dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade' }))).toBe(19);
  });

  it('a forced cascade drops everything and clears the descendants\' protection records', async () => {
    await protect('table', ['a', 'b', 'deep']);
    await protect('namespace', ['a', 'b']);
    await protect('namespace', ['a']);
    expect(await code(dropNamespace(s, { id: ['a'], mode: 'fail', behavior: 'cascade', force: true }))).toBe('ok');
    const left = await s.registry.store.list({ prefix: keys.protectionSubtree('default', []), limit: 100 });
    expect(left.objects.map((o) => o.key)).toEqual([]);
    // Re-created names start unprotected.
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    expect(await describeProtection(s, 'namespace', ['a'])).toMatchObject({ protected: false });
  });

  it('protecting something that does not exist answers not found and writes nothing', async () => {
    expect(await code(protect('table', ['a', 'nope']))).toBe(4);
    expect(await code(protect('namespace', ['zz']))).toBe(1);
    const written = await s.registry.store.list({ prefix: keys.protectionSubtree('default', []), limit: 100 });
    expect(written.objects).toEqual([]);
  });

  it('the table record says whether it may be protected: false when created, true from the first protection on', async () => {
    const flag = async (id: string[]) => (await readTable(s, id))!.value.mayBeProtected;
    expect(await flag(['a', 't'])).toBe(false);
    await protect('table', ['a', 't']);
    expect(await flag(['a', 't'])).toBe(true);
    // Unprotecting leaves it (the doors then read the record and find nothing): never a window
    // in which a record says false while a protection record exists.
    await protect('table', ['a', 't'], false);
    expect(await flag(['a', 't'])).toBe(true);
    await dropTable(s, ['a', 't']);
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    expect(await flag(['a', 't'])).toBe(false);
  });

  for (const [door, run] of Object.entries(doors)) {
    it(`${door}: a table record from before the flag still has its protection read`, async () => {
      await protect('table', ['a', 't']);
      const key = keys.table('default', ['a', 't']);
      const found = (await s.registry.read<TableRecord>(key))!;
      const { mayBeProtected: _flag, ...legacy } = found.value;
      await s.registry.replace(key, legacy, found.etag);
      expect(await code(run(['a', 't'], false))).toBe(19);
      expect(await exists(['a', 't'])).toBe(true);
    });
  }

  it('register with mode overwrite refuses to replace a protected table (it would deregister it) unless forced', async () => {
    await writeFakeDataset(await warehouseStore(s), 'imports/other.lance');
    await protect('table', ['a', 't']);
    const before = (await readTable(s, ['a', 't']))!.value.uid;
    const refused = registerTable(s, { id: ['a', 't'], location: 'imports/other.lance', mode: 'overwrite', properties: {} });
    await expect(refused).rejects.toMatchObject({ code: 19, message: expect.stringContaining('table ["a","t"] is protected') });
    expect((await readTable(s, ['a', 't']))!.value.uid).toBe(before);
    await registerTable(s, { id: ['a', 't'], location: 'imports/other.lance', mode: 'overwrite', properties: {}, force: true });
    expect((await readTable(s, ['a', 't']))!.value.path).toBe('imports/other.lance');
  });

  it('a stale record left by a dropped table protects nothing (it names the old uid)', async () => {
    await protect('table', ['a', 't']);
    const old = (await readTable(s, ['a', 't']))!.value.uid;
    await deregisterTable(s, ['a', 't'], { force: true });
    await declareTable(s, { id: ['a', 't'], properties: {}, identity });
    expect((await readTable(s, ['a', 't']))!.value.uid).not.toBe(old);
    const stale = await s.registry.read<{ uid: string }>(keys.protection('default', 'table', ['a', 't']));
    expect(stale?.value.uid).toBe(old);
    expect(await code(renameTable(s, { id: ['a', 't'], newName: 'x' }))).toBe('ok');
  });
});

/** Issue 26 item 7: DescribeNamespace reads the protection record only when the namespace may be protected. */
describe.each(['memory', 'fs'] as const)('DescribeNamespace and `mayBeProtected` (%s store)', (kind) => {
  let f: ServicesFixture | undefined;
  afterEach(async () => {
    await f?.cleanup();
    f = undefined;
  });

  it('answers protected once protected, and unprotected after, with the flag set before the record', async () => {
    f = await servicesOver(kind);
    const s = f.services;
    await createNamespace(s, { id: ['n'], mode: 'create', properties: { k: 'v' } });
    const nsKey = keys.namespace(s.project, ['n']);
    expect((await s.registry.read<NamespaceRecord>(nsKey))!.value.mayBeProtected).toBe(false);
    expect(await describeNamespace(s, ['n'])).toEqual({ properties: { k: 'v' }, protected: false });
    await setProtection(s, { kind: 'namespace', id: ['n'], protected: true, principal: 'ana' });
    expect((await s.registry.read<NamespaceRecord>(nsKey))!.value.mayBeProtected).toBe(true);
    expect(await describeNamespace(s, ['n'])).toEqual({ properties: { k: 'v' }, protected: true });
    await setProtection(s, { kind: 'namespace', id: ['n'], protected: false, principal: 'ana' });
    expect(await describeNamespace(s, ['n'])).toEqual({ properties: { k: 'v' }, protected: false });
  });

  it('the flag only spares describe a read: a protected namespace is still refused for drop, whatever its record says', async () => {
    f = await servicesOver(kind);
    const s = f.services;
    await createNamespace(s, { id: ['p'], mode: 'create', properties: {} });
    await createNamespace(s, { id: ['p', 'n'], mode: 'create', properties: {} });
    await setProtection(s, { kind: 'namespace', id: ['p', 'n'], protected: true, principal: 'ana' });
    for (const behavior of ['restrict', 'cascade'] as const) {
      expect(await code(dropNamespace(s, { id: ['p', 'n'], mode: 'fail', behavior }))).toBe(19);
    }
    expect(await code(dropNamespace(s, { id: ['p'], mode: 'fail', behavior: 'cascade' }))).toBe(19);
    // Even a record that (wrongly) says it cannot be protected: the drop reads the protection record itself.
    const nsKey = keys.namespace(s.project, ['p', 'n']);
    const found = (await s.registry.read<NamespaceRecord>(nsKey))!;
    await s.registry.replace(nsKey, { ...found.value, mayBeProtected: false }, found.etag);
    expect(await code(dropNamespace(s, { id: ['p', 'n'], mode: 'fail', behavior: 'restrict' }))).toBe(19);
    expect(await code(dropNamespace(s, { id: ['p'], mode: 'fail', behavior: 'cascade' }))).toBe(19);
    expect((await s.registry.read<NamespaceRecord>(nsKey))?.value.state).toBe('active');
  });

  it('a record written before the flag existed still reads its protection record', async () => {
    f = await servicesOver(kind);
    const s = f.services;
    await createNamespace(s, { id: ['old'], mode: 'create', properties: {} });
    await setProtection(s, { kind: 'namespace', id: ['old'], protected: true, principal: 'ana' });
    const nsKey = keys.namespace(s.project, ['old']);
    const found = (await s.registry.read<NamespaceRecord>(nsKey))!;
    const { mayBeProtected: _flag, ...legacy } = found.value;
    await s.registry.replace(nsKey, legacy, found.etag);
    expect(await describeNamespace(s, ['old'])).toEqual({ properties: {}, protected: true });
  });
});
