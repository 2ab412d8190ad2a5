// @covers CreateNamespace, CreateTable, CountTableRows, DeclareTable, ListNamespaces
/**
 * A project-scoped `rask registry export` (issue #30, item 2 residue) carries exactly what the
 * project needs and nothing of another project: its own keys (tree, location claims, grants …),
 * the principals holding grants in it with their API keys, and its own entries of the
 * storage-claims index; never another project's records, grants or roots, nor a principal
 * without a grant in it. Imported into an empty registry, local → S3 fake → local, it gives a
 * working project: its tables read through the official client with the imported API keys, and
 * the imported grants apply (a reader may read and not write, a writer may write, a principal of
 * another project only is unknown). Real local servers with RASK_AUTH=keys.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../functions/cli.js';
import { startLocalServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';
import { createS3Fake } from '../support/s3-fake.js';

const ADMIN = 'admin-key-for-project-export-test-0123456';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const config = (dataDir: string) =>
  loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dataDir, RASK_HOST: '127.0.0.1', RASK_LOG_LEVEL: 'warn', RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));

async function cli(dataDir: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const saved = { ...process.env };
  process.env.RASK_DATA_DIR = dataDir;
  process.env.RASK_LOG_LEVEL = 'error';
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const error = vi.spyOn(console, 'error').mockImplementation(() => {});
  try {
    const code = await main(args);
    return { code, out: log.mock.calls.map((c) => String(c[0])).join('\n'), err: error.mock.calls.map((c) => String(c[0])).join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    process.env = saved;
  }
}

const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .slice(1, -1)
    .map((l) => JSON.parse(l) as { k: string; b: string });

async function call(url: string, method: string, p: string, key: string, body?: unknown) {
  const res = await fetch(url + p, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('registry export --project: what the project depends on, nothing of another project', () => {
  it('local → S3 → local: the imported project works (tables read through the official client, grants apply) and holds nothing of the other project', { timeout: 180_000 }, async () => {
    const fake = createS3Fake({ target: S3Client });
    const work = await mkdtemp(path.join(tmpdir(), 'rask-export-project-'));
    dirs.push(work);
    const a = path.join(work, 'a');
    const b = path.join(work, 'b');
    const keys: Record<string, { key: string; id: string }> = {};
    const server = await startLocalServer(config(a));
    try {
      const admin = async (method: string, p: string, body: unknown = {}) => {
        const res = await call(server.url, method, p, ADMIN, body);
        expect([p, res.status, res.body]).toMatchObject([p, 200, expect.anything()]);
        return res.body;
      };
      await admin('POST', '/v1/projects', { name: 'acme' });
      await admin('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: path.join(a, 'projects', 'acme', 'main') });
      for (const name of ['alice', 'bob', 'carol']) {
        await admin('POST', '/v1/principals', { name });
        const minted = await admin('POST', `/v1/principals/${name}/keys`, {});
        keys[name] = { key: minted.api_key, id: minted.key_id };
      }
      // alice reads acme, carol writes acme and reads default, bob only reads default.
      await admin('POST', '/v1/grants', { project: 'acme', principal: 'alice', role: 'reader' });
      await admin('POST', '/v1/grants', { project: 'acme', principal: 'carol', role: 'writer' });
      await admin('POST', '/v1/grants', { principal: 'carol', role: 'reader' });
      await admin('POST', '/v1/grants', { principal: 'bob', role: 'reader' });
      const acme = await lancedb.connectNamespace('rest', { uri: `${server.url}/projects/acme`, headers: { 'x-api-key': keys.carol!.key } });
      await acme.createNamespace(['shop']);
      await acme.createTable('orders', rows(0, 5), ['shop']);
      const home = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': ADMIN } });
      await home.createNamespace(['secret']);
      await home.createTable('payroll', rows(0, 3), ['secret']);
    } finally {
      await server.close();
    }

    const first = path.join(work, 'acme-1.ndjson');
    const second = path.join(work, 'acme-2.ndjson');
    const exported = await cli(a, ['registry', 'export', first, '--project', 'acme', '--json']);
    expect(exported.code, exported.err + exported.out).toBe(0);
    const lines = await records(first);
    const keyNames = lines.map((l) => l.k);
    // Confinement: the project's keys and its dependencies, nothing else.
    for (const k of keyNames) expect(k, k).toMatch(/^(projects\/acme$|p\/acme\/|principals\/(alice|carol)$|apikeys\/|storage\/claims$)/);
    expect(keyNames.filter((k) => k.startsWith('principals/')).sort()).toEqual(['principals/alice', 'principals/carol']);
    expect(keyNames.filter((k) => k.startsWith('apikeys/')).sort()).toEqual([`apikeys/${keys.alice!.id}`, `apikeys/${keys.carol!.id}`].sort());
    expect(lines.filter((l) => l.b.includes('"secret"') || l.b.includes('payroll') || l.b.includes('"bob"')).map((l) => l.k), 'another project shows through').toEqual([]);
    const claims = JSON.parse(lines.find((l) => l.k === 'storage/claims')!.b).claims as { project: string }[];
    expect(claims.length).toBeGreaterThan(0);
    expect(claims.every((c) => c.project === 'acme')).toBe(true);
    expect(keyNames.some((k) => k.startsWith('p/acme/loc/')), 'the location claims of its tables').toBe(true);
    expect(keyNames).toContain('p/acme/grants/carol');

    // local → S3: into an empty S3 registry, then exported from there.
    const s3 = ['--registry-bucket', 'moved', '--registry-prefix', 'registry/'];
    const intoS3 = await cli(a, ['registry', 'import', first, ...s3, '--json']);
    expect(intoS3.code, intoS3.err + intoS3.out).toBe(0);
    expect((await cli(a, ['registry', 'export', second, '--project', 'acme', ...s3, '--json'])).code).toBe(0);
    const again = await records(second);
    // Byte for byte, but for the storage-claims index: the target's own record, with the project's entries merged in.
    const withoutIndex = (ls: { k: string; b: string }[]) => ls.filter((l) => l.k !== 'storage/claims');
    expect(withoutIndex(again)).toEqual(withoutIndex(lines));
    expect(JSON.parse(again.find((l) => l.k === 'storage/claims')!.b).claims).toEqual(claims);
    // A second import of the project into the registry that now holds it is refused and writes nothing.
    const before = fake.bucketContents('moved');
    expect(JSON.parse((await cli(a, ['registry', 'import', first, ...s3, '--json'])).out).error).toMatch(/not empty/);
    expect(fake.bucketContents('moved')).toEqual(before);

    // S3 → local: a fresh data directory, the warehouse's files copied as an operator would.
    const from = JSON.parse(lines.find((l) => l.k === 'p/acme/w/main')!.b).storage.path as string;
    const to = path.join(b, 'projects', 'acme', 'main');
    await cp(from, to, { recursive: true });
    const intoLocal = await cli(b, ['registry', 'import', second, '--map-storage', `file:${from}=file:${to}`, '--json']);
    expect(intoLocal.code, intoLocal.err + intoLocal.out).toBe(0);

    const served = await startLocalServer(config(b));
    try {
      const as = (who: string) => lancedb.connectNamespace('rest', { uri: `${served.url}/projects/acme`, headers: { 'x-api-key': keys[who]!.key } });
      // The reader reads, through the official client, with the key made on the first server.
      const reader = await as('alice');
      expect(await (await reader.openTable('orders', ['shop'])).countRows()).toBe(5);
      // Grants apply: the reader may not write, the writer may.
      const refused = await call(served.url, 'POST', '/projects/acme/v1/table/shop%24new/declare?delimiter=%24', keys.alice!.key, {});
      expect([refused.status, refused.body.code]).toEqual([403, 15]);
      const writer = await as('carol');
      await (await writer.openTable('orders', ['shop'])).add(rows(5, 2));
      expect(await (await reader.openTable('orders', ['shop'])).countRows()).toBe(7);
      // A principal of the other project only is unknown here, and the other project's tables never came.
      expect((await call(served.url, 'GET', '/projects/acme/v1/namespace/shop/table/list', keys.bob!.key)).status).toBe(401);
      const home = await lancedb.connectNamespace('rest', { uri: served.url, headers: { 'x-api-key': ADMIN } });
      expect((await home.listNamespaces([])).namespaces).not.toContain('secret');
      // carol's grant in the other project did not come with her.
      const elsewhere = await lancedb.connectNamespace('rest', { uri: served.url, headers: { 'x-api-key': keys.carol!.key } });
      await expect(elsewhere.listNamespaces([])).rejects.toThrow(/may not/);
    } finally {
      await served.close();
    }
    fake.mock.restore();
  });
});
