import { rm } from 'node:fs/promises';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A stock client reaches a project through its base URI (`<endpoint>/projects/acme`) with no
 * change; plain `/v1` stays the default project. Tables land under the project's warehouse.
 */
describe('project base URIs with connectNamespace("rest")', () => {
  let server: TestServer;
  let root: string;

  beforeAll(async () => {
    server = await startTestServer();
    root = path.join(server.dataDir, 'projects', 'acme', 'main');
    await server.request('POST', '/v1/projects', JSON.stringify({ name: 'acme' }));
    await server.request('POST', '/v1/warehouses', JSON.stringify({ name: 'main', project: 'acme', storage_root: root }));
  });
  afterAll(async () => {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('keeps the projects apart: same names, different catalogs and storage', async () => {
    const acme = await lancedb.connectNamespace('rest', { uri: `${server.url}/projects/acme` });
    const plain = await lancedb.connectNamespace('rest', { uri: server.url });
    await acme.createNamespace(['sales']);
    await plain.createNamespace(['sales']);
    await acme.createNamespace(['sales', 'eu']);
    expect((await acme.listNamespaces(['sales'])).namespaces).toEqual(['eu']);
    expect((await plain.listNamespaces(['sales'])).namespaces).toEqual([]);

    const t = await acme.createTable('orders', [{ id: 1, amount: 2.5 }, { id: 2, amount: 4 }], ['sales']);
    expect(await t.countRows()).toBe(2);
    await t.add([{ id: 3, amount: 1 }]);
    expect((await acme.tableNames(['sales']))).toEqual(['orders']);
    expect((await plain.tableNames(['sales']))).toEqual([]);

    const described = await server.request('POST', '/projects/acme/v1/table/sales%24orders/describe', '{}');
    expect(described.status).toBe(200);
    expect(described.json().location.startsWith(root)).toBe(true);
    const reopened = await (await lancedb.connectNamespace('rest', { uri: `${server.url}/projects/acme/` })).openTable('orders', ['sales']);
    expect(await reopened.countRows()).toBe(3);
  });

  it('answers 404 naming the project door for a project that does not exist', async () => {
    const ghost = await lancedb.connectNamespace('rest', { uri: `${server.url}/projects/ghost` });
    await expect(ghost.createNamespace(['x'])).rejects.toThrow(/project "ghost" does not exist/);
    const res = await server.request('POST', '/projects/ghost/v1/namespace/x/create', '{}');
    expect(res.status).toBe(404);
    expect(res.json().error).toContain('POST /v1/projects');
  });

  it('refuses top-level creates in a project without a warehouse, naming the warehouse door', async () => {
    await server.request('POST', '/v1/projects', JSON.stringify({ name: 'empty' }));
    const res = await server.request('POST', '/projects/empty/v1/namespace/x/create', '{}');
    expect(res.status).toBe(404);
    expect(res.json().error).toContain('POST /v1/warehouses');
  });
});
