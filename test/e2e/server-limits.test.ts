/**
 * Defect 6 of issue #8: the local server bounds what slow or greedy clients can hold. An idle
 * connection that never sends its headers is closed (it used to be held forever:
 * requestTimeout = 0 also disables the headers timeout on Node 20); request bodies buffered
 * across requests are bounded, and a request over the bound is answered 503 / code 17 with
 * Retry-After without being read; connections beyond the bound are refused.
 *
 * No timed assertions: each test waits for the event it is about (the socket closing, the
 * server's reservation showing up), bounded only by the test timeout.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_POOL_IDLE_MS, ConfigError, loadLocalConfig } from '../../lib/config.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const sock of sockets.splice(0)) sock.destroy();
  await s?.stop();
  s = undefined;
});

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname, () => resolve(sock));
    sock.on('error', () => undefined);
    sock.once('error', reject);
    sockets.push(sock);
  });
}

/** Resolves with what the server sent before it closed the socket. */
const closed = (sock: Socket) =>
  new Promise<string>((resolve) => {
    let got = '';
    sock.on('data', (d: Buffer) => (got += d.toString()));
    sock.once('close', () => resolve(got));
  });

/** Yields to the event loop until `cond` holds (the server runs in this process). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

describe('local server connection limits', () => {
  it('closes a connection that never sends its headers', { timeout: 15_000 }, async () => {
    s = await startTestServer({ RASK_HEADERS_TIMEOUT_MS: '300', RASK_REQUEST_TIMEOUT_MS: '600' });
    const idle = await open(s.url);
    const halfHeaders = await open(s.url);
    halfHeaders.write('GET /v1/namespace/list HTTP/1.1\r\nHost: x\r\n'); // never finished
    const [a, b] = await Promise.all([closed(idle), closed(halfHeaders)]);
    // Node answers 408 (or just closes) — either way the socket is released.
    for (const got of [a, b]) expect(got === '' || got.startsWith('HTTP/1.1 408')).toBe(true);
    // The server still serves.
    expect((await s.request('GET', '/v1/namespace/%24/list?delimiter=%24')).status).toBe(200);
  });

  it('answers 503 / code 17 with Retry-After when request bodies in flight would cross the bound', { timeout: 15_000 }, async () => {
    s = await startTestServer({ RASK_MAX_INFLIGHT_BODY_BYTES: String(1024 * 1024) });
    const server = s;
    // A slow upload declares 800 KiB and sends one byte: the server reserves the declared size.
    const slow = await open(server.url);
    slow.write(`POST /v1/namespace/x/create HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nContent-Type: application/json\r\nContent-Length: 819200\r\n\r\n{`);
    await until(() => server.inflightBodyBytes() === 819200);
    // A second one that would cross 1 MiB is refused without being read.
    const res = await fetch(`${server.url}/v1/namespace/y/create`, { method: 'POST', body: Buffer.alloc(300 * 1024, 32) });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { code: number; error: string };
    expect(body.code).toBe(17);
    expect(body.error).toMatch(/1048576/);
    // Nothing was written for it.
    expect((await server.request('POST', '/v1/namespace/y/exists', '{}')).status).toBe(404);
    // Once the slow upload is gone its reservation is released and bodies are accepted again.
    slow.destroy();
    await until(() => server.inflightBodyBytes() === 0);
    expect((await server.request('POST', '/v1/namespace/y/create', '{}')).status).toBe(200);
  });

  it('refuses connections beyond RASK_MAX_CONNECTIONS', { timeout: 15_000 }, async () => {
    s = await startTestServer({ RASK_MAX_CONNECTIONS: '2' });
    const server = s;
    await open(server.url);
    await open(server.url);
    await until(() => countConnections(server) === 2);
    const third = await open(server.url);
    third.write('GET /v1/namespace/list HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await closed(third)).toBe(''); // dropped by the socket layer, no answer
  });

  it('keeps an idle keep-alive connection past the headers timeout, and answers on it again', { timeout: 15_000 }, async () => {
    // Why the headers timeout need not exceed the keep-alive timeout (lib/config.ts, CLIENT_POOL_IDLE_MS).
    s = await startTestServer({ RASK_HEADERS_TIMEOUT_MS: '200', RASK_REQUEST_TIMEOUT_MS: '400', RASK_KEEP_ALIVE_TIMEOUT_MS: '5000' });
    const sock = await open(s.url);
    const { host } = new URL(s.url);
    const answers: string[] = [];
    let got = '';
    sock.on('data', (d: Buffer) => {
      got += d.toString();
      const at = got.indexOf('\r\n\r\n');
      if (at < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(got.slice(0, at))?.[1] ?? 0);
      if (got.length < at + 4 + length) return;
      answers.push(got.slice(0, at + 4 + length));
      got = got.slice(at + 4 + length);
    });
    let closedAt: number | undefined;
    sock.once('close', () => (closedAt = answers.length));
    const ask = () => sock.write(`GET /v1/namespace/%24/list?delimiter=%24 HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
    ask();
    await until(() => answers.length === 1);
    // Idle for several headers timeouts (and sweeps of the server's connection check).
    await new Promise((r) => setTimeout(r, 1200));
    expect(closedAt).toBeUndefined();
    ask();
    await until(() => answers.length === 2 || closedAt !== undefined);
    expect(answers.map((a) => a.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(answers[0]).toMatch(/keep-alive: timeout=5/i);
  });

  it('keeps idle connections longer than the official client does by default', () => {
    expect(loadLocalConfig({}).RASK_KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(CLIENT_POOL_IDLE_MS);
    expect(loadLocalConfig({ RASK_KEEP_ALIVE_TIMEOUT_MS: '7000' }).RASK_KEEP_ALIVE_TIMEOUT_MS).toBe(7000);
  });

  it('validates the limits at start-up', () => {
    expect(() => loadLocalConfig({ RASK_HEADERS_TIMEOUT_MS: '5000', RASK_REQUEST_TIMEOUT_MS: '1000' })).toThrow(ConfigError);
    expect(() => loadLocalConfig({ RASK_MAX_CONNECTIONS: '0' })).toThrow(/RASK_MAX_CONNECTIONS/);
    expect(() => loadLocalConfig({ RASK_MAX_INFLIGHT_BODY_BYTES: 'lots' })).toThrow(/RASK_MAX_INFLIGHT_BODY_BYTES/);
    expect(loadLocalConfig({})).toMatchObject({ RASK_HEADERS_TIMEOUT_MS: 10_000, RASK_REQUEST_TIMEOUT_MS: 60_000 });
  });
});

let connections = 0;
function countConnections(server: TestServer): number {
  server.server.getConnections((_err, n) => (connections = n));
  return connections;
}
