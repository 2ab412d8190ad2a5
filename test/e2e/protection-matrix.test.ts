// @covers DropTable, DeregisterTable, RenameTable, DropNamespace, DeleteWarehouse, DeleteProject, UpdateWarehouse, UpdateProject, SetTableProtection, SetNamespaceProtection
/**
 * Protection × force × authorization, per protective door, over HTTP with authentication on
 * (docs/rules.md rules 3, 4 and 6; docs/lifecycle.md). For every door and each of the eight
 * combinations of {protected, unprotected} × {force, no force} × {authorized, unauthorized}:
 *
 * - unauthorized: refused exactly as without force (the destructive-door denial, which answers
 *   like "does not exist"), and nothing changes — the object and its protection stay;
 * - authorized, protected, no force: 409 / code 19 naming the object, nothing changes;
 * - authorized, protected, force, but not allowed to unprotect (a writer on a catalog door):
 *   the same 409, nothing changes; the project admin's force then succeeds;
 * - authorized otherwise: done; and a re-created object of the same name is unprotected.
 *
 * A cascade refusal names the protected descendant. Authorized = the least role that may use
 * the door (writer for catalog doors, admin for warehouse and project deletes); unauthorized =
 * the role just below it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, governedApp, type Answer } from '../support/governed-app.js';
import { writeFakeDataset } from '../support/table-invariants.js';

type App = Awaited<ReturnType<typeof governedApp>>;

interface Door {
  readonly name: string;
  readonly authorized: Role;
  readonly unauthorized: Role;
  /** Creates the object `n` (and anything the door needs around it). */
  make(n: string): Promise<void>;
  protect(n: string): Promise<void>;
  call(n: string, force: boolean, key: string): Promise<Answer>;
  /** Whether the object is still there (asked as the platform administrator). */
  exists(n: string): Promise<boolean>;
  isProtected(n: string): Promise<boolean>;
  /** What a protection refusal must name. */
  named(n: string): string;
}
type Role = 'admin' | 'writer' | 'reader';

let app: App;
const keys: Record<Role, string> = { admin: '', writer: '', reader: '' };
const asAdmin = (method: string, path: string, body?: unknown) => app.call(method, path, body, ADMIN_KEY);
const withForce = (path: string, force: boolean) => `${path}${path.includes('?') ? '&' : '?'}${force ? 'force=true' : ''}`;
const A = '/projects/acme/v1';
const Q = '?delimiter=%24';

const tableDoor = (name: string, suffix: string, body: (n: string) => unknown = () => ({})): Door => ({
  name,
  authorized: 'writer',
  unauthorized: 'reader',
  make: async (n) => void (await app.arrange('POST', `${A}/table/tbl%24${n}/declare${Q}`, {})),
  protect: async (n) => void (await app.arrange('POST', `${A}/table/tbl%24${n}/protection${Q}`, { protected: true })),
  call: (n, force, key) => app.call('POST', withForce(`${A}/table/tbl%24${n}/${suffix}${Q}`, force), body(n), key),
  exists: async (n) => (await asAdmin('POST', `${A}/table/tbl%24${n}/describe${Q}`, {})).status === 200,
  isProtected: async (n) => (await asAdmin('GET', `${A}/table/tbl%24${n}/protection${Q}`)).body.protected === true,
  named: (n) => `table ["tbl","${n}"]`,
});

const DOORS: Door[] = [
  tableDoor('DropTable', 'drop'),
  tableDoor('DeregisterTable', 'deregister'),
  tableDoor('RenameTable', 'rename', (n) => ({ new_table_name: `${n}_moved` })),
  {
    name: 'DropNamespace (restrict)',
    authorized: 'writer',
    unauthorized: 'reader',
    make: async (n) => void (await app.arrange('POST', `${A}/namespace/${n}/create`, {})),
    protect: async (n) => void (await app.arrange('POST', `${A}/namespace/${n}/protection`, { protected: true })),
    call: (n, force, key) => app.call('POST', withForce(`${A}/namespace/${n}/drop`, force), {}, key),
    exists: async (n) => (await asAdmin('POST', `${A}/namespace/${n}/describe`, {})).status === 200,
    // The describe answer carries it (a top-level field, never inside properties).
    isProtected: async (n) => (await asAdmin('POST', `${A}/namespace/${n}/describe`, {})).body.protected === true,
    named: (n) => `namespace ["${n}"]`,
  },
  {
    // The namespace itself is not protected: its table is, and the refusal names that table.
    name: 'DropNamespace (cascade)',
    authorized: 'writer',
    unauthorized: 'reader',
    make: async (n) => {
      await app.arrange('POST', `${A}/namespace/${n}/create`, {});
      await app.arrange('POST', `${A}/namespace/${n}/create`.replace(`/${n}/`, `/${n}%24inner/`) + Q, {});
      await app.arrange('POST', `${A}/table/${n}%24inner%24t/declare${Q}`, {});
    },
    protect: async (n) => void (await app.arrange('POST', `${A}/table/${n}%24inner%24t/protection${Q}`, { protected: true })),
    call: (n, force, key) => app.call('POST', withForce(`${A}/namespace/${n}/drop`, force), { behavior: 'Cascade' }, key),
    exists: async (n) => (await asAdmin('POST', `${A}/table/${n}%24inner%24t/describe${Q}`, {})).status === 200,
    isProtected: async (n) => (await asAdmin('GET', `${A}/table/${n}%24inner%24t/protection${Q}`)).body.protected === true,
    named: (n) => `table ["${n}","inner","t"]`,
  },
  {
    name: 'DeleteWarehouse',
    authorized: 'admin',
    unauthorized: 'writer',
    make: async (n) => void (await app.arrange('POST', '/v1/warehouses', { name: n, project: 'acme', storage_root: `/w/acme/${n}` })),
    protect: async (n) => void (await app.arrange('POST', `/v1/warehouses/${n}/update`, { project: 'acme', protected: true })),
    call: (n, force, key) => app.call('POST', withForce(`/v1/warehouses/${n}/delete?project=acme`, force), {}, key),
    exists: async (n) => (await asAdmin('GET', `/v1/warehouses/${n}?project=acme`)).status === 200,
    isProtected: async (n) => (await asAdmin('GET', `/v1/warehouses/${n}?project=acme`)).body.protected === true,
    named: (n) => `warehouse "${n}"`,
  },
  {
    // Each project is fresh and empty; the roles are granted on it.
    name: 'DeleteProject',
    authorized: 'admin',
    unauthorized: 'writer',
    make: async (n) => {
      await app.arrange('POST', '/v1/projects', { name: n });
      for (const role of ['admin', 'writer', 'reader'] as const) await app.arrange('POST', '/v1/grants', { principal: `m_${role}`, role, project: n });
    },
    protect: async (n) => void (await app.arrange('POST', `/v1/projects/${n}/update`, { protected: true })),
    call: (n, force, key) => app.call('POST', withForce(`/v1/projects/${n}/delete`, force), {}, key),
    exists: async (n) => (await asAdmin('GET', `/v1/projects/${n}`)).status === 200,
    isProtected: async (n) => (await asAdmin('GET', `/v1/projects/${n}`)).body.protected === true,
    named: (n) => `project "${n}"`,
  },
];

beforeAll(async () => {
  app = await governedApp();
  await app.arrange('POST', '/v1/projects', { name: 'acme' });
  await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: '/w/acme/main' });
  await app.arrange('POST', `${A}/namespace/tbl/create`, {});
  for (const role of ['admin', 'writer', 'reader'] as const) keys[role] = await app.principal(`m_${role}`, { project: 'acme', role });
});

describe('protection × force × authorization, per protective door', () => {
  let serial = 0;
  for (const door of DOORS) {
    for (const isProtected of [true, false]) {
      for (const force of [true, false]) {
        for (const authorized of [true, false]) {
          const label = `${door.name}: ${isProtected ? 'protected' : 'unprotected'}, ${force ? 'force' : 'no force'}, ${authorized ? 'authorized' : 'unauthorized'}`;
          it(label, async () => {
            const n = `o${++serial}`;
            await door.make(n);
            if (isProtected) await door.protect(n);
            expect(await door.isProtected(n)).toBe(isProtected);
            const key = keys[authorized ? door.authorized : door.unauthorized];
            const res = await door.call(n, force, key);

            if (!authorized) {
              // Refused before protection or force are looked at: the same answer either way.
              const without = await door.call(n, !force, key);
              expect([res.status, res.body.code, res.body.error]).toEqual([without.status, without.body.code, without.body.error]);
              expect(res.status, JSON.stringify(res.body)).toBe(404);
              expect(await door.exists(n)).toBe(true);
              expect(await door.isProtected(n)).toBe(isProtected);
              return;
            }
            // Forcing needs no less than unprotecting (a project admin): a writer's force=true
            // on a protected object counts for nothing — the same 409 as without it.
            const forceIgnored = isProtected && force && door.authorized !== 'admin';
            if (isProtected && (!force || forceIgnored)) {
              expect(res.status, JSON.stringify(res.body)).toBe(409);
              expect(res.body.code).toBe(19);
              expect(res.body.error).toContain(door.named(n));
              // The way out names who may take it; never a bare "pass force=true".
              expect(res.body.error).toContain('only a project administrator may unprotect it');
              expect(await door.exists(n)).toBe(true);
              expect(await door.isProtected(n)).toBe(true);
              if (!forceIgnored) return;
              const forcedByAdmin = await door.call(n, true, keys.admin);
              expect(forcedByAdmin.status, JSON.stringify(forcedByAdmin.body)).toBe(200);
              expect(await door.exists(n)).toBe(false);
              return;
            }
            expect(res.status, JSON.stringify(res.body)).toBe(200);
            expect(await door.exists(n)).toBe(false);
            // Protection dies with its object: the same name made again starts unprotected.
            await door.make(n);
            expect(await door.isProtected(n)).toBe(false);
          });
        }
      }
    }
  }
});

describe('what the matrix does not show on its own', () => {
  it('a cascade names the protected descendant among several, and force clears every record it took', async () => {
    await app.arrange('POST', `${A}/namespace/deep/create`, {});
    await app.arrange('POST', `${A}/namespace/deep%24a/create${Q}`, {});
    await app.arrange('POST', `${A}/namespace/deep%24a%24b/create${Q}`, {});
    await app.arrange('POST', `${A}/table/deep%24a%24b%24t/declare${Q}`, {});
    await app.arrange('POST', `${A}/namespace/deep%24a/protection${Q}`, { protected: true });
    await app.arrange('POST', `${A}/table/deep%24a%24b%24t/protection${Q}`, { protected: true });
    const refused = await app.call('POST', `${A}/namespace/deep/drop`, { behavior: 'Cascade' }, keys.writer);
    expect([refused.status, refused.body.code]).toEqual([409, 19]);
    expect(refused.body.error).toMatch(/namespace \["deep","a"\] is protected \(and 1 more protected descendant\)/);
    // A writer's force (query or body) is no key to a protected descendant; the admin's is.
    const writerForced = await app.call('POST', `${A}/namespace/deep/drop?force=true`, { behavior: 'Cascade' }, keys.writer);
    expect([writerForced.status, writerForced.body.code]).toEqual([409, 19]);
    expect((await app.call('POST', `${A}/namespace/deep/drop`, { behavior: 'Cascade', force: true }, keys.writer)).status).toBe(409);
    expect((await asAdmin('POST', `${A}/table/deep%24a%24b%24t/describe${Q}`, {})).status).toBe(200);
    expect((await app.call('POST', `${A}/namespace/deep/drop?force=true`, { behavior: 'Cascade' }, keys.admin)).status).toBe(200);
    await app.arrange('POST', `${A}/namespace/deep/create`, {});
    await app.arrange('POST', `${A}/namespace/deep%24a/create${Q}`, {});
    expect((await asAdmin('POST', `${A}/namespace/deep%24a/describe${Q}`, {})).body).toEqual({ properties: {}, protected: false });
  });

  it('a forced rename carries the protection to the new name; the old name made again is unprotected', async () => {
    await app.arrange('POST', `${A}/table/tbl%24carry/declare${Q}`, {});
    await app.arrange('POST', `${A}/table/tbl%24carry/protection${Q}`, { protected: true });
    expect((await app.call('POST', `${A}/table/tbl%24carry/rename${Q}&force=true`, { new_table_name: 'carried' }, keys.writer)).status).toBe(409);
    expect((await app.call('POST', `${A}/table/tbl%24carry/rename${Q}&force=true`, { new_table_name: 'carried' }, keys.admin)).status).toBe(200);
    expect((await asAdmin('GET', `${A}/table/tbl%24carried/protection${Q}`)).body.protected).toBe(true);
    await app.arrange('POST', `${A}/table/tbl%24carry/declare${Q}`, {});
    expect((await asAdmin('GET', `${A}/table/tbl%24carry/protection${Q}`)).body.protected).toBe(false);
  });

  it('register with mode overwrite refuses a protected table; only an admin\'s force replaces it', async () => {
    await writeFakeDataset(app.storageFor({ kind: 'file', path: '/w/acme/main' }), 'imports/ds.lance');
    await app.arrange('POST', `${A}/table/tbl%24reg/declare${Q}`, {});
    await app.arrange('POST', `${A}/table/tbl%24reg/protection${Q}`, { protected: true });
    const body = { location: 'imports/ds.lance', mode: 'overwrite' };
    for (const path of [`${A}/table/tbl%24reg/register${Q}`, `${A}/table/tbl%24reg/register${Q}&force=true`]) {
      const refused = await app.call('POST', path, body, keys.writer);
      expect([refused.status, refused.body.code], JSON.stringify(refused.body)).toEqual([409, 19]);
    }
    expect((await app.call('POST', `${A}/table/tbl%24reg/register${Q}`, body, keys.admin)).status).toBe(409);
    const replaced = await app.call('POST', `${A}/table/tbl%24reg/register${Q}&force=true`, body, keys.admin);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect((await asAdmin('POST', `${A}/table/tbl%24reg/describe${Q}`, {})).body.location).toContain('imports/ds.lance');
  });

  it('only an admin may set protection on a warehouse or project; force in the body counts like the query', async () => {
    await app.arrange('POST', '/v1/warehouses', { name: 'guarded', project: 'acme', storage_root: '/w/acme/guarded' });
    const denied = await app.call('POST', '/v1/warehouses/guarded/update', { project: 'acme', protected: true }, keys.writer);
    expect([denied.status, denied.body.code]).toEqual([403, 15]);
    const set = await app.call('POST', '/v1/warehouses/guarded/update', { project: 'acme', protected: true }, keys.admin);
    expect(set.body).toMatchObject({ name: 'guarded', protected: true });
    expect((await app.call('POST', '/v1/warehouses/guarded/update', { project: 'acme', protected: 'yes' }, keys.admin)).body.code).toBe(13);
    expect((await app.call('POST', '/v1/warehouses/guarded/delete', { project: 'acme' }, keys.admin)).body.code).toBe(19);
    expect((await app.call('POST', '/v1/warehouses/guarded/delete', { project: 'acme', force: true }, keys.admin)).status).toBe(200);
    const created = await app.call('POST', '/v1/projects', { name: 'born_protected', protected: true }, ADMIN_KEY);
    expect(created.body).toMatchObject({ name: 'born_protected', protected: true });
    const cleared = await app.call('POST', '/v1/projects/born_protected/update', { protected: false }, ADMIN_KEY);
    expect(cleared.body.protected).toBe(false);
    expect((await app.call('POST', '/v1/projects/born_protected/delete', {}, ADMIN_KEY)).status).toBe(200);
  });

  it('grants survive a recoverable drop: a writer on a namespace subtree drops it and undrops it', async () => {
    await app.arrange('POST', '/v1/projects', { name: 'kept' });
    await app.arrange('POST', '/v1/warehouses', { name: 'w', project: 'kept', storage_root: '/w/kept/w', trash_grace_days: 3 });
    await app.arrange('POST', '/projects/kept/v1/namespace/team/create', {});
    await app.arrange('POST', `/projects/kept/v1/namespace/team%24sub/create${Q}`, {});
    await app.arrange('POST', '/projects/kept/v1/namespace/other/create', {});
    const owner = await app.principal('team_owner', { project: 'kept', role: 'writer', namespace: ['team'] });
    expect((await app.call('POST', '/projects/kept/v1/namespace/team/drop', { behavior: 'Cascade' }, owner)).status).toBe(200);
    const tasks = await app.call('GET', '/projects/kept/v1/namespace/team/tasks', undefined, owner);
    expect(tasks.body.tasks).toEqual([expect.objectContaining({ root: ['team'], namespaces: 2 })]);
    // Outside the grant: refused; inside it: restored.
    expect((await app.call('POST', '/projects/kept/v1/namespace/other/undrop', {}, owner)).status).toBe(403);
    const back = await app.call('POST', '/projects/kept/v1/namespace/team/undrop', {}, owner);
    expect([back.status, back.body]).toEqual([200, { id: ['team'], restored: true, namespaces: 2, tables: 0 }]);
    expect((await asAdmin('POST', `/projects/kept/v1/namespace/team%24sub/describe${Q}`, {})).status).toBe(200);
  });
});
