// @covers GrantRole, ListGrants, RevokeRole
import { beforeAll, describe, expect, it } from 'vitest';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { ALL_OPERATIONS, type Action, type OperationDef } from '../../lib/contract/operations.js';
import type { HandlerMap } from '../../lib/contract/request.js';
import { ADMIN_KEY, governedApp } from '../support/governed-app.js';

/**
 * Every operation of the table (spec and control plane) as a project admin, writer and reader,
 * a principal of another project, and anonymous. The handlers only report that they were
 * reached: what is under test is the guard's decision, against the role model written out
 * independently below (docs/governance.md), not the handlers' effects.
 */

const READ: Action[] = ['namespace:read', 'table:read', 'transaction:read', 'project:read', 'warehouse:read'];
const WRITE: Action[] = ['namespace:create', 'namespace:drop', 'table:create', 'table:write', 'table:drop', 'transaction:alter'];
const ADMIN: Action[] = ['project:manage', 'project:delete', 'warehouse:create', 'warehouse:manage', 'warehouse:delete', 'grant:manage'];
const EXPECTED: Record<string, readonly Action[]> = {
  admin: [...READ, ...WRITE, ...ADMIN],
  writer: [...READ, ...WRITE],
  reader: READ,
  outsider: [],
};
const DESTRUCTIVE = ['DropTable', 'DeregisterTable', 'RenameTable', 'DropNamespace', 'DeleteWarehouse', 'DeactivateWarehouse', 'ActivateWarehouse', 'DeleteProject'];

/** The operations whose handler ran, in order. */
const hits: string[] = [];
const reached: HandlerMap<CatalogServices> = Object.fromEntries(
  ALL_OPERATIONS.map((o) => [
    o.operationId,
    async () => {
      hits.push(o.operationId);
      return o.response === 'arrow' ? Buffer.from('arrow') : { reached: o.operationId };
    },
  ]),
);

/** Sends, and says whether the handler was reached (the guard let the request through). */
async function reachedBy(app: Awaited<ReturnType<typeof governedApp>>, op: OperationDef, key?: string) {
  const { method, path, body } = requestFor(op);
  const before = hits.length;
  const res = await app.call(method, path, body, key);
  return { res, reached: hits.length === before + 1 && hits[before] === op.operationId };
}

/** A request for `op` in project acme, through its base URI. */
function requestFor(op: OperationDef): { method: string; path: string; body: unknown } {
  const isTx = op.path.startsWith('/v1/transaction/');
  const id = op.path.startsWith('/v1/namespace/') ? 'sales' : isTx ? '0123456789abcdef0123456789abcdef' : 'sales$orders';
  const path = op.path
    .replace('{id}', encodeURIComponent(id))
    .replace('{index_name}', 'idx')
    .replace('{project}', 'acme')
    .replace('{warehouse}', 'main')
    .replace('{principal}', 'target')
    .replace('{key_id}', '0123abcd');
  const body =
    op.operationId === 'CreateProject' ? { name: 'newproject' }
    : op.operationId === 'RenameTable' ? { new_table_name: 'renamed' }
    : op.request === 'arrow' ? '' : {};
  return { method: op.methods[0], path: `/projects/acme${path}?delimiter=%24`, body };
}

describe('authorization matrix: every operation × every kind of caller', () => {
  let app: Awaited<ReturnType<typeof governedApp>>;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    app = await governedApp(reached);
    await app.arrange('POST', '/v1/projects', { name: 'acme' });
    await app.arrange('POST', '/v1/projects', { name: 'other' });
    await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: '/w/acme/main' });
    await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'other', storage_root: '/w/other/main' });
    await app.arrange('POST', '/projects/acme/v1/namespace/sales/create', {});
    await app.arrange('POST', '/v1/principals', { name: 'target' });
    keys.admin = await app.principal('padmin', { project: 'acme', role: 'admin' });
    keys.writer = await app.principal('pwriter', { project: 'acme', role: 'writer' });
    keys.reader = await app.principal('preader', { project: 'acme', role: 'reader' });
    keys.outsider = await app.principal('poutsider', { project: 'other', role: 'admin' });
  });

  it('covers every operation of the table: 54 spec operations and the control plane', () => {
    expect(ALL_OPERATIONS.filter((o) => o.plane !== 'control')).toHaveLength(54);
    expect(ALL_OPERATIONS.length).toBeGreaterThan(54);
  });

  for (const role of ['admin', 'writer', 'reader', 'outsider'] as const) {
    it(`as ${role}`, async () => {
      const wrong: string[] = [];
      for (const op of ALL_OPERATIONS) {
        const { res, reached: ran } = await reachedBy(app, op, keys[role]);
        const allowed = EXPECTED[role].includes(op.action);
        if (allowed) {
          if (res.status !== op.status || !ran) wrong.push(`${op.operationId}: expected allow, got ${res.status} ${JSON.stringify(res.body)}`);
        } else {
          if (ran) wrong.push(`${op.operationId}: the handler ran for a denied caller`);
          const denial = DESTRUCTIVE.includes(op.operationId) ? [404, [1, 4]] : [403, [15]];
          if (res.status !== denial[0] || !(denial[1] as number[]).includes(res.body?.code)) wrong.push(`${op.operationId}: expected deny, got ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
      expect(wrong).toEqual([]);
    });
  }

  it('as anonymous: every operation answers 401 / code 16', async () => {
    for (const op of ALL_OPERATIONS) {
      const { res, reached: ran } = await reachedBy(app, op);
      expect([op.operationId, res.status, res.body.code, ran]).toEqual([op.operationId, 401, 16, false]);
    }
  });

  it('the platform administrator may do everything, and the decision names the deciding policy', async () => {
    for (const op of ALL_OPERATIONS) {
      const { res, reached: ran } = await reachedBy(app, op, ADMIN_KEY);
      expect([op.operationId, res.status, ran]).toEqual([op.operationId, op.status, true]);
    }
    const last = app.decisions[app.decisions.length - 1];
    expect(last).toMatchObject({ principal: 'admin', decision: 'allow', policies: ['platform-admin'] });
    // The other decisions are produced here, so this test does not read the role tests' log.
    const from = app.decisions.length;
    const describe = ALL_OPERATIONS.find((o) => o.operationId === 'DescribeNamespace')!;
    expect((await reachedBy(app, describe, keys.outsider)).reached).toBe(false);
    expect((await reachedBy(app, describe, keys.reader)).reached).toBe(true);
    const denied = app.decisions.slice(from).find((d) => d.principal === 'poutsider');
    expect(denied).toMatchObject({ decision: 'deny', policies: [] });
    const granted = app.decisions.slice(from).find((d) => d.principal === 'preader' && d.decision === 'allow');
    expect(String((granted!.policies as string[])[0])).toMatch(/^grant:reader:Project:acme/);
  });

  it('grants on a namespace subtree or one table cover exactly that', async () => {
    const sub = await app.principal('psub', { project: 'acme', role: 'writer', namespace: ['sales'] });
    // A grant is made on an object that exists (and is bound to it: governance-grants-uid.test.ts).
    await app.arrange('POST', '/projects/acme/v1/table/sales%24orders/declare', {});
    const one = await app.principal('pone', { project: 'acme', role: 'reader', table: ['sales', 'orders'] });
    const at = (p: string) => `/projects/acme/v1${p}?delimiter=%24`;
    // Parent (404) comes before authorization (403): the check order (docs/rules.md rule 1).
    expect((await app.call('POST', at('/table/sales$eu$t/declare'), {}, sub)).status).toBe(404);
    expect((await app.call('POST', at('/table/hr$eu$t/declare'), {}, sub)).status).toBe(404);
    await app.arrange('POST', at('/namespace/sales$eu/create'), {});
    await app.arrange('POST', at('/namespace/hr/create'), {});
    expect((await app.call('POST', at('/table/sales$eu$t/declare'), {}, sub)).status).toBe(200);
    expect((await app.call('POST', at('/table/hr$t/declare'), {}, sub)).status).toBe(403);
    expect((await app.call('POST', at('/namespace/sales$eu$deep/create'), {}, sub)).status).toBe(200);
    expect((await app.call('POST', at('/namespace/hr2/create'), {}, sub)).status).toBe(403);
    expect((await app.call('GET', at('/warehouses'), undefined, sub)).status).toBe(403);
    expect((await app.call('POST', at('/table/sales$orders/describe'), {}, one)).status).toBe(200);
    expect((await app.call('POST', at('/table/sales$orders/insert'), '', one)).status).toBe(403);
    expect((await app.call('POST', at('/table/sales$other/describe'), {}, one)).status).toBe(403);
    expect((await app.call('POST', at('/namespace/sales/describe'), {}, one)).status).toBe(403);
  });

  it('lists and revokes grants; a revoked grant stops working at once', async () => {
    const key = await app.principal('ptemp', { project: 'acme', role: 'reader' });
    const listed = await app.call('GET', '/v1/grants?project=acme&principal=ptemp', undefined, keys.admin);
    expect(listed.body).toEqual({ reached: 'ListGrants' }); // stub handlers here; the real listing is below
    const real = await app.arrange('GET', '/v1/grants?project=acme&principal=ptemp');
    expect(real).toEqual({ grants: [{ principal: 'ptemp', role: 'reader' }] });
    expect((await app.call('POST', '/projects/acme/v1/namespace/sales/describe', {}, key)).status).toBe(200);
    expect(await app.arrange('POST', '/v1/grants/revoke', { project: 'acme', principal: 'ptemp', role: 'reader' })).toMatchObject({ revoked: true });
    expect((await app.call('POST', '/projects/acme/v1/namespace/sales/describe', {}, key)).status).toBe(403);
  });
});

describe('vended credentials follow the role', () => {
  it('readers get read-only credentials, writers read-write when they say they will write', async () => {
    const app = await governedApp();
    await app.arrange('POST', '/v1/projects', { name: 'acme' });
    await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: '/w/acme/main' });
    await app.arrange('POST', '/projects/acme/v1/namespace/sales/create', {});
    const writer = await app.principal('w', { project: 'acme', role: 'writer' });
    const reader = await app.principal('r', { project: 'acme', role: 'reader' });
    const declared = await app.call('POST', '/projects/acme/v1/table/sales%24t/declare', { vend_credentials: true }, writer);
    expect(declared.status).toBe(200);
    expect(declared.body.storage_options).toEqual({ 'test.mode': 'readwrite' });
    const asReader = await app.call('POST', '/projects/acme/v1/table/sales%24t/describe', { vend_credentials: true }, reader);
    expect(asReader.body.storage_options).toEqual({ 'test.mode': 'read' });
    // The role is the ceiling, the stated intent the choice: a writer describing to read gets read.
    const asWriter = await app.call('POST', '/projects/acme/v1/table/sales%24t/describe', { vend_credentials: true }, writer);
    expect(asWriter.body.storage_options).toEqual({ 'test.mode': 'read' });
    const writing = { 'x-rask-access': 'readwrite' };
    const asWritingWriter = await app.call('POST', '/projects/acme/v1/table/sales%24t/describe', { vend_credentials: true }, writer, writing);
    expect(asWritingWriter.body.storage_options).toEqual({ 'test.mode': 'readwrite' });
    const asWritingReader = await app.call('POST', '/projects/acme/v1/table/sales%24t/describe', { vend_credentials: true }, reader, writing);
    expect(asWritingReader.body.storage_options).toEqual({ 'test.mode': 'read' });
  });
});
