// @covers UpdateWarehouse, DeleteWarehouse, UpdateProject, DeleteProject, DescribeWarehouse, DescribeProject
/**
 * Protection on the control-plane rungs (docs/lifecycle.md): the stamp on project and warehouse
 * records, its doors' effects, and what a refusal leaves — on the memory and fs stores. The
 * HTTP matrix (test/e2e/protection-matrix.test.ts) covers authorization around it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { createProject, deleteProject, describeProject, updateProject } from '../../lib/catalog/control/projects.js';
import { createWarehouse, deleteWarehouse, describeWarehouse, updateWarehouse } from '../../lib/catalog/control/warehouses.js';
import { ALL_OPERATIONS } from '../../lib/contract/operations.js';
import type { Caller } from '../../lib/contract/request.js';
import { controlHandlers } from '../../lib/operations/handlers-control.js';
import { parseStorageRoot } from '../../lib/registry/storage-roots.js';
import { keys } from '../../lib/registry/keys.js';
import type { ProjectRecord } from '../../lib/registry/records.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

const ana: Caller = { principal: 'ana', platformAdmin: false, via: 'api-key' };
const root = parseStorageRoot;

/** One control-plane door called as the router calls it (already admitted). */
const door = (s: CatalogServices, operationId: keyof typeof controlHandlers, params: Record<string, string>, body: Record<string, unknown>) =>
  controlHandlers[operationId](
    {
      operation: ALL_OPERATIONS.find((o) => o.operationId === operationId)!,
      id: [],
      delimiter: '$',
      query: new URLSearchParams(),
      body,
      bytes: Buffer.alloc(0),
      identity: {},
      requestId: 'test',
      params,
      caller: ana,
    },
    s,
  );

describe.each(['memory', 'fs'] as const)('project and warehouse protection (%s store)', (kind) => {
  let f: ServicesFixture;
  let s: CatalogServices;
  beforeEach(async () => {
    f = await servicesOver(kind);
    s = f.services;
    await createProject(s, ana, { name: 'acme' });
    await createWarehouse(s, 'acme', { name: 'main', storageRoot: root('/w/acme/main') });
    await createWarehouse(s, 'acme', { name: 'spare', storageRoot: root('/w/acme/spare') });
  });
  afterEach(() => f.cleanup());

  it('a protected warehouse refuses delete (19, naming it) and stays; force deletes; the name made again is unprotected', async () => {
    expect(await updateWarehouse(s, 'acme', 'spare', { protected: true }, ana)).toMatchObject({ protected: true });
    const stamp = (await s.registry.read<{ protection?: unknown }>(keys.warehouse('acme', 'spare')))!.value.protection;
    expect(stamp).toMatchObject({ setBy: 'ana' });
    // Updating something else leaves it protected, with the first stamp.
    await updateWarehouse(s, 'acme', 'spare', { trashGraceDays: 2 }, { ...ana, principal: 'bo' });
    expect((await s.registry.read<{ protection?: unknown }>(keys.warehouse('acme', 'spare')))!.value.protection).toEqual(stamp);
    await expect(deleteWarehouse(s, 'acme', 'spare', { purge: true })).rejects.toMatchObject({
      code: 19,
      message: expect.stringContaining('warehouse "spare" is protected'),
    });
    expect(await describeWarehouse(s, 'acme', 'spare')).toMatchObject({ protected: true, trash_grace_days: 2 });
    expect(await deleteWarehouse(s, 'acme', 'spare', { force: true })).toMatchObject({ name: 'spare' });
    await createWarehouse(s, 'acme', { name: 'spare', storageRoot: root('/w/acme/spare') });
    expect(await describeWarehouse(s, 'acme', 'spare')).toMatchObject({ protected: false });
  });

  it('unprotecting clears the stamp; protected must be a boolean (13, nothing written)', async () => {
    await updateWarehouse(s, 'acme', 'spare', { protected: true }, ana);
    // Decoded by the door (lib/operations/handlers-control.ts) before the catalog is called.
    await expect(door(s, 'UpdateWarehouse', { warehouse: 'spare' }, { protected: 'no' })).rejects.toMatchObject({ code: 13, message: 'protected must be true or false' });
    expect(await describeWarehouse(s, 'acme', 'spare')).toMatchObject({ protected: true });
    expect(await updateWarehouse(s, 'acme', 'spare', { protected: false }, ana)).toMatchObject({ protected: false });
    expect((await s.registry.read<{ protection?: unknown }>(keys.warehouse('acme', 'spare')))!.value.protection).toBeUndefined();
    await deleteWarehouse(s, 'acme', 'spare');
  });

  it('the body is decoded before anything is read: a malformed field is a 400 even where the object is missing', async () => {
    // Since the doors decode in lib/operations (issue 25): these were 404 when the record was looked up first.
    await expect(door(s, 'UpdateWarehouse', { warehouse: 'nowhere' }, { protected: 'no' })).rejects.toMatchObject({ code: 13, message: 'protected must be true or false' });
    await expect(door(s, 'BindNamespace', { warehouse: 'nowhere' }, { namespace: 'n', properties: { a: 1 } })).rejects.toMatchObject({ code: 13, message: 'properties.a must be a string' });
    await expect(door(s, 'UpdateWarehouse', { warehouse: 'nowhere' }, {})).rejects.toMatchObject({ code: 1, message: expect.stringContaining('does not exist') });
  });

  it('a protected project refuses delete before its contents are looked at; force then meets the usual not-empty rule', async () => {
    await createProject(s, ana, { name: 'empty', protected: true });
    expect(await describeProject(s, 'empty')).toMatchObject({ protected: true });
    await expect(deleteProject(s, 'empty')).rejects.toMatchObject({ code: 19, message: expect.stringContaining('project "empty" is protected') });
    expect(await deleteProject(s, 'empty', { force: true })).toEqual({});
    await createProject(s, ana, { name: 'empty' });
    expect((await describeProject(s, 'empty')).protected).toBe(false);

    await updateProject(s, 'acme', { protected: true }, ana);
    await expect(deleteProject(s, 'acme')).rejects.toMatchObject({ code: 19 });
    // Force overrides protection and nothing else: a project with warehouses still refuses (3).
    await expect(deleteProject(s, 'acme', { force: true })).rejects.toMatchObject({ code: 3 });
    expect((await s.registry.read<ProjectRecord>(keys.project('acme')))!.value.protection).toMatchObject({ setBy: 'ana' });
  });
});
