// @covers NamespaceExists, CreateNamespace, ListNamespaces, DescribeNamespace, DropNamespace
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { OPERATIONS } from '../../lib/contract/operations.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** The wire contract, byte for byte: every failure is a JSON body with an integer code. */
describe('raw HTTP: error contract and request decoding', () => {
  let s: TestServer;
  // A server per test, so each runs alone and in any order.
  beforeEach(async () => {
    s = await startTestServer({ RASK_MAX_BODY_BYTES: '4096' });
  });
  afterEach(() => s.stop());

  const expectError = (res: { status: number; headers: Headers; json(): any }, status: number, code: number) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = res.json();
    expect(body.code).toBe(code);
    expect(Number.isInteger(body.code)).toBe(true);
    expect(typeof body.error).toBe('string');
    expect(typeof body.instance).toBe('string');
    return body;
  };

  const listRoot = async () => (await s.request('GET', '/v1/namespace/%24/list')).json().namespaces as string[];

  it('unknown route → 404, code 0', async () => {
    expectError(await s.request('GET', '/v1/nothing/here'), 404, 0);
    expectError(await s.request('GET', '/'), 404, 0);
  });

  it('wrong method → 405, code 13, with Allow', async () => {
    const res = await s.request('DELETE', '/v1/namespace/a/create');
    expectError(res, 405, 13);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('malformed JSON → 400, code 13, and nothing is created', async () => {
    const body = expectError(await s.request('POST', '/v1/namespace/bad/create', '{"id": ["bad"'), 400, 13);
    expect(body.error).toMatch(/not valid JSON/);
    expectError(await s.request('POST', '/v1/namespace/bad/create', '[1,2]'), 400, 13);
    expect(await listRoot()).not.toContain('bad');
  });

  it('a body id that disagrees with the path → 400, code 13, nothing created', async () => {
    const body = expectError(
      await s.request('POST', '/v1/namespace/one/create', JSON.stringify({ id: ['two'] }), {
        'content-type': 'application/json',
      }),
      400,
      13,
    );
    expect(body.error).toMatch(/does not match/);
    expect(await listRoot()).not.toContain('one');
    expect(await listRoot()).not.toContain('two');
  });

  it('bad query values → 400, code 13', async () => {
    expectError(await s.request('GET', '/v1/namespace/%24/list?limit=abc'), 400, 13);
    expectError(await s.request('GET', '/v1/namespace/%24/list?limit=1.5'), 400, 13);
    expectError(await s.request('GET', '/v1/namespace/%24/list?delimiter='), 400, 13);
  });

  it('bad modes and properties → 400, code 13, nothing created', async () => {
    expectError(await s.request('POST', '/v1/namespace/m/create', JSON.stringify({ mode: 'Sometimes' })), 400, 13);
    expectError(await s.request('POST', '/v1/namespace/m/create', JSON.stringify({ properties: { k: 1 } })), 400, 13);
    expect(await listRoot()).not.toContain('m');
  });

  it('oversized body → 413, code 13, naming the limit, nothing created', async () => {
    const big = JSON.stringify({ properties: { pad: 'x'.repeat(10_000) } });
    const body = expectError(await s.request('POST', '/v1/namespace/huge/create', big), 413, 13);
    expect(body.error).toMatch(/4096-byte limit/);
    expect(await listRoot()).not.toContain('huge');
  });

  it('invalid names → 400, code 13, saying what is allowed', async () => {
    const body = expectError(await s.request('POST', '/v1/namespace/a%09b/create'), 400, 13);
    expect(body.error).toMatch(/control character/);
  });

  it('decodes form-encoded ids: + is a space, %2F a slash, %24 the delimiter', async () => {
    expect((await s.request('POST', '/v1/namespace/a+b/create')).status).toBe(200);
    expect((await s.request('POST', '/v1/namespace/a+b%24c%2Fd/create')).status).toBe(200);
    expect((await s.request('GET', '/v1/namespace/a+b/list')).json()).toEqual({ namespaces: ['c/d'] });
    expect(await listRoot()).toContain('a b');
    // `%2B` is a literal plus, a different name.
    expectError(await s.request('POST', '/v1/namespace/a%2Bb/describe'), 404, 1);
  });

  it('accepts bodies without content-type, the literal null, and none at all', async () => {
    expect((await s.request('POST', '/v1/namespace/nb/create', 'null')).status).toBe(200);
    expect((await s.request('POST', '/v1/namespace/nb/describe', '')).json()).toEqual({ properties: {}, protected: false });
    expect((await s.request('POST', '/v1/namespace/nb/describe', JSON.stringify({ id: ['nb'] }))).status).toBe(200);
  });

  it('exists answers status only: 200 empty, or a JSON code 1', async () => {
    expect((await s.request('POST', '/v1/namespace/nb/create')).status).toBe(200);
    const yes = await s.request('POST', '/v1/namespace/nb/exists');
    expect(yes.status).toBe(200);
    expect(yes.text).toBe('');
    expectError(await s.request('POST', '/v1/namespace/zzz/exists'), 404, 1);
    expect((await s.request('POST', '/v1/namespace/%24/exists')).status).toBe(200);
  });

  it('list: limit=0 is empty, a page token is an exclusive start-after name', async () => {
    expect((await s.request('POST', '/v1/namespace/nb/create')).status).toBe(200);
    for (const n of ['p1', 'p2', 'p3']) await s.request('POST', `/v1/namespace/nb%24${n}/create`);
    expect((await s.request('GET', '/v1/namespace/nb/list?limit=0')).json()).toEqual({ namespaces: [] });
    expect((await s.request('GET', '/v1/namespace/nb/list?limit=2')).json()).toEqual({
      namespaces: ['p1', 'p2'],
      page_token: 'p2',
    });
    expect((await s.request('GET', '/v1/namespace/nb/list?limit=2&page_token=p2')).json()).toEqual({ namespaces: ['p3'] });
    expect((await s.request('GET', '/v1/namespace/nb/list?page_token=p0')).json()).toEqual({
      namespaces: ['p1', 'p2', 'p3'],
    });
    expectError(await s.request('GET', '/v1/namespace/missing/list'), 404, 1);
  });

  it('operations without an implementation answer 406, code 0, saying why', async () => {
    const unsupported = OPERATIONS.filter((o) => !allHandlers[o.operationId]);
    for (const op of unsupported) {
      const path = op.path.replace('{id}', 'ns%24t').replace('{index_name}', 'idx');
      const body = expectError(await s.request(op.methods[0], path, '{}'), 406, 0);
      expect(body.error).toContain(`${op.operationId} is not supported`);
    }
    expect(unsupported.map((o) => o.operationId)).toContain('CreateMaterializedView');
  });

  it('create modes are case-insensitive; Overwrite replaces the namespace with an empty one', async () => {
    const create = (id: string, body: object) => s.request('POST', `/v1/namespace/${id}/create`, JSON.stringify(body));
    expect((await create('mo', { mode: 'CREATE', properties: { v: '1' } })).status).toBe(200);
    await create('mo%24kid', {});
    expectError(await create('mo', { mode: 'create' }), 409, 2);
    expect((await create('mo', { mode: 'exist_ok', properties: { v: '2' } })).json()).toEqual({ properties: { v: '1' } });
    expect((await create('mo', { mode: 'ExistOk' })).status).toBe(200);
    expect((await create('mo', { mode: 'Overwrite', properties: { v: '3' } })).json()).toEqual({ properties: { v: '3' } });
    expect((await s.request('POST', '/v1/namespace/mo/describe')).json()).toEqual({ properties: { v: '3' }, protected: false });
    expect((await s.request('GET', '/v1/namespace/mo/list')).json()).toEqual({ namespaces: [] });
  });

  it('rejects a root create and a root drop with the right codes', async () => {
    expectError(await s.request('POST', '/v1/namespace/%24/create'), 409, 2);
    expectError(await s.request('POST', '/v1/namespace/%24/drop'), 400, 13);
  });
});
