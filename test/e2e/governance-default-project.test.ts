// @covers GrantRole, ListGrants, DescribeTable, ListTables
/**
 * Grants in the deployment's default project work as in any other project (docs/governance.md,
 * "Grants in the default project"). The start-up default project's record has no uid
 * (lib/registry/layout.ts), so its grants records carry none either; the guard once took "no
 * uid" for "not this project's" and dropped every such grant, so a reader granted with plain
 * `POST /v1/grants` got 403 on both `/v1/…` and `/projects/default/v1/…`, while the same grant in
 * a created project worked. Real local server, RASK_AUTH=keys, raw HTTP, two principals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { govKeys } from '../../lib/registry/principal-keys.js';
import { Registry } from '../../lib/registry/registry.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ADMIN = 'admin-key-for-default-project-grants-0123';
const Q = '?delimiter=%24';
let server: TestServer;

async function call(method: string, p: string, key: string | undefined, body?: unknown) {
  const res = await server.request(method, p, body === undefined ? undefined : JSON.stringify(body), key ? { 'x-api-key': key } : {});
  return { status: res.status, body: res.text ? res.json() : undefined };
}
async function ok(method: string, p: string, body?: unknown) {
  const res = await call(method, p, ADMIN, body);
  if (res.status !== 200) throw new Error(`${method} ${p} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}
/** A principal with its own API key (and no grant). */
async function principal(name: string): Promise<string> {
  await ok('POST', '/v1/principals', { name });
  return (await ok('POST', `/v1/principals/${name}/keys`, {})).api_key;
}

/** The two ways to address the default project: the plain root and its base URI. */
const BASES = ['/v1', '/projects/default/v1'] as const;

beforeAll(async () => {
  server = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
  for (const ns of ['pg', 'ng', 'tg', 'wg', 'other']) {
    await ok('POST', `/v1/namespace/${ns}/create`, {});
    await ok('POST', `/v1/table/${ns}%24t/declare${Q}`, {});
  }
  // The control case: the same grants in a created project.
  await ok('POST', '/v1/projects', { name: 'acme' });
  await ok('POST', '/projects/acme/v1/warehouses', { name: 'w', storage_root: `${server.dataDir}/projects/acme/w` });
  await ok('POST', '/projects/acme/v1/namespace/pg/create', {});
  await ok('POST', `/projects/acme/v1/table/pg%24t/declare${Q}`, {});
});
afterAll(async () => server?.stop());

describe('a reader grant in the default project', () => {
  it('on the project: DescribeTable and ListTables answer 200 through both path forms', async () => {
    const key = await principal('p_reader');
    await ok('POST', '/v1/grants', { principal: 'p_reader', role: 'reader' });
    for (const base of BASES) {
      const described = await call('POST', `${base}/table/pg%24t/describe${Q}`, key, {});
      expect(described.status, `${base}: ${JSON.stringify(described.body)}`).toBe(200);
      const listed = await call('GET', `${base}/namespace/pg/table/list${Q}`, key);
      expect([listed.status, listed.body.tables], base).toEqual([200, ['t']]);
      // Reader means reader: no write.
      const declared = await call('POST', `${base}/table/pg%24new/declare${Q}`, key, {});
      expect([declared.status, declared.body.code], base).toEqual([403, 15]);
    }
  });

  it('on a namespace: reads inside it answer 200, reads outside it 403', async () => {
    const key = await principal('n_reader');
    await ok('POST', '/v1/grants', { principal: 'n_reader', role: 'reader', namespace: ['ng'] });
    for (const base of BASES) {
      expect((await call('POST', `${base}/table/ng%24t/describe${Q}`, key, {})).status, base).toBe(200);
      expect((await call('GET', `${base}/namespace/ng/table/list${Q}`, key)).status, base).toBe(200);
      expect((await call('POST', `${base}/table/other%24t/describe${Q}`, key, {})).status, base).toBe(403);
      expect((await call('GET', `${base}/namespace/other/table/list${Q}`, key)).status, base).toBe(403);
    }
  });

  it('on a table: that table answers 200, its neighbours 403', async () => {
    const key = await principal('t_reader');
    await ok('POST', '/v1/grants', { principal: 't_reader', role: 'reader', table: ['tg', 't'] });
    for (const base of BASES) {
      expect((await call('POST', `${base}/table/tg%24t/describe${Q}`, key, {})).status, base).toBe(200);
      expect((await call('POST', `${base}/table/other%24t/describe${Q}`, key, {})).status, base).toBe(403);
    }
  });

  it('a writer grant on a namespace: declares inside it through both path forms, not outside', async () => {
    const key = await principal('n_writer');
    await ok('POST', '/v1/grants', { principal: 'n_writer', role: 'writer', namespace: ['wg'] });
    for (const [i, base] of BASES.entries()) {
      const declared = await call('POST', `${base}/table/wg%24made${i}/declare${Q}`, key, {});
      expect(declared.status, `${base}: ${JSON.stringify(declared.body)}`).toBe(200);
      expect((await call('POST', `${base}/table/other%24made${i}/declare${Q}`, key, {})).status, base).toBe(403);
    }
    expect((await ok('GET', `/v1/namespace/wg/table/list${Q}`)).tables.sort()).toEqual(['made0', 'made1', 't']);
  });

  it('a grant made on /projects/default/v1/grants is the same grant, listed once', async () => {
    const key = await principal('b_reader');
    await ok('POST', '/projects/default/v1/grants', { principal: 'b_reader', role: 'reader', namespace: ['pg'] });
    await ok('POST', '/v1/grants', { principal: 'b_reader', role: 'reader', namespace: ['pg'] });
    expect((await ok('GET', '/v1/grants?principal=b_reader')).grants).toEqual([{ principal: 'b_reader', role: 'reader', namespace: ['pg'] }]);
    for (const base of BASES) expect((await call('POST', `${base}/table/pg%24t/describe${Q}`, key, {})).status, base).toBe(200);
  });

  it('the same project grant in project acme works (the control case)', async () => {
    const key = await principal('acme_reader');
    await ok('POST', '/v1/grants', { project: 'acme', principal: 'acme_reader', role: 'reader' });
    expect((await call('POST', `/projects/acme/v1/table/pg%24t/describe${Q}`, key, {})).status).toBe(200);
    // …and a grant in acme opens nothing in the default project.
    for (const base of BASES) expect((await call('POST', `${base}/table/pg%24t/describe${Q}`, key, {})).status, base).toBe(403);
  });
});

describe('nothing widened', () => {
  it('a principal without a grant gets the same answer for an existing table as for a missing one', async () => {
    const key = await principal('outsider');
    for (const base of BASES) {
      for (const [op, existing, missing] of [
        ['describe', `${base}/table/pg%24t/describe${Q}`, `${base}/table/pg%24nope/describe${Q}`],
        ['list', `${base}/namespace/pg/table/list${Q}`, `${base}/namespace/nope/table/list${Q}`],
        ['drop', `${base}/table/pg%24t/drop${Q}`, `${base}/table/pg%24nope/drop${Q}`],
      ] as const) {
        const a = await call(op === 'list' ? 'GET' : 'POST', existing, key, op === 'list' ? undefined : {});
        const b = await call(op === 'list' ? 'GET' : 'POST', missing, key, op === 'list' ? undefined : {});
        expect([a.status, a.body.code], `${op} ${base}`).toEqual([b.status, b.body.code]);
        expect(a.status, `${op} ${base}`).toBe(op === 'drop' ? 404 : 403);
      }
    }
    // The drop was refused: the table is still there.
    expect((await call('POST', `/v1/table/pg%24t/describe${Q}`, ADMIN, {})).status).toBe(200);
  });

  it('a grants record written for another project of the same name still counts for nothing', async () => {
    // Written straight into the registry: one as a uid-less project's would be (the default
    // project's kind), one for an earlier `acme` (another uid), e.g. left behind by a crash.
    const registry = new Registry(new FsObjectStore(path.join(server.dataDir, 'registry')));
    const grants = [{ role: 'reader', scope: { kind: 'project' } }];
    for (const [name, projectUid] of [['ghost_none', undefined], ['ghost_old', 'an-earlier-acme']] as const) {
      const key = await principal(name);
      await registry.create(govKeys.grants('acme', name), { kind: 'grants', project: 'acme', principal: name, ...(projectUid ? { projectUid } : {}), grants });
      const res = await call('POST', `/projects/acme/v1/table/pg%24t/describe${Q}`, key, {});
      expect([res.status, res.body.code], name).toEqual([403, 15]);
      expect((await ok('GET', `/projects/acme/v1/grants?principal=${name}`)).grants, name).toEqual([]);
    }
  });
});
