/**
 * Defect 3 of issue #8: the default warehouse record stored the absolute root of the first
 * start, so a server started on a copy (`cp -a`) of the data directory served, and dropped,
 * the ORIGINAL directory's tables. The root is now stored relative to the data directory; a
 * record from before that names an absolute root, which is adopted when it is this directory's
 * own and refused (naming both paths) when it is not.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { startLocalServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';
import { keys } from '../../lib/registry/keys.js';
import type { WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { ipcRows } from '../data/fixtures.js';
import { TableApi } from '../support/data-http.js';
import type { TestServer } from '../support/server.js';

const run = promisify(execFile);
const dirs: string[] = [];

afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), 'rask-copy-'));
  dirs.push(d);
  return d;
}

async function start(dataDir: string) {
  const running = await startLocalServer(
    loadLocalConfig({ RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_DATA_DIR: dataDir, RASK_JOBS_INTERVAL_MS: '0' }),
  );
  const server = {
    ...running,
    async request(method: string, p: string, body?: string | Buffer, headers: Record<string, string> = {}) {
      // A JSON client: a text body goes as application/json (lib/http/content-type.ts).
      const res = await fetch(running.url + p, { method, body, headers: typeof body === 'string' ? { 'content-type': 'application/json', ...headers } : headers });
      const bytes = Buffer.from(await res.arrayBuffer());
      const text = bytes.toString('utf8');
      return { status: res.status, headers: res.headers, text, bytes, json: () => JSON.parse(text) };
    },
    stop: () => running.close(),
  } as unknown as TestServer;
  return server;
}

/** A data directory holding namespace `n` and table `n.t` with 4 rows; answers the table's location. */
async function seed(dataDir: string): Promise<string> {
  const server = await start(dataDir);
  try {
    expect((await server.request('POST', '/v1/namespace/n/create', '{}')).status).toBe(200);
    const t = new TableApi(server, ['n', 't']);
    const res = await t.arrow('create', ipcRows(4));
    expect(res.status, res.text).toBe(200);
    return (await t.describe()).location as string;
  } finally {
    await server.stop();
  }
}

const warehouseKey = keys.warehouse('default', 'default');

describe('a copied data directory', () => {
  it('serves and drops its own tables, never the original directory’s', async () => {
    const original = path.join(await tempDir(), 'data');
    const originalLocation = await seed(original);
    expect(originalLocation.startsWith(original + path.sep)).toBe(true);

    const copy = path.join(await tempDir(), 'copy');
    await run('cp', ['-a', original, copy]);
    const server = await start(copy);
    try {
      const t = new TableApi(server, ['n', 't']);
      const location = (await t.describe()).location as string;
      expect(location).toBe(path.join(copy, path.relative(original, originalLocation)));
      expect(await t.count()).toBe(4);
      const dropped = await t.post('drop');
      expect(dropped.status, dropped.text).toBe(200);
      expect(existsSync(location)).toBe(false);
    } finally {
      await server.stop();
    }
    // The original's bytes are untouched, and its server still reads them.
    expect((await readdir(path.join(originalLocation, '_versions'))).length).toBeGreaterThan(0);
    const again = await start(original);
    try {
      expect(await new TableApi(again, ['n', 't']).count()).toBe(4);
    } finally {
      await again.stop();
    }
  });

  it('stores the default warehouse root relative to the data directory', async () => {
    const dataDir = await tempDir();
    await seed(dataDir);
    const record = await new Registry(new FsObjectStore(path.join(dataDir, 'registry'))).read<WarehouseRecord>(warehouseKey);
    expect(record?.value.storage).toEqual({ kind: 'file', path: path.join('warehouses', 'default') });
  });

  it('adopts an absolute root of its own from an older start, and refuses one outside it, naming both paths', async () => {
    const original = path.join(await tempDir(), 'data');
    await seed(original);
    // What a server before this change recorded: the absolute root of the first start.
    const registry = new Registry(new FsObjectStore(path.join(original, 'registry')));
    const found = (await registry.read<WarehouseRecord>(warehouseKey))!;
    const absoluteRoot = path.join(original, 'warehouses', 'default');
    await registry.replace(warehouseKey, { ...found.value, storage: { kind: 'file', path: absoluteRoot } }, found.etag);

    const copy = path.join(await tempDir(), 'copy');
    await run('cp', ['-a', original, copy]);
    const refused = await start(copy).then(
      async (s) => {
        await s.stop();
        return undefined;
      },
      (err: unknown) => err as Error,
    );
    expect(refused, 'a copy of an old-format directory must not start').toBeInstanceOf(Error);
    expect(refused!.message).toContain(absoluteRoot);
    expect(refused!.message).toContain(copy);

    // The original adopts its own absolute root as a relative one and serves as before.
    const server = await start(original);
    try {
      expect(await new TableApi(server, ['n', 't']).count()).toBe(4);
    } finally {
      await server.stop();
    }
    const adopted = await registry.read<WarehouseRecord>(warehouseKey);
    expect(adopted?.value.storage).toEqual({ kind: 'file', path: path.join('warehouses', 'default') });
  });
});
