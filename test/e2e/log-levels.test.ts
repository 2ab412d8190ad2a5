/**
 * Every line of `npm start` goes through the one logger (lib/observability/logger.ts), so
 * RASK_LOG_LEVEL and RASK_LOG_FORMAT hold for all of them (docs/operations.md, "Logging"):
 * `silent` prints nothing, even for refused requests; `pretty` prints no raw JSON; `debug` adds
 * what tracing a request needs — the guard's decision, the registry keys read and written, and
 * the time of each step — all carrying the request id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ipcRows } from '../data/fixtures.js';

const repo = path.resolve(import.meta.dirname, '../..');
const ADMIN = 'log-admin-key-0123456789abcdef';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface Spawned {
  child: ChildProcess;
  url: string;
  output: () => string[];
}

const started: { child: ChildProcess; dir: string }[] = [];
afterEach(async () => {
  for (const { child, dir } of started.splice(0)) {
    if (child.exitCode === null) {
      const closed = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGTERM');
      await closed;
    }
    await rm(dir, { recursive: true, force: true });
  }
});

/** `npm start`'s entry with keys auth, on a free port, ready once it answers (it may print nothing). */
async function start(env: Record<string, string>): Promise<Spawned> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rask-loglevel-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/local-server.ts'], {
    cwd: repo,
    env: { PATH: process.env.PATH, RASK_JOBS_INTERVAL_MS: '0', RASK_PORT: String(port), RASK_DATA_DIR: dir, RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push({ child, dir });
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${url}/v1/namespace/%24/list`, { headers: { 'x-api-key': ADMIN } }).then((r) => r.status === 200, () => false);
    if (up) break;
    if (i > 200 || child.exitCode !== null) throw new Error(`server did not start: ${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => text.split('\n').filter((l) => l.length > 0) };
}

/** A principal with a key and no grants, refused (403) on a namespace of the default project. */
async function refusedRequest(url: string): Promise<void> {
  const admin = { 'x-api-key': ADMIN, 'content-type': 'application/json' };
  await fetch(`${url}/v1/principals`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'nobody' }) });
  const key = ((await (await fetch(`${url}/v1/principals/nobody/keys`, { method: 'POST', headers: admin, body: '{}' })).json()) as { api_key: string }).api_key;
  const res = await fetch(`${url}/v1/namespace/secret/create`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(403);
  // Lines are written synchronously before the answer, but give the pipe a moment to deliver them.
  await new Promise((r) => setTimeout(r, 300));
}

describe('RASK_LOG_LEVEL and RASK_LOG_FORMAT hold for every line', () => {
  it('silent: nothing at all is printed, not even for a refused request', async () => {
    const s = await start({ RASK_LOG_LEVEL: 'silent', RASK_LOG_FORMAT: 'json' });
    await refusedRequest(s.url);
    expect(s.output()).toEqual([]);
  });

  it('pretty: no line is raw JSON, the authorization decision included', async () => {
    const s = await start({ RASK_LOG_LEVEL: 'info', RASK_LOG_FORMAT: 'pretty' });
    await refusedRequest(s.url);
    const lines = s.output();
    expect(lines.some((l) => / authorization /.test(l) && /decision=deny/.test(l))).toBe(true);
    expect(lines.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
  });

  it("LanceDB's warning for a dataset the server creates on purpose is not printed", async () => {
    const s = await start({ RASK_LOG_LEVEL: 'info', RASK_LOG_FORMAT: 'pretty' });
    const admin = { 'x-api-key': ADMIN };
    const ns = await fetch(`${s.url}/v1/namespace/made/create`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
    expect(ns.status).toBe(200);
    const created = await fetch(`${s.url}/v1/table/made%24t/create`, { method: 'POST', headers: admin, body: ipcRows(3) });
    expect(created.status, await created.text()).toBe(200);
    // LanceDB warns when an overwrite finds no dataset: the server writes a new table's first
    // version with mode create whatever mode the caller sent (lib/catalog/tables/create.ts).
    const overwritten = await fetch(`${s.url}/v1/table/made%24o/create?mode=overwrite`, { method: 'POST', headers: admin, body: ipcRows(3) });
    expect(overwritten.status, await overwritten.text()).toBe(200);
    const json = { ...admin, 'content-type': 'application/json' };
    const declared = await fetch(`${s.url}/v1/table/made%24d/declare`, { method: 'POST', headers: json, body: '{}' });
    expect(declared.status, await declared.text()).toBe(200);
    const first = await fetch(`${s.url}/v1/table/made%24d/insert?mode=overwrite`, { method: 'POST', headers: admin, body: ipcRows(3) });
    expect(first.status, await first.text()).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const lines = s.output();
    expect(lines.some((l) => /CreateTable/.test(l)), lines.join("\n")).toBe(true);
    expect(lines.filter((l) => /No existing dataset/.test(l))).toEqual([]);
  });

  it('debug: the guard decision, the registry keys touched and step timings, by request id', async () => {
    const s = await start({ RASK_LOG_LEVEL: 'debug', RASK_LOG_FORMAT: 'json' });
    await refusedRequest(s.url);
    const lines = s.output().map((l) => JSON.parse(l) as Record<string, unknown>);
    const denied = lines.find((l) => l.message === 'authorization' && l.decision === 'deny');
    expect(denied).toMatchObject({ operation: 'CreateNamespace', principal: 'nobody', action: 'namespace:create' });
    const id = denied!.requestId;
    const mine = lines.filter((l) => l.requestId === id);
    // Authentication reads the caller's key record (by its id, never the secret).
    const reads = mine.filter((l) => l.message === 'registry read').map((l) => String(l.key));
    expect(reads.some((k) => k.startsWith('apikeys/'))).toBe(true);
    expect(mine.find((l) => l.message === 'step' && l.step === 'admit')).toMatchObject({ level: 'DEBUG', ms: expect.any(Number) });
    // A write shows its key too: the key the admin's CreatePrincipal stored.
    expect(lines.some((l) => l.message === 'registry write' && typeof l.key === 'string' && String(l.key).includes('nobody'))).toBe(true);
    for (const l of lines) expect(JSON.stringify(l)).not.toContain(ADMIN);
  });

  it('debug: an admitted data request shows the guard\'s verdict and the data engine\'s share of the time', async () => {
    const s = await start({ RASK_LOG_LEVEL: 'debug', RASK_LOG_FORMAT: 'json' });
    const admin = { 'x-api-key': ADMIN };
    await fetch(`${s.url}/v1/namespace/dbg/create`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
    const created = await fetch(`${s.url}/v1/table/dbg%24t/create`, { method: 'POST', headers: admin, body: ipcRows(3) });
    expect(created.status, await created.text()).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const lines = s.output().map((l) => JSON.parse(l) as Record<string, unknown>);
    const request = lines.find((l) => l.message === 'request' && String(l.path).includes('dbg%24t/create'));
    const mine = lines.filter((l) => l.requestId === request!.requestId);
    expect(mine.find((l) => l.message === 'guard')).toMatchObject({ level: 'DEBUG', decision: 'admit', operation: 'CreateTable', auth: 'keys' });
    const engine = mine.filter((l) => l.message === 'step' && l.step === 'data engine');
    expect(engine.map((l) => l.call)).toContain('createTable');
    expect(engine.every((l) => typeof l.ms === 'number' && l.outcome === 'ok')).toBe(true);
    const handler = mine.find((l) => l.message === 'step' && l.step === 'handler')!;
    expect(Number(handler.ms)).toBeGreaterThanOrEqual(Math.max(...engine.map((l) => Number(l.ms))));
  });

  it('info: no debug line at all, the guard\'s and the engine\'s included', async () => {
    const s = await start({ RASK_LOG_LEVEL: 'info', RASK_LOG_FORMAT: 'json' });
    const admin = { 'x-api-key': ADMIN };
    await fetch(`${s.url}/v1/namespace/inf/create`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
    expect((await fetch(`${s.url}/v1/table/inf%24t/create`, { method: 'POST', headers: admin, body: ipcRows(3) })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const lines = s.output().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.message === 'request')).toBe(true);
    expect(lines.filter((l) => l.level === 'DEBUG')).toEqual([]);
  });
});
