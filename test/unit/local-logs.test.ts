/**
 * The local server's logs and start-up errors (issue 13, item 2): one line per request with
 * method, path, status, code, ms and the request id that error bodies carry as `instance`;
 * RASK_LOG_LEVEL and RASK_LOG_FORMAT; a port in use is a one-line configuration error before
 * anything is written; unknown RASK_* variables are reported.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, type RunningServer } from '../../lib/app/server.js';
import { ConfigError, loadLocalConfig, unknownLocalVariables } from '../../lib/config.js';
import { accessLog } from '../../lib/http/access-log.js';
import { createRouter } from '../../lib/http/router.js';
import { nodeListener } from '../../lib/http/node-adapter.js';
import { createLogger } from '../../lib/observability/logger.js';

const repo = path.resolve(import.meta.dirname, '../..');

function captured(level: 'debug' | 'info' | 'warn' = 'info', format: 'json' | 'pretty' = 'json') {
  const lines: string[] = [];
  const logger = createLogger({ service: 'rask', level, format, sink: (line) => lines.push(line) });
  return { logger, lines, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('request lines', () => {
  let dir: string;
  let running: RunningServer;
  const log = captured();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-logs-'));
    running = await startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dir, RASK_JOBS_INTERVAL_MS: '0' }), {
      logger: log.logger,
    });
  });
  afterAll(async () => {
    await running?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('one info line per request: method, path without the query, status, ms, request id', async () => {
    const before = log.lines.length;
    const res = await fetch(`${running.url}/v1/namespace/%24/list?delimiter=%24&limit=5`);
    expect(res.status).toBe(200);
    const lines = log.json().slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'INFO', message: 'request', service: 'rask', method: 'GET', path: '/v1/namespace/%24/list', status: 200 });
    expect(lines[0]).not.toHaveProperty('code');
    expect(typeof lines[0].ms).toBe('number');
    expect(lines[0].requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an error line carries the code and the request id the body names as instance', async () => {
    const before = log.lines.length;
    const res = await fetch(`${running.url}/v1/table/nope%24t/describe?delimiter=%24`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const body = (await res.json()) as { code: number; instance: string };
    expect(res.status).toBe(404);
    const [line] = log.json().slice(before);
    expect(line).toMatchObject({ message: 'request', method: 'POST', status: 404, code: body.code, requestId: body.instance });
  });

  it('never logs api keys or bearer tokens sent with a request', async () => {
    const before = log.lines.length;
    await fetch(`${running.url}/v1/namespace/%24/list?delimiter=%24`, {
      headers: { 'x-api-key': 'sk-very-secret', authorization: 'Bearer tok-very-secret' },
    });
    const text = log.lines.slice(before).join('\n');
    expect(text).toContain('"message":"request"');
    expect(text).not.toMatch(/very-secret/);
  });
});

describe('internal errors', () => {
  let server: Server;
  const log = captured();
  beforeAll(async () => {
    // The real router with a handler that fails the way a bug or a broken disk would.
    const router = createRouter({
      handlers: {
        ListNamespaces: async () => {
          throw new Error('disk exploded at /secret/path');
        },
      },
      services: {},
      maxBodyBytes: 1024,
      logger: log.logger,
    });
    server = createHttpServer(nodeListener(router, { maxBodyBytes: 1024, logger: log.logger, onResponse: accessLog(log.logger) }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('an error line with the stack, and the request line, both with the request id of the body', async () => {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/v1/namespace/%24/list?delimiter=%24`);
    const body = (await res.json()) as { code: number; instance: string; error: string };
    expect(res.status).toBe(500);
    expect(body.error).not.toMatch(/exploded/);
    const lines = log.json();
    const error = lines.find((l) => l.level === 'ERROR');
    expect(error).toMatchObject({ message: 'unexpected error', requestId: body.instance });
    expect(String(error?.err)).toMatch(/disk exploded/);
    expect(lines.find((l) => l.message === 'request')).toMatchObject({ status: 500, code: 18, requestId: body.instance });
  });
});

describe('RASK_LOG_LEVEL and RASK_LOG_FORMAT', () => {
  it('a level above info drops request lines and keeps warnings', () => {
    const log = captured('warn');
    log.logger.info('request', { method: 'GET' });
    log.logger.warn('careful');
    expect(log.json().map((l) => l.message)).toEqual(['careful']);
  });

  it('pretty prints one human line per request', () => {
    const log = captured('info', 'pretty');
    log.logger.info('request', { method: 'POST', path: '/v1/x', status: 404, code: 1, ms: 2.5, requestId: 'r-1' });
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/v1\/x 404 code=1 2\.5ms req=r-1$/);
  });

  it('refuses unknown values with a message naming the variable', () => {
    expect(() => loadLocalConfig({ RASK_LOG_LEVEL: 'loud' })).toThrow(/RASK_LOG_LEVEL: must be debug, info, warn, error or silent/);
    expect(() => loadLocalConfig({ RASK_LOG_FORMAT: 'xml' })).toThrow(/RASK_LOG_FORMAT: must be pretty or json/);
    expect(loadLocalConfig({})).toMatchObject({ RASK_LOG_LEVEL: 'info', RASK_LOG_FORMAT: 'pretty' });
  });
});

describe('start-up', () => {
  it('names unknown RASK_* variables, with the closest known one', () => {
    expect(unknownLocalVariables({ RASK_PROT: '1', RASK_PORT: '2', RASK_ZZZZZZZZZZZZ: 'x', HOME: '/' })).toEqual([
      { name: 'RASK_PROT', suggestion: 'RASK_PORT' },
      { name: 'RASK_ZZZZZZZZZZZZ' },
    ]);
  });

  it('a port in use is a configuration error, raised before the data directory is written', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const parent = await mkdtemp(path.join(tmpdir(), 'rask-port-'));
    const dataDir = path.join(parent, 'data');
    try {
      const start = startLocalServer(loadLocalConfig({ RASK_PORT: String(port), RASK_DATA_DIR: dataDir }), { logger: captured().logger });
      await expect(start).rejects.toThrow(ConfigError);
      await expect(start).rejects.toThrow(`RASK_PORT: 127.0.0.1:${port} is already in use`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      blocker.close();
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('npm start: a port in use prints one line and exits 1; unknown variables are warned about', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const parent = await mkdtemp(path.join(tmpdir(), 'rask-port-'));
    try {
      const out = await run({ RASK_PORT: String(port), RASK_DATA_DIR: path.join(parent, 'd'), RASK_PROT: '9' });
      expect(out.code).toBe(1);
      expect(out.stderr.trim().split('\n')).toEqual([
        `invalid configuration: RASK_PORT: 127.0.0.1:${port} is already in use; stop the other process or choose another RASK_PORT`,
      ]);
      expect(existsSync(path.join(parent, 'd'))).toBe(false);
    } finally {
      blocker.close();
      await rm(parent, { recursive: true, force: true });
    }
  });
});

/** Runs `functions/local-server.ts` until it exits (or, once listening, stops it with SIGTERM). */
function run(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'functions/local-server.ts'], {
      cwd: repo,
      env: { PATH: process.env.PATH, RASK_JOBS_INTERVAL_MS: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('listening')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm start reports unknown variables', () => {
  it('warns about RASK_PROT and suggests RASK_PORT, then serves', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'rask-unknown-'));
    try {
      const out = await run({ RASK_PORT: '0', RASK_DATA_DIR: path.join(parent, 'd'), RASK_PROT: '9', RASK_LOG_FORMAT: 'json' });
      const warning = out.stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: string; message: string })
        .find((l) => l.level === 'WARN');
      expect(warning?.message).toBe('unknown configuration variable RASK_PROT is ignored; did you mean RASK_PORT?');
      expect(out.stdout).toMatch(/rask listening on http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
