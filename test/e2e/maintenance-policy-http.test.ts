// @covers GetProjectMaintenancePolicy, SetProjectMaintenancePolicy, GetNamespaceMaintenancePolicy, SetNamespaceMaintenancePolicy, GetTableMaintenancePolicy, SetTableMaintenancePolicy
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const json = { 'content-type': 'application/json' };

/**
 * The maintenance-policy doors on the wire: set at project, namespace and table level, the
 * effective policy names the record that won, bad input is a JSON error with nothing written,
 * and setting a policy never creates a table version.
 */
describe('raw HTTP: maintenance-policy doors', () => {
  let s: TestServer;
  let location: string;
  // A fresh server per test: each test sets the policies it reads, so any order (or one test alone) works.
  beforeEach(async () => {
    s = await startTestServer();
    await s.request('POST', '/v1/namespace/a/create', '{}', json);
    await s.request('POST', '/v1/namespace/a%24b/create', '{}', json);
    location = (await post('/v1/table/a%24b%24t/declare')).json().location;
  });
  afterEach(() => s.stop());

  const post = (p: string, body: unknown = {}) => s.request('POST', p, JSON.stringify(body), json);
  const get = (p: string) => s.request('GET', p);
  const expectError = (res: RawResponse, status: number, code: number, message?: RegExp) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.json().code).toBe(code);
    if (message) expect(res.json().error).toMatch(message);
  };

  it('shows the built-in defaults, named as such, before anything is set', async () => {
    const res = await get('/v1/table/a%24b%24t/maintenance-policy');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ level: 'table', id: ['a', 'b', 't'], policy: null, source: { level: 'builtin' } });
    expect(res.json().effective.older_than_days).toBe(7);
  });

  it('each nearer record shadows the farther ones, and the source says which won', async () => {
    expect((await post('/v1/maintenance-policy', { policy: { older_than_days: 30 } })).status).toBe(200);
    let eff = (await get('/v1/table/a%24b%24t/maintenance-policy')).json();
    expect(eff.source).toMatchObject({ level: 'project', name: 'default' });
    expect(eff.effective.older_than_days).toBe(30);

    expect((await post('/v1/namespace/a/maintenance-policy', { policy: { older_than_days: 14 } })).status).toBe(200);
    eff = (await get('/v1/table/a%24b%24t/maintenance-policy')).json();
    expect(eff.source).toMatchObject({ level: 'namespace', id: ['a'] });
    expect(eff.effective.older_than_days).toBe(14);

    const set = await post('/v1/table/a%24b%24t/maintenance-policy', { policy: { compact_enabled: false } });
    expect(set.status).toBe(200);
    expect(set.json()).toMatchObject({ policy: { compact_enabled: false }, source: { level: 'table', id: ['a', 'b', 't'] } });
    // Winner takes all: the table record does not inherit the namespace's 14 days.
    expect(set.json().effective).toMatchObject({ compact_enabled: false, older_than_days: 7 });

    // The namespace door shows its own view: a.b has no record, so a's wins there.
    const nsB = (await get('/v1/namespace/a%24b/maintenance-policy')).json();
    expect(nsB).toMatchObject({ level: 'namespace', policy: null, source: { level: 'namespace', id: ['a'] } });

    // Clearing the table record hands the win back to the namespace.
    const cleared = await post('/v1/table/a%24b%24t/maintenance-policy', { policy: null });
    expect(cleared.json()).toMatchObject({ policy: null, source: { level: 'namespace', id: ['a'] } });
  });

  it('the root namespace is the project', async () => {
    expect((await post('/v1/maintenance-policy', { policy: { older_than_days: 30 } })).status).toBe(200);
    const res = (await get('/v1/namespace/%24/maintenance-policy')).json();
    expect(res).toMatchObject({ level: 'project', policy: { older_than_days: 30 }, source: { level: 'project' } });
  });

  it('never creates a table version (the dataset directory is untouched)', async () => {
    await post('/v1/table/a%24b%24t/maintenance-policy', { policy: { retain_versions: 3 } });
    await expect(readdir(path.join(location))).rejects.toThrow(/ENOENT/);
    const described = (await post('/v1/table/a%24b%24t/describe')).json();
    expect(described.version ?? null).toBeNull();
  });

  it('answers bad input with a JSON error and writes nothing', async () => {
    expect((await post('/v1/namespace/a/maintenance-policy', { policy: { older_than_days: 14 } })).status).toBe(200);
    const before = (await get('/v1/namespace/a/maintenance-policy')).json();
    expectError(await post('/v1/namespace/a/maintenance-policy', { policy: { older_than_days: -1 } }), 400, 13, /older_than_days/);
    expectError(await post('/v1/namespace/a/maintenance-policy', { policy: { nope: 1 } }), 400, 13, /unknown field/);
    expectError(await post('/v1/namespace/a/maintenance-policy', {}), 400, 13, /"policy" field/);
    expectError(await s.request('POST', '/v1/namespace/a/maintenance-policy', '{oops', json), 400, 13);
    expect((await get('/v1/namespace/a/maintenance-policy')).json()).toEqual(before);
  });

  it('answers missing objects with not-found codes and writes nothing', async () => {
    expectError(await get('/v1/table/a%24b%24nope/maintenance-policy'), 404, 4);
    expectError(await post('/v1/table/a%24b%24nope/maintenance-policy', { policy: {} }), 404, 4);
    expectError(await post('/v1/namespace/zz/maintenance-policy', { policy: {} }), 404, 1);
    expectError(await post('/v1/table/zz%24t/maintenance-policy', { policy: {} }), 404, 4);
    expectError(await s.request('DELETE', '/v1/maintenance-policy'), 405, 13);
  });

  it('a re-created table does not inherit the dropped one\'s policy', async () => {
    expect((await post('/v1/namespace/a/maintenance-policy', { policy: { older_than_days: 14 } })).status).toBe(200);
    await post('/v1/table/a%24b%24u/declare');
    await post('/v1/table/a%24b%24u/maintenance-policy', { policy: { older_than_days: 1 } });
    expect((await post('/v1/table/a%24b%24u/drop')).status).toBe(200);
    await post('/v1/table/a%24b%24u/declare');
    const res = (await get('/v1/table/a%24b%24u/maintenance-policy')).json();
    expect(res.policy).toBeNull();
    expect(res.source.level).toBe('namespace');
  });
});
