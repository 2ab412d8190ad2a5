/**
 * Raw-HTTP helpers for the data-plane end-to-end tests. Arrow bodies go out through node:http
 * with no Content-Type header at all, exactly as the official Lance REST client sends them
 * (fetch would add one for some body types).
 */
import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import { decode, plain } from '../data/fixtures.js';
import type { RawResponse, TestServer } from './server.js';

/** Sends raw bytes with only Content-Length set. */
export function sendRaw(server: TestServer, method: string, path: string, bytes: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = httpRequest(server.url + path, { method, headers: { 'content-length': String(bytes.length) } }, (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        const text = body.toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers, text, bytes: body, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    // A server that refuses an oversized body may close the socket before reading it all.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.on('close', () => (responded ? undefined : reject(new Error(`${method} ${path}: connection closed without a response`))));
    req.end(bytes);
  });
}

/** One table addressed the way the client does: `/v1/table/<ns>%24<name>/<op>`. */
export class TableApi {
  constructor(
    readonly server: TestServer,
    readonly id: readonly string[],
  ) {}

  path(op: string, query = ''): string {
    const encoded = this.id.map((p) => encodeURIComponent(p)).join('%24');
    return `/v1/table/${encoded}/${op}?delimiter=%24${query ? `&${query}` : ''}`;
  }

  /** A JSON operation, with `id` in the body as the client sends it. */
  post(op: string, body: Record<string, unknown> = {}, query = ''): Promise<RawResponse> {
    return this.server.request('POST', this.path(op, query), JSON.stringify({ id: this.id, ...body }), {
      'content-type': 'application/json',
    });
  }

  get(op: string, query = ''): Promise<RawResponse> {
    return this.server.request('GET', this.path(op, query));
  }

  /** An Arrow IPC operation (create, insert, merge_insert): raw bytes, no Content-Type. */
  arrow(op: string, bytes: Buffer, query = ''): Promise<RawResponse> {
    return sendRaw(this.server, 'POST', this.path(op, query), bytes);
  }

  /** CountTableRows as the official client calls it: GET, no body, a bare integer back. */
  async count(query = ''): Promise<number> {
    const res = await this.get('count_rows', query);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toMatch(/^\d+$/);
    return Number(res.text);
  }

  /** Every row (k large enough), decoded from the Arrow IPC file answer and sorted by id. */
  async rows(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
    const res = await this.post('query', { k: 100_000, ...extra });
    expect(res.status, res.text).toBe(200);
    return plain(decode(res.bytes)).sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** DescribeTable with the dataset opened (version, schema, metadata). */
  async describe(): Promise<Record<string, any>> {
    const res = await this.post('describe', { load_detailed_metadata: true });
    expect(res.status, res.text).toBe(200);
    return res.json();
  }

  async exists(): Promise<boolean> {
    const res = await this.post('exists');
    if (res.status === 200 || res.status === 204) return true;
    expect(res.json().code).toBe(4);
    return false;
  }
}

/** Asserts the spec's error body: the status, an integer code and a message. */
export function expectError(res: RawResponse, status: number, code: number): { code: number; error: string; detail?: string } {
  expect({ status: res.status, body: res.text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toBe('application/json');
  const body = res.json();
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  return body;
}

export function expectOk(res: RawResponse, status = 200): any {
  expect(res.status, res.text).toBe(status);
  return res.headers.get('content-type') === 'application/json' ? res.json() : res.bytes;
}

/** Creates namespace `ns` (status 200 or already there). */
export async function ensureNamespace(server: TestServer, ns: string): Promise<void> {
  const res = await server.request('POST', `/v1/namespace/${encodeURIComponent(ns)}/create?delimiter=%24`, '{}');
  expect([200, 409]).toContain(res.status);
}

/** A JSON POST to the server, and the same expecting 200 with its parsed answer. */
export function jsonPosts(server: () => TestServer) {
  const post = (p: string, body: unknown = {}) => server().request('POST', p, JSON.stringify(body), { 'content-type': 'application/json' });
  const ok = async (p: string, body: unknown = {}) => {
    const r = await post(p, body);
    expect(r.status, `${p}: ${r.text}`).toBe(200);
    return r.json();
  };
  return { post, ok };
}
