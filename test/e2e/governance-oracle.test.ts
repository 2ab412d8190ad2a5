import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, governedApp, type Answer } from '../support/governed-app.js';

/**
 * No existence oracle (brief rule 6): on destructive doors, "not yours" and "does not exist"
 * answer byte for byte the same (the `instance` request id aside). Create doors do the opposite.
 */
const comparable = (a: Answer) => ({
  status: a.status,
  headers: a.raw.headers,
  body: a.raw.body.toString('utf8').replace(/"instance":"[^"]*"/, '"instance":"…"'),
});

describe('destructive doors answer "not yours" exactly like "does not exist"', () => {
  let app: Awaited<ReturnType<typeof governedApp>>;
  let outsider: string;

  beforeAll(async () => {
    app = await governedApp();
    await app.arrange('POST', '/v1/projects', { name: 'acme' });
    await app.arrange('POST', '/v1/projects', { name: 'other' });
    await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: '/w/acme/main' });
    await app.arrange('POST', '/v1/warehouses', { name: 'spare', project: 'acme', storage_root: '/w/acme/spare' });
    outsider = await app.principal('outsider', { project: 'other', role: 'admin' });
  });

  // Each case: the door, how to make the object exist, and how to remove it again.
  const cases: { door: string; path: string; body?: unknown; create: [string, string, unknown][]; remove: [string, string, unknown][] }[] = [
    {
      door: 'DropTable',
      path: '/projects/acme/v1/table/ns1%24t/drop',
      create: [['POST', '/projects/acme/v1/namespace/ns1/create', {}], ['POST', '/projects/acme/v1/table/ns1%24t/declare', {}]],
      remove: [['POST', '/projects/acme/v1/table/ns1%24t/deregister', {}]],
    },
    {
      door: 'DeregisterTable',
      path: '/projects/acme/v1/table/ns2%24t/deregister',
      create: [['POST', '/projects/acme/v1/namespace/ns2/create', {}], ['POST', '/projects/acme/v1/table/ns2%24t/declare', {}]],
      remove: [['POST', '/projects/acme/v1/table/ns2%24t/deregister', {}]],
    },
    {
      door: 'RenameTable',
      path: '/projects/acme/v1/table/ns3%24t/rename',
      body: { new_table_name: 'u' },
      create: [['POST', '/projects/acme/v1/namespace/ns3/create', {}], ['POST', '/projects/acme/v1/table/ns3%24t/declare', {}]],
      remove: [['POST', '/projects/acme/v1/table/ns3%24t/deregister', {}]],
    },
    {
      door: 'DropNamespace',
      path: '/projects/acme/v1/namespace/ns4/drop',
      create: [['POST', '/projects/acme/v1/namespace/ns4/create', {}]],
      remove: [['POST', '/projects/acme/v1/namespace/ns4/drop', {}]],
    },
    {
      door: 'DeactivateWarehouse',
      path: '/v1/warehouses/w5/deactivate',
      body: { project: 'acme' },
      create: [['POST', '/v1/warehouses', { name: 'w5', project: 'acme', storage_root: '/w/acme/5' }]],
      remove: [['POST', '/v1/warehouses/w5/delete', { project: 'acme' }]],
    },
    {
      door: 'DeleteWarehouse',
      path: '/v1/warehouses/w6/delete',
      body: { project: 'acme', purge: true },
      create: [['POST', '/v1/warehouses', { name: 'w6', project: 'acme', storage_root: '/w/acme/6' }]],
      remove: [['POST', '/v1/warehouses/w6/delete', { project: 'acme' }]],
    },
    {
      door: 'DeleteProject',
      path: '/v1/projects/p7/delete',
      create: [['POST', '/v1/projects', { name: 'p7' }]],
      remove: [['POST', '/v1/projects/p7/delete', {}]],
    },
  ];

  for (const c of cases) {
    it(c.door, async () => {
      for (const [m, p, b] of c.create) await app.arrange(m, p, b);
      const notYours = await app.call('POST', c.path, c.body ?? {}, outsider);
      for (const [m, p, b] of c.remove) await app.arrange(m, p, b);
      const missingToOutsider = await app.call('POST', c.path, c.body ?? {}, outsider);
      const missingToAdmin = await app.call('POST', c.path, c.body ?? {}, ADMIN_KEY);
      expect(notYours.status).toBe(404);
      expect(comparable(notYours)).toEqual(comparable(missingToAdmin));
      expect(comparable(notYours)).toEqual(comparable(missingToOutsider));
    });
  }

  it('force / mode do not change the answer: authorization runs first and identically', async () => {
    await app.arrange('POST', '/projects/acme/v1/namespace/ns8/create', {});
    const plain = await app.call('POST', '/projects/acme/v1/namespace/ns8/drop', {}, outsider);
    const skip = await app.call('POST', '/projects/acme/v1/namespace/ns8/drop', { mode: 'skip', behavior: 'cascade' }, outsider);
    expect(comparable(plain)).toEqual(comparable(skip));
    expect(await app.arrange('POST', '/projects/acme/v1/namespace/ns8/describe', {})).toEqual({ properties: {}, protected: false });
  });

  it('create doors do the opposite: a missing parent is a 404 naming the door that creates it', async () => {
    const res = await app.call('POST', '/projects/acme/v1/namespace/nope%24child/create', {}, outsider);
    expect(res.status).toBe(404);
    expect(res.body.error).toContain('CreateNamespace');
    const denied = await app.call('POST', '/projects/acme/v1/namespace/fresh/create', {}, outsider);
    expect(denied.status).toBe(403);
  });
});
