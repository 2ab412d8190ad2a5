// @covers GrantRole, RevokeRole, ListGrants, UndropTable, UndropNamespace
/**
 * Grants on a namespace or a table belong to the object, not to its name (issue 24, low 7/5;
 * docs/governance.md, "Destinations, force and tenants"): a grant records the object's uid when
 * it is made, a re-created name (new uid) does not inherit it, and a grant on an object that does
 * not exist is refused. A recoverable drop keeps the grant usable (docs/rules.md rule 5: the owner must be
 * able to undrop), because the trashed object keeps its uid.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, governedApp } from '../support/governed-app.js';

let app: Awaited<ReturnType<typeof governedApp>>;
const Q = '?delimiter=%24';
const asAdmin = (method: string, path: string, body?: unknown) => app.call(method, path, body, ADMIN_KEY);
/** Project `hard` destroys on drop; project `soft` keeps trash for 3 days. */
const H = '/projects/hard/v1';
const S = '/projects/soft/v1';

beforeAll(async () => {
  app = await governedApp();
  for (const [name, grace] of [['hard', 0], ['soft', 3]] as const) {
    await app.arrange('POST', '/v1/projects', { name });
    await app.arrange('POST', '/v1/warehouses', { name: 'w', project: name, storage_root: `/w/${name}`, trash_grace_days: grace });
    await app.arrange('POST', `/projects/${name}/v1/namespace/ns/create`, {});
  }
});

describe('a grant follows the object it was made on', () => {
  it('a table dropped and re-created under the same name does not inherit the grant', async () => {
    await app.arrange('POST', `${H}/table/ns%24t/declare${Q}`, {});
    const key = await app.principal('t_reader', { project: 'hard', role: 'reader', table: ['ns', 't'] });
    expect((await app.call('POST', `${H}/table/ns%24t/describe${Q}`, {}, key)).status).toBe(200);
    await app.arrange('POST', `${H}/table/ns%24t/drop${Q}`, {});
    await app.arrange('POST', `${H}/table/ns%24t/declare${Q}`, {});
    const after = await app.call('POST', `${H}/table/ns%24t/describe${Q}`, {}, key);
    expect([after.status, after.body.code], JSON.stringify(after.body)).toEqual([403, 15]);
    // The listing says so; granting again binds it to the new table (one grant, not two).
    const stale = await asAdmin('GET', '/v1/grants?project=hard&principal=t_reader');
    expect(stale.body.grants).toEqual([{ principal: 't_reader', role: 'reader', table: ['ns', 't'], stale: true }]);
    await app.arrange('POST', '/v1/grants', { project: 'hard', principal: 't_reader', role: 'reader', table: ['ns', 't'] });
    expect((await app.call('POST', `${H}/table/ns%24t/describe${Q}`, {}, key)).status).toBe(200);
    const listed = await asAdmin('GET', '/v1/grants?project=hard&principal=t_reader');
    expect(listed.body.grants).toEqual([{ principal: 't_reader', role: 'reader', table: ['ns', 't'] }]);
  });

  it('a namespace dropped and re-created does not hand its old writers the new one', async () => {
    await app.arrange('POST', `${H}/namespace/team/create`, {});
    const key = await app.principal('team_writer', { project: 'hard', role: 'writer', namespace: ['team'] });
    expect((await app.call('POST', `${H}/table/team%24a/declare${Q}`, {}, key)).status).toBe(200);
    await app.arrange('POST', `${H}/namespace/team/drop`, { behavior: 'Cascade' });
    await app.arrange('POST', `${H}/namespace/team/create`, {});
    const denied = await app.call('POST', `${H}/table/team%24b/declare${Q}`, {}, key);
    expect(denied.status, JSON.stringify(denied.body)).toBe(403);
    expect((await asAdmin('POST', `${H}/table/team%24b/describe${Q}`, {})).status).toBe(404);
    // A revoke by name still removes the stale grant.
    const revoked = await asAdmin('POST', '/v1/grants/revoke', { project: 'hard', principal: 'team_writer', role: 'writer', namespace: ['team'] });
    expect(revoked.body.revoked).toBe(true);
  });

  it('a grant on an object that does not exist is refused (404 naming it), and nothing is stored', async () => {
    await app.arrange('POST', '/v1/principals', { name: 'early' });
    for (const body of [{ table: ['ns', 'later'] }, { namespace: ['later'] }, { namespace: ['ns', 'later'] }]) {
      const res = await asAdmin('POST', '/v1/grants', { project: 'hard', principal: 'early', role: 'writer', ...body });
      expect([res.status, res.body.code], JSON.stringify(res.body)).toEqual([404, 1]);
      expect(res.body.error).toContain('later');
    }
    expect((await asAdmin('GET', '/v1/grants?project=hard&principal=early')).body.grants).toEqual([]);
  });
});

describe('grants survive a recoverable drop (docs/rules.md rule 5)', () => {
  it('the holder of a table grant sees the deadline, undrops the table and keeps its access', async () => {
    await app.arrange('POST', `${S}/table/ns%24kept/declare${Q}`, {});
    const key = await app.principal('kept_writer', { project: 'soft', role: 'writer', table: ['ns', 'kept'] });
    expect((await app.call('POST', `${S}/table/ns%24kept/drop${Q}`, {}, key)).status).toBe(200);
    expect((await app.call('GET', `${S}/table/ns%24kept/tasks${Q}`, undefined, key)).body.tasks).toHaveLength(1);
    const back = await app.call('POST', `${S}/table/ns%24kept/undrop${Q}`, {}, key);
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect((await app.call('POST', `${S}/table/ns%24kept/describe${Q}`, {}, key)).status).toBe(200);
  });

  it('a table dropped to trash and a new one declared at its name: the grant stays with the trashed one', async () => {
    await app.arrange('POST', `${S}/table/ns%24twin/declare${Q}`, {});
    const key = await app.principal('twin_reader', { project: 'soft', role: 'reader', table: ['ns', 'twin'] });
    await app.arrange('POST', `${S}/table/ns%24twin/drop${Q}`, {});
    await app.arrange('POST', `${S}/table/ns%24twin/declare${Q}`, {});
    expect((await app.call('POST', `${S}/table/ns%24twin/describe${Q}`, {}, key)).status).toBe(403);
  });

  it('the holder of a namespace grant undrops the subtree and keeps its access', async () => {
    await app.arrange('POST', `${S}/namespace/sub/create`, {});
    await app.arrange('POST', `${S}/table/sub%24t/declare${Q}`, {});
    const key = await app.principal('sub_writer', { project: 'soft', role: 'writer', namespace: ['sub'] });
    expect((await app.call('POST', `${S}/namespace/sub/drop`, { behavior: 'Cascade' }, key)).status).toBe(200);
    expect((await app.call('GET', `${S}/namespace/sub/tasks`, undefined, key)).status).toBe(200);
    const back = await app.call('POST', `${S}/namespace/sub/undrop`, {}, key);
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect((await app.call('POST', `${S}/namespace/sub/describe`, {}, key)).status).toBe(200);
    // A declared-only table stays in trash (docs/lifecycle.md); the same grant undrops it.
    expect((await app.call('POST', `${S}/table/sub%24t/undrop${Q}`, {}, key)).status).toBe(200);
    expect((await app.call('POST', `${S}/table/sub%24t/describe${Q}`, {}, key)).status).toBe(200);
  });
});
