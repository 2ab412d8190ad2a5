/**
 * Defect 2 of issue #8: a symbolic link in a warehouse let the catalog read, write and delete
 * outside it (RegisterTable accepted a location that was or passed through a link; DropTable
 * then deleted the files the link pointed at). The catalog must refuse links on every path the
 * filesystem store resolves, and a drop must never follow one out of the root.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeIpc } from '../../lib/data/arrow.js';
import { loadLanceDb } from '../../lib/adapters/lance/lancedb.js';
import { ipcRows } from '../data/fixtures.js';
import { expectError, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let outside: string;
let root: string;

beforeAll(async () => {
  server = await startTestServer();
  root = path.join(server.dataDir, 'warehouses', 'default');
  // The warehouse root is made lazily by the first table; the links below are planted before any.
  await mkdir(root, { recursive: true });
  outside = await mkdtemp(path.join(tmpdir(), 'rask-outside-'));
  // A real Lance dataset outside the data directory.
  const db = await loadLanceDb().connect(outside);
  (await db.createTable('victim', decodeIpc(ipcRows(5)))).close();
  await writeFile(path.join(outside, 'precious.txt'), 'keep me');
  expect((await server.request('POST', '/v1/namespace/s/create', '{}')).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await rm(outside, { recursive: true, force: true });
});

const register = (name: string, location: string) =>
  server.request('POST', `/v1/table/s%24${name}/register`, JSON.stringify({ location }), { 'content-type': 'application/json' });

describe('symbolic links in a warehouse', () => {
  it('RegisterTable refuses a location that is a link to a dataset outside the root (400 / 13)', async () => {
    await symlink(path.join(outside, 'victim.lance'), path.join(root, 'linked.lance'));
    const body = expectError(await register('a', 'linked.lance'), 400, 13);
    expect(body.error).toMatch(/symbolic link/);
    expect(body.error).not.toContain(outside);
    expectError(await register('a2', path.join(root, 'linked.lance')), 400, 13);
    expect((await server.request('POST', '/v1/table/s%24a/exists')).status).toBe(404);
  });

  it('RegisterTable refuses a location that passes through a linked directory (400 / 13)', async () => {
    await symlink(outside, path.join(root, 'linkdir'));
    const body = expectError(await register('b', 'linkdir/victim.lance'), 400, 13);
    expect(body.error).toMatch(/symbolic link/);
    expect((await server.request('POST', '/v1/table/s%24b/exists')).status).toBe(404);
  });

  it('DropTable does not follow a link planted inside the table: the outside files survive', async () => {
    const t = new TableApi(server, ['s', 'planted']);
    expect((await t.arrow('create', ipcRows(3))).status).toBe(200);
    const location = (await t.describe()).location as string;
    // A linked directory and a linked file inside the table's directory.
    await symlink(outside, path.join(location, 'data', 'escape'));
    await symlink(path.join(outside, 'precious.txt'), path.join(location, 'precious-link.txt'));
    const dropped = await t.post('drop');
    expect(dropped.status, dropped.text).toBe(200);
    expect(await readFile(path.join(outside, 'precious.txt'), 'utf8')).toBe('keep me');
    const db = await loadLanceDb().connect(outside);
    const victim = await db.openTable('victim');
    expect(await victim.countRows()).toBe(5);
    victim.close();
    // The links themselves are gone with the table; nothing of it is left.
    expect(existsSync(path.join(location, 'data', 'escape'))).toBe(false);
    expect(existsSync(location)).toBe(false);
  });

  it('a table whose directory was replaced by a link is neither read nor written through it', async () => {
    const t = new TableApi(server, ['s', 'swapped']);
    expect((await t.arrow('create', ipcRows(3))).status).toBe(200);
    const location = (await t.describe()).location as string;
    await rm(location, { recursive: true });
    await symlink(path.join(outside, 'victim.lance'), location);
    expectError(await t.post('query', { k: 10 }), 400, 13);
    expectError(await t.arrow('insert', ipcRows(2, 100)), 400, 13);
    const dropped = await t.post('drop');
    expect(dropped.status, dropped.text).toBe(200);
    const db = await loadLanceDb().connect(outside);
    const victim = await db.openTable('victim');
    expect(await victim.countRows()).toBe(5);
    victim.close();
  });
});
