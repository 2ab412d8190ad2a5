// @covers InsertIntoTable, CreateTable, CreateTableVersion, DeclareTable, RenameTable, DropTable
/**
 * Writes that are safe to retry (issue 28; lib/http/idempotency.ts; docs/operations.md,
 * "Idempotency keys"), on the real local server over raw HTTP. A client sends a write with an
 * Idempotency-Key and disconnects without reading the answer (the lost answer of a gateway
 * timeout); its retry with the same key gets the original answer and the write happened once.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { ipcRows } from '../data/fixtures.js';
import { TableApi } from '../support/data-http.js';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  for (const ns of ['idem', 'other']) expect((await s.request('POST', `/v1/namespace/${ns}/create`, '{}')).status).toBe(200);
});
afterAll(() => s.stop());

const tablePath = (name: string, op: string) => `/v1/table/idem%24${encodeURIComponent(name)}/${op}?delimiter=%24`;

/**
 * Sends the whole request on a raw socket and closes it without reading a byte of the answer,
 * once the server has started answering or after 300 ms: the client never sees the answer.
 */
function sendAndVanish(method: string, target: string, body: Buffer, headers: Record<string, string>): Promise<void> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const head = [`${method} ${target} HTTP/1.1`, `host: ${url.host}`, `content-length: ${body.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    const vanish = () => {
      socket.destroy();
      resolve();
    };
    socket.once('error', reject);
    socket.once('data', vanish);
    socket.write(Buffer.concat([Buffer.from(head), body]), () => setTimeout(vanish, 300));
  });
}

/** The retry: same key, same request, waiting out 409s (the first still running) as Retry-After says. */
async function retry(method: string, target: string, body: Buffer, headers: Record<string, string>): Promise<RawResponse> {
  for (let i = 0; i < 100; i++) {
    const res = await s.request(method, target, body, headers);
    if (res.status !== 409 || res.json().code !== 14) return res;
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('still running after 10 s');
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const JSON_HEADERS = { 'content-type': 'application/json' };

/** A lost answer, then the retry: the retry's answer is the stored one. */
async function lostThenRetried(target: string, body: Buffer, headers: Record<string, string> = JSON_HEADERS): Promise<RawResponse> {
  const key = { 'idempotency-key': `"${randomUUID()}"` };
  await sendAndVanish('POST', target, body, { ...headers, ...key });
  const res = await retry('POST', target, body, { ...headers, ...key });
  expect(res.headers.get('idempotent-replayed'), res.text).toBe('true');
  // And once more: still the same answer, byte for byte.
  const again = await s.request('POST', target, body, { ...headers, ...key });
  expect(again.status).toBe(res.status);
  expect(Buffer.compare(again.bytes, res.bytes)).toBe(0);
  return res;
}

describe('a write whose answer was lost, retried with its Idempotency-Key, happens once and answers as the first did', () => {
  it('CreateTable, then InsertIntoTable (one append: the row count)', async () => {
    const created = await lostThenRetried(tablePath('rows', 'create'), ipcRows(3), {});
    expect(created.status, created.text).toBe(200);
    const t = new TableApi(s, ['idem', 'rows']);
    expect(await t.count()).toBe(3);
    const inserted = await lostThenRetried(tablePath('rows', 'insert'), ipcRows(5, 100), {});
    expect(inserted.status, inserted.text).toBe(200);
    expect(await t.count()).toBe(8);
    // Without a key the same retry appends again: the key is what made it safe.
    expect((await t.arrow('insert', ipcRows(5, 100))).status).toBe(200);
    expect(await t.count()).toBe(13);
  });

  it('DeclareTable (not 409 on the retry)', async () => {
    const res = await lostThenRetried(tablePath('declared', 'declare'), json({ id: ['idem', 'declared'] }));
    expect(res.status, res.text).toBe(200);
    expect(res.json().location).toEqual(expect.any(String));
  });

  it('CreateTableVersion (the client learns its own commit landed, instead of a 409)', async () => {
    const declared = await s.request('POST', tablePath('versioned', 'declare'), JSON.stringify({ id: ['idem', 'versioned'] }));
    const location = declared.json().location as string;
    await mkdir(path.join(location, '_versions'), { recursive: true });
    const staged = path.join(location, '_versions', `${manifestName(1, 'V2')}-${randomUUID()}`);
    await writeFile(staged, 'manifest of version 1');
    const body = json({ id: ['idem', 'versioned'], version: 1, manifest_path: staged, manifest_size: 21, naming_scheme: 'V2' });
    const res = await lostThenRetried(tablePath('versioned', 'version/create'), body);
    expect(res.status, res.text).toBe(200);
    const versions = await s.request('POST', tablePath('versioned', 'version/list'), JSON.stringify({ id: ['idem', 'versioned'] }));
    expect(versions.json().versions.map((v: { version: number }) => v.version)).toEqual([1]);
  });

  it('RenameTable and DropTable (not 404 on the retry)', async () => {
    await s.request('POST', tablePath('moving', 'declare'), JSON.stringify({ id: ['idem', 'moving'] }));
    const renamed = await lostThenRetried(tablePath('moving', 'rename'), json({ id: ['idem', 'moving'], new_table_name: 'moved' }));
    expect(renamed.status, renamed.text).toBe(200);
    expect((await s.request('POST', tablePath('moved', 'exists'), JSON.stringify({ id: ['idem', 'moved'] }))).status).toBe(200);
    const dropped = await lostThenRetried(tablePath('moved', 'drop'), json({ id: ['idem', 'moved'] }));
    expect(dropped.status, dropped.text).toBe(200);
    expect((await s.request('POST', tablePath('moved', 'exists'), JSON.stringify({ id: ['idem', 'moved'] }))).status).toBe(404);
  });
});

describe('the key\'s rules', () => {
  it('the same key with another request answers 422 / code 13 naming what differs, and changes nothing', async () => {
    await s.request('POST', tablePath('mm', 'create'), ipcRows(1), {});
    const key = { 'idempotency-key': randomUUID() };
    expect((await s.request('POST', tablePath('mm', 'insert'), ipcRows(2), key)).status).toBe(200);
    const other = await s.request('POST', tablePath('mm', 'insert'), ipcRows(4), key);
    expect(other.status, other.text).toBe(422);
    expect(other.json()).toMatchObject({ code: 13, error: expect.stringMatching(/already used with another request: its body differ/) });
    const elsewhere = await s.request('POST', tablePath('mm', 'delete'), JSON.stringify({ id: ['idem', 'mm'], predicate: 'id > 0' }), { ...JSON_HEADERS, ...key });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.json().error).toMatch(/operation \(first InsertIntoTable, now DeleteFromTable\)/);
    expect(await new TableApi(s, ['idem', 'mm']).count()).toBe(3);
  });

  it('a replayed refusal is the first one, byte for byte (its instance names the first request)', async () => {
    const key = { 'idempotency-key': randomUUID() };
    const body = JSON.stringify({ id: ['other', 'nope'], new_table_name: 'x' });
    const first = await s.request('POST', '/v1/table/other%24nope/rename', body, key);
    expect(first.status).toBe(404);
    const again = await s.request('POST', '/v1/table/other%24nope/rename', body, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('of 8 concurrent duplicates exactly one writes; the others are told to retry or get its answer', async () => {
    await s.request('POST', tablePath('dup', 'create'), ipcRows(1), {});
    const key = { 'idempotency-key': randomUUID() };
    const body = ipcRows(10, 50);
    const answers = await Promise.all(Array.from({ length: 8 }, () => s.request('POST', tablePath('dup', 'insert'), body, key)));
    for (const a of answers) expect([200, 409], a.text).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.json().code).toBe(14);
      expect(a.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    expect(answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(await new TableApi(s, ['idem', 'dup']).count()).toBe(11);
  });

  it('a malformed key is 400 before anything runs; reads ignore the header', async () => {
    const bad = await s.request('POST', tablePath('never', 'declare'), JSON.stringify({ id: ['idem', 'never'] }), { 'idempotency-key': 'has space' });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ code: 13, error: expect.stringMatching(/Idempotency-Key/) });
    expect((await s.request('POST', tablePath('never', 'exists'), JSON.stringify({ id: ['idem', 'never'] }))).status).toBe(404);
    const key = { 'idempotency-key': randomUUID() };
    expect((await s.request('POST', tablePath('never', 'exists'), '{}', key)).status).toBe(404);
    expect((await s.request('POST', tablePath('never', 'declare'), JSON.stringify({ id: ['idem', 'never'] }), key)).status).toBe(200);
  });
});
