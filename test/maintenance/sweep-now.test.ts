/**
 * SweepTable's answer when the table it resolved a moment ago is not walked
 * (lib/maintenance/sweep-now.ts): dropped meanwhile is a 404, a record storage could not read is
 * a 503 — decided on the walk's typed `scopeMissing`, never on the words of a problem, which may
 * quote a storage error that itself says "does not exist" (S3's NoSuchBucket). Nothing is queued
 * either way (the live jobs listing that follows proves it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceUnavailableError, TableNotFoundError } from '../../lib/errors.js';
import { queueTableSweep } from '../../lib/maintenance/sweep-now.js';
import { forEachTable } from '../../lib/maintenance/walker.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { jobContext } from '../../lib/queue/context.js';
import { keys } from '../../lib/registry/keys.js';
import { Registry } from '../../lib/registry/registry.js';
import { estate, tableWithAppends, type Estate } from './fixtures.js';

let current: Estate | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const ID = ['sales', 'orders'];

/** The registry's store, whose reads of `key` after the first answer `after()` (throw or nothing). */
function afterFirstRead(store: ObjectStore, key: string, after: () => Promise<undefined>): ObjectStore {
  let reads = 0;
  const get: ObjectStore['get'] = async (k) => {
    if (k === key && ++reads > 1) return after();
    return store.get(k);
  };
  // A proxy, not Object.create: the store's methods use private fields of the store itself.
  return new Proxy(store, {
    get: (target, name) => {
      if (name === 'get') return get;
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function setUp(after: () => Promise<undefined>) {
  const e = (current = await estate('fs'));
  await tableWithAppends(e.services, ID, 1);
  const store = afterFirstRead(e.registryStore, keys.table('default', ID), after);
  return { e, services: { ...e.services, registry: new Registry(store) } };
}

const liveJobs = async (e: Estate) => (await jobContext(e.services).queue.listLive({ limit: 100 })).jobs;

describe('SweepTable when the walk does not reach the table', () => {
  it('answers 503 when the record could not be read, even when the storage error says "does not exist"', async () => {
    const { e, services } = await setUp(async () => {
      throw Object.assign(new Error('The specified bucket does not exist'), { name: 'NoSuchBucket' });
    });
    const err = await queueTableSweep(services, ID).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as Error).message).toContain('The specified bucket does not exist');
    expect(await liveJobs(e)).toEqual([]);
  });

  it('answers 404 when the table was dropped between the lookup and the walk', async () => {
    const { e, services } = await setUp(async () => undefined);
    await expect(queueTableSweep(services, ID)).rejects.toBeInstanceOf(TableNotFoundError);
    expect(await liveJobs(e)).toEqual([]);
  });

  it('the walk says a missing scope in a field, and not for a scope it could not read', async () => {
    const e = (current = await estate('fs'));
    await tableWithAppends(e.services, ID, 1);
    const missing = await forEachTable(e.services, { scope: { table: ['sales', 'nope'] } }, async () => {});
    expect(missing).toMatchObject({ visited: 0, scopeMissing: true });
    const found = await forEachTable(e.services, { scope: { table: ID } }, async () => {});
    expect(found.visited).toBe(1);
    expect(found.scopeMissing).toBeUndefined();
    const store = afterFirstRead(e.registryStore, keys.table('default', ID), async () => {
      throw new Error('unreadable');
    });
    await store.get(keys.table('default', ID));
    const unreadable = await forEachTable({ ...e.services, registry: new Registry(store) }, { scope: { table: ID } }, async () => {});
    expect(unreadable.problems).toHaveLength(1);
    expect(unreadable.scopeMissing).toBeUndefined();
  });
});
