// @covers UndropTable, UndropNamespace, RenameTable, RegisterTable
/**
 * Every door that creates something at a destination authorizes the destination, not only the
 * source (issue 24, finding 3; docs/governance.md, "Destinations, force and tenants"). A writer on
 * one namespace drops what it may drop there and tries to bring it back somewhere else: refused
 * with 403 and nothing moves (the trash still holds the object; the destination stays empty).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, governedApp } from '../support/governed-app.js';

let app: Awaited<ReturnType<typeof governedApp>>;
const P = '/projects/dst/v1';
const Q = '?delimiter=%24';
const asAdmin = (method: string, path: string, body?: unknown) => app.call(method, path, body, ADMIN_KEY);
const exists = async (kind: 'table' | 'namespace', id: string) => (await asAdmin('POST', `${P}/${kind}/${id}/describe${Q}`, {})).status === 200;
const tasks = async (kind: 'table' | 'namespace', id: string) => ((await asAdmin('GET', `${P}/${kind}/${id}/tasks${Q}`)).body.tasks as unknown[]).length;

let nsWriter: string;
let tableWriter: string;

beforeAll(async () => {
  app = await governedApp();
  await app.arrange('POST', '/v1/projects', { name: 'dst' });
  // Trash on: drops are recoverable, so undrop has something to bring back.
  await app.arrange('POST', '/v1/warehouses', { name: 'w', project: 'dst', storage_root: '/w/dst/w', trash_grace_days: 3 });
  for (const ns of ['ns1', 'ns2', 'team']) await app.arrange('POST', `${P}/namespace/${ns}/create`, {});
  nsWriter = await app.principal('ns1_writer', { project: 'dst', role: 'writer', namespace: ['ns1'] });
  await app.arrange('POST', `${P}/table/ns1%24only/declare${Q}`, {});
  tableWriter = await app.principal('table_writer', { project: 'dst', role: 'writer', table: ['ns1', 'only'] });
  await app.arrange('POST', '/v1/grants', { project: 'dst', principal: 'ns1_writer', role: 'writer', namespace: ['team'] });
});

describe('UndropTable authorizes where the table comes back', () => {
  it('a writer on ns1 alone cannot undrop ns1$tr into ns2', async () => {
    await app.arrange('POST', `${P}/table/ns1%24tr/declare${Q}`, {});
    expect((await app.call('POST', `${P}/table/ns1%24tr/drop${Q}`, {}, nsWriter)).status).toBe(200);
    const denied = await app.call('POST', `${P}/table/ns1%24tr/undrop${Q}`, { new_namespace_id: ['ns2'], new_table_name: 'moved' }, nsWriter);
    expect([denied.status, denied.body.code], JSON.stringify(denied.body)).toEqual([403, 15]);
    expect(denied.body.error).toContain('table:create');
    expect(denied.body.error).toContain('["dst","ns2","moved"]');
    expect(await exists('table', 'ns2%24moved')).toBe(false);
    expect(await tasks('table', 'ns1%24tr')).toBe(1);
    // new_namespace_id alone keeps the name and still moves it; a null name reads as none
    for (const body of [{ new_namespace_id: ['ns2'] }, { new_namespace_id: ['ns2'], new_table_name: null }]) {
      const sameName = await app.call('POST', `${P}/table/ns1%24tr/undrop${Q}`, body, nsWriter);
      expect(sameName.status, JSON.stringify(sameName.body)).toBe(403);
      expect(await exists('table', 'ns2%24tr')).toBe(false);
    }
    // malformed fields are the handler's 400, as before authorization of the destination mattered
    const malformed = await app.call('POST', `${P}/table/ns1%24tr/undrop${Q}`, { new_namespace_id: 'ns2' }, nsWriter);
    expect([malformed.status, malformed.body.code]).toEqual([400, 13]);
    // Where it may create, it may undrop.
    const back = await app.call('POST', `${P}/table/ns1%24tr/undrop${Q}`, { new_table_name: 'back' }, nsWriter);
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(await exists('table', 'ns1%24back')).toBe(true);
  });

  it('a writer on one table cannot undrop it under another name', async () => {
    expect((await app.call('POST', `${P}/table/ns1%24only/drop${Q}`, {}, tableWriter)).status).toBe(200);
    const denied = await app.call('POST', `${P}/table/ns1%24only/undrop${Q}`, { new_table_name: 'elsewhere' }, tableWriter);
    expect(denied.status, JSON.stringify(denied.body)).toBe(403);
    expect(await exists('table', 'ns1%24elsewhere')).toBe(false);
    expect(await tasks('table', 'ns1%24only')).toBe(1);
    const same = await app.call('POST', `${P}/table/ns1%24only/undrop${Q}`, {}, tableWriter);
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(await exists('table', 'ns1%24only')).toBe(true);
  });

  it('a project admin may undrop anywhere in the project', async () => {
    const admin = await app.principal('dst_admin', { project: 'dst', role: 'admin' });
    await app.arrange('POST', `${P}/table/ns1%24adm/declare${Q}`, {});
    expect((await app.call('POST', `${P}/table/ns1%24adm/drop${Q}`, {}, admin)).status).toBe(200);
    const moved = await app.call('POST', `${P}/table/ns1%24adm/undrop${Q}`, { new_namespace_id: ['ns2'], new_table_name: 'adm' }, admin);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await exists('table', 'ns2%24adm')).toBe(true);
  });
});

describe('UndropTable keeps a table in its own storage', () => {
  it('never re-registers it under a namespace bound to another warehouse (the bytes stay where they are)', async () => {
    await app.arrange('POST', '/v1/warehouses', { name: 'other', project: 'dst', storage_root: '/w/dst/other', trash_grace_days: 3 });
    await app.arrange('POST', '/v1/warehouses/other/bind', { project: 'dst', namespace: 'elsewhere' });
    await app.arrange('POST', `${P}/table/ns1%24stay/declare${Q}`, {});
    await app.arrange('POST', `${P}/table/ns1%24stay/drop${Q}`, {});
    const refused = await asAdmin('POST', `${P}/table/ns1%24stay/undrop${Q}`, { new_namespace_id: ['elsewhere'] });
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).toEqual([406, 0]);
    expect(refused.body.error).toContain('"other"');
    expect(await exists('table', 'elsewhere%24stay')).toBe(false);
    expect(await tasks('table', 'ns1%24stay')).toBe(1);
  });
});

describe('UndropNamespace authorizes the new name', () => {
  it('a writer on "team" cannot bring the subtree back as a new top-level namespace', async () => {
    await app.arrange('POST', `${P}/namespace/team%24sub/create${Q}`, {});
    expect((await app.call('POST', `${P}/namespace/team/drop`, { behavior: 'Cascade' }, nsWriter)).status).toBe(200);
    const denied = await app.call('POST', `${P}/namespace/team/undrop`, { new_namespace_name: 'escaped' }, nsWriter);
    expect([denied.status, denied.body.code], JSON.stringify(denied.body)).toEqual([403, 15]);
    expect(denied.body.error).toContain('namespace:create');
    expect(await exists('namespace', 'escaped')).toBe(false);
    expect(await tasks('namespace', 'team')).toBe(1);
    // Under its own name it may (what the drop needed).
    const back = await app.call('POST', `${P}/namespace/team/undrop`, {}, nsWriter);
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(await exists('namespace', 'team%24sub')).toBe(true);
  });

  it('a child namespace comes back under a sibling name only where the caller may create', async () => {
    await app.arrange('POST', `${P}/namespace/ns2%24kid/create${Q}`, {});
    await app.arrange('POST', `${P}/namespace/ns2%24kid%24deep/create${Q}`, {});
    const ns2Writer = await app.principal('kid_writer', { project: 'dst', role: 'writer', namespace: ['ns2', 'kid'] });
    expect((await app.call('POST', `${P}/namespace/ns2%24kid/drop${Q}`, { behavior: 'Cascade' }, ns2Writer)).status).toBe(200);
    const denied = await app.call('POST', `${P}/namespace/ns2%24kid/undrop${Q}`, { new_namespace_name: 'kid2' }, ns2Writer);
    expect(denied.status, JSON.stringify(denied.body)).toBe(403);
    expect(await exists('namespace', 'ns2%24kid2')).toBe(false);
    const admin = await app.principal('dst_admin2', { project: 'dst', role: 'admin' });
    const moved = await app.call('POST', `${P}/namespace/ns2%24kid/undrop${Q}`, { new_namespace_name: 'kid2' }, admin);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await exists('namespace', 'ns2%24kid2%24deep')).toBe(true);
  });
});

describe('the other doors with a destination', () => {
  it('RenameTable: a writer on ns1 cannot move a table into ns2', async () => {
    await app.arrange('POST', `${P}/table/ns1%24ren/declare${Q}`, {});
    const denied = await app.call('POST', `${P}/table/ns1%24ren/rename${Q}`, { new_namespace_id: ['ns2'], new_table_name: 'ren' }, nsWriter);
    expect(denied.status).toBe(404);
    expect(await exists('table', 'ns1%24ren')).toBe(true);
    expect(await exists('table', 'ns2%24ren')).toBe(false);
  });

  it('RegisterTable: the destination is the id, so a writer on ns1 cannot register into ns2', async () => {
    const denied = await app.call('POST', `${P}/table/ns2%24reg/register${Q}`, { location: 'anything.lance' }, nsWriter);
    expect([denied.status, denied.body.code], JSON.stringify(denied.body)).toEqual([403, 15]);
    expect(await exists('table', 'ns2%24reg')).toBe(false);
  });
});
