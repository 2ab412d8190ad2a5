import { describe, expect, it, vi } from 'vitest';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { buildApp } from '../../lib/app/build.js';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { memoryAppOptions } from '../support/governed-app.js';
import { keys } from '../../lib/registry/keys.js';
import { LAYOUT_VERSION, openRegistry } from '../../lib/registry/layout.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';

const spec = {
  project: 'default',
  warehouse: 'default',
  storage: { kind: 'file' as const, path: '/w' },
  managedVersioning: true,
  trashGraceDays: 0,
};

describe('openRegistry (start-up)', () => {
  it('sets up a fresh registry: layout, project and warehouse records', async () => {
    const registry = new Registry(new MemoryObjectStore());
    const { warehouse } = await openRegistry(registry, spec);
    expect(warehouse).toMatchObject({ kind: 'warehouse', name: 'default', storage: spec.storage });
    expect((await registry.read<{ version: number }>(keys.layout()))?.value.version).toBe(LAYOUT_VERSION);
    expect(await registry.read(keys.project('default'))).toBeDefined();
  });

  it('on a registry already set up, only reads (nothing is written) and answers the stored warehouse', async () => {
    const store = new MemoryObjectStore();
    const registry = new Registry(store);
    await openRegistry(registry, spec);
    const key = keys.warehouse('default', 'default');
    const stored = (await registry.read<WarehouseRecord>(key))!;
    await registry.replace(key, { ...stored.value, trashGraceDays: 3 }, stored.etag);
    const writes = [vi.spyOn(store, 'putIfAbsent'), vi.spyOn(store, 'putIfMatch'), vi.spyOn(store, 'put')];
    const { warehouse: again } = await openRegistry(registry, { ...spec, trashGraceDays: 0 });
    expect(again.trashGraceDays).toBe(3); // the stored record wins over the configuration
    for (const w of writes) expect(w).not.toHaveBeenCalled();
  });

  it('writes only the missing record', async () => {
    const registry = new Registry(new MemoryObjectStore());
    await openRegistry(registry, spec);
    const project = (await registry.read(keys.project('default')))!;
    await registry.remove(keys.warehouse('default', 'default'), (await registry.read(keys.warehouse('default', 'default')))!.etag);
    await openRegistry(registry, spec);
    expect((await registry.read(keys.project('default')))!.etag).toBe(project.etag);
    expect(await registry.read(keys.warehouse('default', 'default'))).toBeDefined();
  });

  it('refuses a registry with a newer layout and writes nothing to it', async () => {
    const store = new MemoryObjectStore();
    const registry = new Registry(store);
    await registry.create(keys.layout(), { version: LAYOUT_VERSION + 1, createdAt: 'x' });
    await expect(openRegistry(registry, spec)).rejects.toMatchObject({ code: 18 });
    expect(await registry.read(keys.project('default'))).toBeUndefined();
  });
});

describe('a process started on an initialised registry', () => {
  it("answers its first request without reading the project record again (start-up's read is cached)", async () => {
    const store = new MemoryObjectStore();
    const options = { ...memoryAppOptions(store, () => new MemoryObjectStore(), { vend: async () => ({}) }), handlers: allHandlers };
    await buildApp(options); // the first container sets the registry up
    const gets = vi.spyOn(store, 'get');
    const { router } = await buildApp(options); // a cold start of another
    expect(gets.mock.calls.map((c) => c[0])).toContain(keys.project('default'));
    gets.mockClear();
    const res = await router({ method: 'GET', rawPath: '/v1/namespace/%24/list', rawQuery: '', headers: {}, body: Buffer.alloc(0), requestId: 'r1' });
    expect(res.status, res.body.toString()).toBe(200);
    expect(gets.mock.calls.map((c) => c[0])).not.toContain(keys.project('default'));
  });
});
