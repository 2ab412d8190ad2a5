/**
 * How the node:http adapter (lib/http/node-adapter.ts) reads a request body: a declared length
 * is read into one buffer of that size, a chunked body is gathered as it comes; either way the
 * router gets exactly the bytes sent, and a client that leaves mid-body leaves no reservation
 * behind. Driven over real sockets, the body written in pieces with pauses between them.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeListener } from '../../lib/http/node-adapter.js';
import type { HttpRequest } from '../../lib/contract/http.js';

let server: Server | undefined;
let listener: ReturnType<typeof nodeListener> | undefined;
const seen: HttpRequest[] = [];

afterEach(async () => {
  seen.length = 0;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose router answers with the sha256 and length of the body it was given. */
async function start(maxBodyBytes = 1 << 20): Promise<number> {
  listener = nodeListener(
    async (request) => {
      seen.push(request);
      const digest = createHash('sha256').update(request.body).digest('hex');
      return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ digest, length: request.body.length })) };
    },
    { maxBodyBytes },
  );
  server = createServer(listener);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => resolve(sock));
    sock.once('error', reject);
  });
}

/** Writes `pieces` one by one, each after the previous one was flushed and a turn of the loop. */
async function writeInPieces(sock: Socket, pieces: Buffer[]): Promise<void> {
  for (const piece of pieces) {
    await new Promise<void>((resolve, reject) => sock.write(piece, (err) => (err ? reject(err) : resolve())));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Resolves with everything the server sent until it closed the connection. */
function response(sock: Socket): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
    sock.once('close', () => resolve(got));
  });
}

function pattern(n: number): Buffer {
  const bytes = Buffer.alloc(n);
  for (let i = 0; i < n; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

function slices(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('request bodies over node:http', () => {
  it('a declared length sent in many pieces arrives byte for byte', async () => {
    const port = await start();
    const body = pattern(200_003);
    const sock = await open(port);
    const answer = response(sock);
    const head = `POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`;
    await writeInPieces(sock, [Buffer.from(head), ...slices(body, 7_919)]);
    const got = await answer;
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4))).toEqual({ digest: sha(body), length: body.length });
    expect(seen[0].body.equals(body)).toBe(true);
    expect(listener!.stats().inflightBodyBytes).toBe(0);
  });

  it('a chunked body arrives byte for byte', async () => {
    const port = await start();
    const body = pattern(70_001);
    const sock = await open(port);
    const answer = response(sock);
    const chunks = slices(body, 10_000).flatMap((c) => [Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]);
    const head = 'POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n';
    await writeInPieces(sock, [Buffer.from(head), ...chunks, Buffer.from('0\r\n\r\n')]);
    const got = await answer;
    expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4))).toEqual({ digest: sha(body), length: body.length });
  });

  it('an empty body and a body in the same packet as the headers arrive as sent', async () => {
    const port = await start();
    for (const body of [Buffer.alloc(0), Buffer.from('{"a":1}')]) {
      const sock = await open(port);
      const answer = response(sock);
      sock.end(Buffer.concat([Buffer.from(`POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`), body]));
      const got = await answer;
      expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4))).toEqual({ digest: sha(body), length: body.length });
    }
  });

  it('a client that leaves halfway through its body gets no answer and holds nothing', async () => {
    const port = await start();
    const sock = await open(port);
    const closed = response(sock);
    await writeInPieces(sock, [Buffer.from('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n'), pattern(40_000)]);
    await new Promise<void>((resolve) => {
      const wait = () => (listener!.stats().inflightBodyBytes === 100_000 ? resolve() : setImmediate(wait));
      wait();
    });
    sock.destroy();
    await closed;
    while (listener!.stats().inflightBodyBytes !== 0) await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(0);
  });
});
