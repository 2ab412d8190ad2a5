// @covers GetRequestChanges
/**
 * "Did my commit land?" without an Idempotency-Key (issue 28; lib/catalog/control/requests.ts;
 * docs/operations.md): a client sends InsertIntoTable with its own `x-request-id` and loses the
 * answer (it disconnects); it asks `GET /v1/requests/{id}` and learns the version its request
 * produced. Another principal of the same project, or one of another project, asking by the same
 * id learns nothing: the same empty answer as for an id never used. Real local server, raw HTTP
 * carrying real Arrow IPC, RASK_AUTH=keys.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcRows } from '../data/fixtures.js';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const ADMIN = 'request-changes-admin-key-0123456789abcdef';

let s: TestServer;
const key: Record<'alice' | 'bob' | 'carol', string> = { alice: '', bob: '', carol: '' };
const call = (method: string, p: string, k: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<RawResponse> =>
  s.request(method, p, body, { 'x-api-key': k, ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}), ...headers });
const ok = async (res: Promise<RawResponse>) => {
  const r = await res;
  expect(r.status, r.text).toBe(200);
  return r.json();
};

beforeAll(async () => {
  s = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
  for (const project of ['A', 'B']) {
    await ok(call('POST', '/v1/projects', ADMIN, JSON.stringify({ name: project })));
    await ok(call('POST', '/v1/warehouses', ADMIN, JSON.stringify({ name: 'main', project, storage_root: path.join(s.dataDir, 'projects', project, 'main') })));
    await ok(call('POST', `/projects/${project}/v1/namespace/ns/create`, ADMIN, '{}'));
  }
  for (const [who, project] of [['alice', 'A'], ['bob', 'A'], ['carol', 'B']] as const) {
    await ok(call('POST', '/v1/principals', ADMIN, JSON.stringify({ name: who })));
    await ok(call('POST', '/v1/grants', ADMIN, JSON.stringify({ principal: who, project, role: 'writer' })));
    key[who] = (await ok(call('POST', `/v1/principals/${who}/keys`, ADMIN, '{}'))).api_key;
  }
  await ok(call('POST', '/projects/A/v1/table/ns%24t/create?delimiter=%24', key.alice, ipcRows(3)));
}, 60_000);
afterAll(() => s?.stop());

/** Sends the whole request on a raw socket and closes it without reading a byte of the answer. */
function sendAndVanish(target: string, body: Buffer, headers: Record<string, string>): Promise<void> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const head = [`POST ${target} HTTP/1.1`, `host: ${url.host}`, `content-length: ${body.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    const vanish = () => {
      socket.destroy();
      resolve();
    };
    socket.once('error', reject);
    socket.once('data', vanish);
    socket.write(Buffer.concat([Buffer.from(head), body]), () => setTimeout(vanish, 300));
  });
}

/** Asks until the request's change is in the log (the server may still be committing when the client gives up). */
async function askUntilLanded(project: string, requestId: string, k: string) {
  for (let i = 0; i < 100; i++) {
    const answer = await ok(call('GET', `/projects/${project}/v1/requests/${requestId}`, k));
    if (answer.changes.length > 0) return answer;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`request ${requestId} changed nothing in 10 s`);
}

describe('asking by request id what a request changed', () => {
  it('an InsertIntoTable whose answer was lost: the client learns the version by its x-request-id; no one else learns anything', async () => {
    const requestId = `client-${randomUUID()}`;
    await sendAndVanish('/projects/A/v1/table/ns%24t/insert?delimiter=%24', ipcRows(5, 100), { 'x-api-key': key.alice, 'x-request-id': requestId });
    const answer = await askUntilLanded('A', requestId, key.alice);
    const versions = await ok(call('POST', '/projects/A/v1/table/ns%24t/version/list?delimiter=%24', key.alice, JSON.stringify({ id: ['ns', 't'] })));
    const latest = Math.max(...versions.versions.map((v: { version: number }) => v.version));
    expect(answer).toMatchObject({ request_id: requestId, searched_all: true });
    expect(answer.changes).toEqual([expect.objectContaining({ operation: 'InsertIntoTable', kind: 'table', id: ['ns', 't'], version: latest })]);
    // The rows landed once: 3 + 5.
    const counted = await call('POST', '/projects/A/v1/table/ns%24t/count_rows?delimiter=%24', key.alice, JSON.stringify({ id: ['ns', 't'] }));
    expect(counted.text).toBe('8');

    // The same id from another principal of the project, from another project's principal in its
    // own project, and an id never used: the same empty answer.
    const nothing = (id: string) => ({ request_id: id, changes: [], searched_all: true });
    expect(await ok(call('GET', `/projects/A/v1/requests/${requestId}`, key.bob))).toEqual(nothing(requestId));
    expect(await ok(call('GET', `/projects/B/v1/requests/${requestId}`, key.carol))).toEqual(nothing(requestId));
    expect(await ok(call('GET', `/projects/A/v1/requests/never-used-${randomUUID()}`, key.alice))).toMatchObject({ changes: [] });
    // And carol cannot ask in project A at all.
    const refused = await call('GET', `/projects/A/v1/requests/${requestId}`, key.carol);
    expect(refused.status, refused.text).toBe(403);
  });

  it('an x-request-id that is not a plain token is ignored: the server uses its own id', async () => {
    const bad = 'x'.repeat(200);
    await ok(call('POST', '/projects/A/v1/table/ns%24t/insert?delimiter=%24', key.alice, ipcRows(1, 500), { 'x-request-id': bad }));
    expect((await ok(call('GET', `/projects/A/v1/requests/${bad}`, key.alice))).changes).toEqual([]);
  });
});
