// @covers CreateNamespace, ListNamespaces, DescribeNamespace, DropNamespace
import * as lancedb from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** Namespaces through LanceDB's official REST client, against the real local server. */
describe('namespaces via connectNamespace("rest")', () => {
  let server: TestServer;
  let db: lancedb.Connection;

  // A server per test, so each runs alone and in any order.
  beforeEach(async () => {
    server = await startTestServer();
    db = await lancedb.connectNamespace('rest', { uri: server.url });
  });
  afterEach(() => server.stop());
  /** prod and prod.sales (owner ana), as the first test creates them. */
  const prodSales = async () => {
    await db.createNamespace(['prod']);
    await db.createNamespace(['prod', 'sales'], { properties: { owner: 'ana' } });
  };

  it('creates nested namespaces and refuses a duplicate as already exists', async () => {
    await db.createNamespace(['prod']);
    await db.createNamespace(['prod', 'sales'], { properties: { owner: 'ana' } });
    await expect(db.createNamespace(['prod'])).rejects.toThrow(/already exists/i);
    await expect(db.createNamespace(['prod'], { mode: 'exist_ok' })).resolves.toBeDefined();
    expect((await db.listNamespaces(['prod'])).namespaces).toEqual(['sales']);
  });

  it('refuses a child of a missing parent with namespace not found', async () => {
    await expect(db.createNamespace(['nope', 'child'])).rejects.toThrow(/Namespace not found/i);
  });

  it('describes properties, and {} for the root', async () => {
    await prodSales();
    expect((await db.describeNamespace(['prod', 'sales'])).properties).toEqual({ owner: 'ana' });
    expect((await db.describeNamespace([])).properties ?? {}).toEqual({});
    await expect(db.describeNamespace(['missing'])).rejects.toThrow(/Namespace not found/i);
  });

  it('pages through 27 children in byte order with no gaps or duplicates', async () => {
    await db.createNamespace(['big']);
    const names = [
      ...Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, '0')}`),
      'with space',
      'With Capital',
      'UPPER',
      'lower',
      'é-accent',
      'dot.name',
      'slash/name',
    ];
    for (const n of names) await db.createNamespace(['big', n]);
    const byteOrder = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await db.listNamespaces(['big'], { limit: 4, ...(token ? { pageToken: token } : {}) });
      expect(page.namespaces.length).toBeLessThanOrEqual(4);
      seen.push(...page.namespaces);
      token = page.pageToken ?? undefined;
      pages++;
    } while (token);
    expect(seen).toEqual(byteOrder);
    expect(pages).toBe(Math.ceil(names.length / 4));
    // No limit: everything in one answer (LanceDB never follows tokens).
    expect((await db.listNamespaces(['big'])).namespaces).toEqual(byteOrder);
  });

  it('refuses a Restrict drop of a non-empty namespace, naming what is inside', async () => {
    await prodSales();
    await expect(db.dropNamespace(['prod'])).rejects.toThrow(/not empty.*sales/is);
    expect((await db.listNamespaces(['prod'])).namespaces).toEqual(['sales']);
  });

  it('drops with Cascade, including all descendants', async () => {
    await prodSales();
    await db.createNamespace(['prod', 'sales', 'deep']);
    await db.dropNamespace(['prod'], { behavior: 'cascade' });
    await expect(db.describeNamespace(['prod'])).rejects.toThrow(/Namespace not found/i);
    await expect(db.describeNamespace(['prod', 'sales', 'deep'])).rejects.toThrow(/Namespace not found/i);
    // The name is free again and starts empty.
    await db.createNamespace(['prod']);
    expect((await db.listNamespaces(['prod'])).namespaces).toEqual([]);
  });

  it('skips a missing namespace with mode skip and fails without it', async () => {
    await expect(db.dropNamespace(['ghost'], { mode: 'skip' })).resolves.toBeDefined();
    await expect(db.dropNamespace(['ghost'])).rejects.toThrow(/Namespace not found/i);
  });

  it('refuses to drop the root', async () => {
    await expect(db.dropNamespace([])).rejects.toThrow(/root namespace cannot be dropped/i);
  });

  it('works with a base-path prefix and a trailing slash in the uri', async () => {
    const prefixed = await lancedb.connectNamespace('rest', { uri: `${server.url}/lance/` });
    await prefixed.createNamespace(['via-prefix']);
    expect((await db.listNamespaces([])).namespaces).toContain('via-prefix');
  });

  it('honours a custom multi-character delimiter', async () => {
    const colons = await lancedb.connectNamespace('rest', { uri: server.url, extraProperties: { delimiter: '::' } });
    await colons.createNamespace(['c1']);
    await colons.createNamespace(['c1', 'c$2']);
    expect((await db.listNamespaces(['c1'])).namespaces).toEqual(['c$2']);
  });
});
