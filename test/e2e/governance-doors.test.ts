// @covers CreateProject, ListProjects, DescribeProject, UpdateProject, DeleteProject
// @covers CreateWarehouse, ListWarehouses, DescribeWarehouse, UpdateWarehouse, DeleteWarehouse
// @covers DeactivateWarehouse, ActivateWarehouse, BindNamespace
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** The control-plane doors over raw HTTP (auth off: authorization is test/e2e/governance-matrix.test.ts). */
describe('projects and warehouses', () => {
  let server: TestServer;
  let roots: string;
  const post = (p: string, body: unknown = {}) => server.request('POST', p, JSON.stringify(body));
  const get = (p: string) => server.request('GET', p);

  /** Project acme with warehouses w1 (its default, 3 trash-grace days) and w2. */
  const createAcme = async () => {
    expect((await post('/v1/projects', { name: 'acme', description: 'the acme team' })).status).toBe(200);
    expect((await post('/v1/warehouses', { name: 'w1', project: 'acme', storage_root: path.join(roots, 'acme', 'w1'), trash_grace_days: 3 })).status).toBe(200);
    expect((await post('/v1/warehouses', { name: 'w2', project: 'acme', storage_root: path.join(roots, 'acme', 'w2') })).status).toBe(200);
  };
  /** acme as above, with namespaces ml, sales and sales$eu bound to w2. */
  const createAcmeWithNamespaces = async () => {
    await createAcme();
    expect((await post('/v1/warehouses/w2/bind', { project: 'acme', namespace: 'ml' })).status).toBe(200);
    expect((await post('/v1/warehouses/w2/bind', { project: 'acme', namespace: 'sales' })).status).toBe(200);
    expect((await post('/projects/acme/v1/namespace/sales%24eu/create')).status).toBe(200);
  };

  // A fresh server and storage per test: each test creates the projects, warehouses and
  // namespaces it needs, so any order (or one test alone) works.
  beforeEach(async () => {
    roots = await mkdtemp(path.join(tmpdir(), 'rask-wh-'));
    // The declared storage: project P may put warehouses under <roots>/P (docs/governance.md).
    server = await startTestServer({ RASK_STORAGE_ROOTS: roots });
  });
  afterEach(async () => {
    await server.stop();
    await rm(roots, { recursive: true, force: true });
  });

  it('creates top-down: a warehouse of a missing project is a 404 naming the door that creates it', async () => {
    const res = await post('/v1/warehouses', { name: 'w', project: 'ghost', storage_root: path.join(roots, 'ghost', 'x') });
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ code: 1 });
    expect(res.json().error).toContain('POST /v1/projects');
    expect((await get('/v1/projects')).json().projects).not.toContain('ghost');
  });

  it('creates, lists, describes and updates projects with the wire shapes of the issue', async () => {
    const created = await post('/v1/projects', { name: 'acme', description: 'the acme team' });
    expect(created.status).toBe(200);
    expect(created.json()).toMatchObject({ name: 'acme', description: 'the acme team', default_warehouse: null });
    expect((await post('/v1/projects', { name: 'acme' })).json()).toMatchObject({ code: 2 });
    expect((await post('/v1/projects', { name: '' })).status).toBe(400);

    const list = (await get('/v1/projects')).json();
    expect(list.projects).toEqual(['acme', 'default']);
    expect(list).toHaveProperty('page_token', null);
    const page = (await get('/v1/projects?limit=1')).json();
    expect(page).toEqual({ projects: ['acme'], page_token: 'acme' });
    expect((await get('/v1/projects?limit=1&page_token=acme')).json().projects).toEqual(['default']);

    expect((await post('/v1/projects/acme/update', { description: 'renamed' })).json().description).toBe('renamed');
    expect((await get('/v1/projects/acme')).json()).toMatchObject({ name: 'acme', description: 'renamed' });
    expect((await get('/v1/projects/nope')).status).toBe(404);
  });

  it('scopes warehouses by the project field, the query or the project base URI', async () => {
    expect((await post('/v1/projects', { name: 'acme' })).status).toBe(200);
    const w1 = await post('/v1/warehouses', { name: 'w1', project: 'acme', storage_root: path.join(roots, 'acme', 'w1'), trash_grace_days: 3 });
    expect(w1.status).toBe(200);
    expect(w1.json()).toMatchObject({ name: 'w1', project: 'acme', trash_grace_days: 3, managed_versioning: true, state: 'active' });
    const w2 = await server.request('POST', '/projects/acme/v1/warehouses', JSON.stringify({ name: 'w2', storage_root: path.join(roots, 'acme', 'w2') }));
    expect(w2.status).toBe(200);

    expect((await get('/v1/warehouses?project=acme')).json()).toEqual({ warehouses: ['w1', 'w2'], page_token: null });
    expect((await get('/projects/acme/v1/warehouses')).json().warehouses).toEqual(['w1', 'w2']);
    expect((await get('/v1/warehouses')).json().warehouses).toEqual(['default']);
    // Two sources that disagree are refused.
    expect((await get('/projects/acme/v1/warehouses?project=default')).status).toBe(400);
    // The first warehouse became the project's default.
    expect((await get('/v1/projects/acme')).json().default_warehouse).toBe('w1');

    const updated = await post('/v1/warehouses/w2/update', { project: 'acme', trash_grace_days: 7 });
    expect(updated.json()).toMatchObject({ trash_grace_days: 7 });
    expect((await post('/v1/warehouses/w2/update', { project: 'acme', storage_root: '/elsewhere' })).status).toBe(400);
    expect((await get('/v1/warehouses/w2?project=acme')).json()).toMatchObject({ storage_root: path.join(roots, 'acme', 'w2') });
    expect((await post('/v1/warehouses', { name: 'bad', project: 'acme', storage_root: 'relative/dir' })).status).toBe(400);
  });

  it('binds top-level namespaces at creation and moves them only while empty', async () => {
    await createAcme();
    const base = '/projects/acme/v1';
    expect((await post(`${base}/namespace/sales/create`)).status).toBe(200); // binds to the default, w1
    expect((await post('/v1/warehouses/w2/bind', { project: 'acme', namespace: 'ml' })).json()).toMatchObject({ created: true, warehouse: 'w2' });
    expect((await server.request('GET', `${base}/namespace/%24/list`)).json().namespaces).toEqual(['ml', 'sales']);
    // Still empty: moving is allowed.
    expect((await post(`/projects/acme/v1/warehouses/w2/bind`, { namespace: 'sales' })).json()).toMatchObject({ created: false, warehouse: 'w2' });
    await post(`${base}/namespace/sales%24eu/create`);
    const refused = await post('/v1/warehouses/w1/bind', { project: 'acme', namespace: 'sales' });
    expect(refused.status).toBe(409);
    expect(refused.json().error).toContain('["sales","eu"]');
    // The refused move left it usable and where it was.
    expect((await post(`${base}/namespace/sales%24eu/describe`)).status).toBe(200);
  });

  it('deletes bottom-up: a warehouse with bound namespaces and a project with warehouses refuse, naming them', async () => {
    await createAcmeWithNamespaces();
    const wh = await post('/v1/warehouses/w2/delete', { project: 'acme' });
    expect(wh.status).toBe(409);
    expect(wh.json()).toMatchObject({ code: 3 });
    expect(wh.json().error).toMatch(/"ml".*"sales"|"sales".*"ml"/);
    const pr = await post('/v1/projects/acme/delete');
    expect(pr.status).toBe(409);
    expect(pr.json().error).toContain('"w1"');
  });

  it('quarantines a deactivated warehouse: its namespaces answer 403 until activated', async () => {
    await createAcmeWithNamespaces();
    const base = '/projects/acme/v1';
    expect((await post('/v1/warehouses/w2/deactivate', { project: 'acme' })).json()).toMatchObject({ state: 'deactivated' });
    expect((await get('/v1/warehouses/w2?project=acme')).json().state).toBe('deactivated');
    for (const p of [`${base}/namespace/sales/describe`, `${base}/namespace/sales%24eu/create`, `${base}/table/sales%24eu%24t/declare`]) {
      const res = await post(p);
      expect(res.status, p).toBe(403);
      expect(res.json().code).toBe(15);
    }
    // Namespaces of other warehouses are untouched.
    expect((await post(`${base}/namespace/other/create`)).status).toBe(200);
    await post('/v1/warehouses/w2/activate', { project: 'acme' });
    expect((await post(`${base}/namespace/sales/describe`)).status).toBe(200);
  });

  it('deletes an emptied warehouse and project; the default project cannot be deleted', async () => {
    await createAcmeWithNamespaces();
    const base = '/projects/acme/v1';
    expect((await post(`${base}/namespace/other/create`)).status).toBe(200); // binds to the default, w1
    for (const ns of ['sales%24eu', 'sales', 'ml', 'other']) expect((await post(`${base}/namespace/${ns}/drop`)).status).toBe(200);
    expect((await post('/v1/warehouses/w2/delete', { project: 'acme' })).json()).toMatchObject({ purged: false });
    expect((await post('/v1/warehouses/w1/delete', { project: 'acme' })).status).toBe(200);
    expect((await post('/v1/projects/acme/delete')).status).toBe(200);
    expect((await get('/v1/projects/acme')).status).toBe(404);
    expect((await get('/v1/projects')).json().projects).toEqual(['default']);
    expect((await post('/v1/projects/default/delete')).status).toBe(400);
    expect((await post('/v1/warehouses/default/delete')).status).toBe(409);
  });

  it('storage is allotted: a root outside the allotment is 403, an overlapping one 409, and a purge empties only its own root', async () => {
    await post('/v1/projects', { name: 'p1' });
    await post('/v1/projects', { name: 'p2' });
    expect((await get('/v1/projects/p1')).json().storage_allotment).toEqual([path.join(roots, 'p1')]);
    const outer = path.join(roots, 'p1', 'outer');
    expect((await post('/v1/warehouses', { name: 'outer', project: 'p1', storage_root: outer })).status).toBe(200);
    // Another project's storage, the registry, the data directory: outside p2's allotment.
    for (const root of [outer, path.join(outer, 'team'), path.join(server.dataDir, 'registry'), server.dataDir, roots]) {
      const res = await post('/v1/warehouses', { name: 'x', project: 'p2', storage_root: root });
      expect(res.status, root).toBe(403);
      expect(res.json().code).toBe(15);
    }
    // Inside p1's own allotment, overlapping its own warehouse (either way round): 409 / 19.
    for (const root of [outer, `${outer}/`, path.join(outer, 'team'), path.join(outer, '..', 'outer', 'x'), path.join(roots, 'p1')]) {
      const res = await post('/v1/warehouses', { name: 'x', project: 'p1', storage_root: root });
      expect(res.status, root).toBe(409);
      expect(res.json()).toMatchObject({ code: 19 });
    }
    // Whole segments: a sibling with a common name prefix is its own.
    expect((await post('/v1/warehouses', { name: 'sibling', project: 'p1', storage_root: `${outer}-2` })).status).toBe(200);
    await mkdir(path.join(outer, 'team'), { recursive: true });
    await writeFile(path.join(outer, 'team', 'data.bin'), 'bytes');
    await mkdir(`${outer}-2`, { recursive: true });
    await writeFile(path.join(`${outer}-2`, 'keep.bin'), 'bytes');
    expect((await post('/v1/warehouses/outer/delete', { project: 'p1', purge: true })).json()).toMatchObject({ purged: true });
    expect(await readdir(path.join(outer, 'team')).catch(() => [])).not.toContain('data.bin');
    expect(await readdir(`${outer}-2`)).toEqual(['keep.bin']);
    // The root is free again once its warehouse is gone.
    expect((await post('/v1/warehouses', { name: 'again', project: 'p1', storage_root: path.join(outer, 'team') })).status).toBe(200);
  });

  it('a platform administrator allots more storage (storage_roots), only inside the declared storage', async () => {
    await post('/v1/projects', { name: 'p1' });
    const shared = path.join(roots, 'shared');
    expect((await post('/v1/warehouses', { name: 'w', project: 'p1', storage_root: shared })).status).toBe(403);
    const outside = await post('/v1/projects/p1/update', { storage_roots: [tmpdir()] });
    expect(outside.status).toBe(400);
    expect((await post('/v1/projects/p1/update', { storage_roots: [path.join(server.dataDir, 'registry')] })).status).toBe(400);
    const allotted = await post('/v1/projects/p1/update', { storage_roots: [shared] });
    expect(allotted.status).toBe(200);
    expect(allotted.json().storage_allotment).toEqual([path.join(roots, 'p1'), shared]);
    expect((await post('/v1/warehouses', { name: 'w', project: 'p1', storage_root: path.join(shared, 'team') })).status).toBe(200);
  });
});
