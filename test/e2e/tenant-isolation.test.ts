// @covers CreateWarehouse, DeleteWarehouse, RegisterTable, DropTable, UpdateProject, DescribeProject
/**
 * Tenant isolation of storage (issue 24, finding 1; docs/governance.md "Storage allotment"): the
 * local server with RASK_AUTH=keys, project A's admin and A's writer against project B's storage,
 * the registry, the data directory and a directory outside the allotted storage (standing for
 * /etc). Every attempt is refused with a clear 400/403/409, and afterwards B's data, the outside
 * directory and the registry are byte-for-byte what they were (listed and hashed before and after).
 *
 * The attacks that need a warehouse over another's root are also run against the state an older
 * server could leave (such a warehouse written straight into the registry, and the storage-claims
 * index absent, as before this change): the deleting doors refuse it and `rask maintenance
 * reconcile` reports it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { TableRecord, WarehouseRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';
import { ipcRows } from '../data/fixtures.js';
import { startTestServer, type RawResponse, type TestServer } from '../support/server.js';

const ADMIN = 'tenant-isolation-admin-key-0123456789';
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every file under `dir` (recursively), with the SHA-256 of its bytes, sorted: the before/after proof. */
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    const full = path.join(e.parentPath, e.name);
    out.push(`${path.relative(dir, full)} ${createHash('sha256').update(await readFile(full)).digest('hex')}`);
  }
  return out.sort();
}

function rask(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(repo, 'bin/rask.mjs'), ...args], { cwd: repo, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('tenant isolation of storage (RASK_AUTH=keys)', () => {
  let server: TestServer;
  let outside: string; // stands for /etc: a host directory outside every allotment
  let bRoot: string;
  let bTablePath: string; // B's table location, relative to B's warehouse root
  let bLocation: string;
  const roles: Record<'admin' | 'writer', string> = { admin: '', writer: '' };

  const call = async (method: string, p: string, key: string, body?: unknown): Promise<RawResponse> =>
    server.request(method, p, body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body), {
      'x-api-key': key,
      ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' }),
    });
  const ok = async (res: Promise<RawResponse>) => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r.json();
  };
  /** What must not change: B's storage, the outside directory, the registry, the default warehouse. */
  const guarded = () => Promise.all([snapshot(bRoot), snapshot(outside), snapshot(path.join(server.dataDir, 'registry')), snapshot(path.join(server.dataDir, 'warehouses'))]);

  beforeAll(async () => {
    outside = await mkdtemp(path.join(tmpdir(), 'rask-host-etc-'));
    await writeFile(path.join(outside, 'passwd'), 'root:x:0:0');
    await mkdir(path.join(outside, 'ssl'));
    await writeFile(path.join(outside, 'ssl', 'key.pem'), 'secret');
    server = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN });
    for (const p of ['A', 'B']) await ok(call('POST', '/v1/projects', ADMIN, { name: p }));
    bRoot = path.join(server.dataDir, 'projects', 'B', 'main');
    await ok(call('POST', '/v1/warehouses', ADMIN, { name: 'main', project: 'B', storage_root: bRoot }));
    await ok(call('POST', '/v1/warehouses', ADMIN, { name: 'main', project: 'A', storage_root: path.join(server.dataDir, 'projects', 'A', 'main') }));
    await ok(call('POST', '/projects/B/v1/namespace/sales/create', ADMIN, {}));
    const created = await ok(call('POST', '/projects/B/v1/table/sales%24orders/create?delimiter=%24', ADMIN, ipcRows(7)));
    bLocation = created.location;
    bTablePath = path.relative(bRoot, bLocation);
    expect(bTablePath.startsWith('..')).toBe(false);
    await ok(call('POST', '/projects/A/v1/namespace/ans/create', ADMIN, {}));
    for (const role of ['admin', 'writer'] as const) {
      await ok(call('POST', '/v1/principals', ADMIN, { name: `a-${role}` }));
      await ok(call('POST', '/v1/grants', ADMIN, { principal: `a-${role}`, project: 'A', role }));
      roles[role] = (await ok(call('POST', `/v1/principals/a-${role}/keys`, ADMIN, {}))).api_key;
    }
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await rm(outside, { recursive: true, force: true });
  });

  const expectRefused = (r: RawResponse, statuses: number[], what: string) => {
    expect(statuses, `${what}: ${r.status} ${r.text}`).toContain(r.status);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(Number.isInteger(r.json().code), what).toBe(true);
    // No answer names B's objects (its project, warehouse, namespace or table) to a caller of A,
    // beyond echoing the location the caller itself sent.
    expect(r.json().error, what).not.toMatch(/project "B"|warehouse "main"|"sales"|\["sales"|"orders"|sales\$orders/);
  };

  for (const role of ['admin', 'writer'] as const) {
    it(`as A's ${role}: no warehouse over B's root, the registry, the data directory, an outside directory or a parent of them`, async () => {
      const before = await guarded();
      const targets = {
        "B's root": bRoot,
        "inside B's root": path.join(bRoot, 'tables'),
        "B's table": bLocation,
        "B's allotment": path.join(server.dataDir, 'projects', 'B'),
        'every allotment': path.join(server.dataDir, 'projects'),
        'the registry': path.join(server.dataDir, 'registry'),
        'the events': path.join(server.dataDir, 'events'),
        'the data directory': server.dataDir,
        'the default warehouse': path.join(server.dataDir, 'warehouses', 'default'),
        'an outside directory (/etc)': outside,
        'a dotted path into B': `${server.dataDir}/projects/A/../B/main`,
        'a trailing-slash B': `${bRoot}//`,
        'the file-system root': '/',
      };
      for (const [what, root] of Object.entries(targets)) {
        const r = await call('POST', '/projects/A/v1/warehouses', roles[role], { name: 'evil', storage_root: root });
        expectRefused(r, [403], what);
      }
      // A symbolic link inside A's allotment is followed before the check: it points outside.
      const link = path.join(server.dataDir, 'projects', 'A', 'link');
      await mkdir(path.dirname(link), { recursive: true });
      await symlink(outside, link).catch(() => undefined);
      expectRefused(await call('POST', '/projects/A/v1/warehouses', roles[role], { name: 'evil', storage_root: path.join(link, 'x') }), [403], 'a link to /etc');
      expect(await guarded()).toEqual(before);
    });

    it(`as A's ${role}: B's table location cannot be registered into A`, async () => {
      const before = await guarded();
      for (const location of [bLocation, `file://${bLocation}`, path.join('..', '..', 'B', 'main', bTablePath)]) {
        const r = await call('POST', '/projects/A/v1/table/ans%24stolen/register?delimiter=%24', roles[role], { location });
        expectRefused(r, [400, 403], location);
      }
      expect((await call('POST', '/projects/A/v1/table/ans%24stolen/describe?delimiter=%24', roles[role], {})).status).toBe(404);
      expect(await guarded()).toEqual(before);
    });
  }

  it("a register of a location owned by a table the caller cannot read does not name that table", async () => {
    await ok(call('POST', '/projects/A/v1/namespace/vault/create', ADMIN, {}));
    const hidden = await ok(call('POST', '/projects/A/v1/table/vault%24payroll/create?delimiter=%24', ADMIN, ipcRows(3)));
    await ok(call('POST', '/v1/principals', ADMIN, { name: 'a-ans-writer' }));
    await ok(call('POST', '/v1/grants', ADMIN, { principal: 'a-ans-writer', project: 'A', role: 'writer', namespace: ['ans'] }));
    const key = (await ok(call('POST', '/v1/principals/a-ans-writer/keys', ADMIN, {}))).api_key;
    expect((await call('POST', '/projects/A/v1/table/vault%24payroll/describe?delimiter=%24', key, {})).status).toBe(403);
    const before = await guarded();
    const r = await call('POST', '/projects/A/v1/table/ans%24copy/register?delimiter=%24', key, { location: hidden.location });
    expect(r.status, r.text).toBe(400);
    expect(r.json().code).toBe(13);
    expect(r.json().error).toMatch(/another table/);
    expect(r.json().error).not.toMatch(/vault|"payroll"|\["/);
    expect(await guarded()).toEqual(before);
  });

  it('exactly one of 8 concurrent creates with overlapping roots wins; 8 disjoint ones all win', async () => {
    const base = path.join(server.dataDir, 'projects', 'A', 'race');
    // Pairwise overlapping (a chain, in every spelling): any two share storage.
    const roots = [base, path.join(base, 'x'), `${base}/`, path.join(base, 'x', 'y'), `${base}/./x`, base, `${base}/x/y/z`, `${base}/x/..`];
    const answers = await Promise.all(roots.map((root, i) => call('POST', '/projects/A/v1/warehouses', roles.admin, { name: `race${i}`, storage_root: root })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200), JSON.stringify(answers.map((a) => a.text))).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.json().code).toBe(19);
    const disjoint = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call('POST', '/projects/A/v1/warehouses', roles.admin, { name: `lane${i}`, storage_root: path.join(server.dataDir, 'projects', 'A', 'lanes', `l${i}`) })),
    );
    expect(disjoint.map((a) => a.status)).toEqual(Array(8).fill(200));
  });

  describe('warehouses an older server let overlap', () => {
    let registry: Registry;
    beforeAll(async () => {
      registry = new Registry(new FsObjectStore(path.join(server.dataDir, 'registry')));
      const legacy = (name: string, root: string): WarehouseRecord => ({
        kind: 'warehouse',
        project: 'A',
        name,
        storage: { kind: 'file', path: root },
        managedVersioning: true,
        trashGraceDays: 0,
        createdAt: new Date().toISOString(),
      });
      // As the old CreateWarehouse wrote them: an alias of B's root and one over a host directory.
      await registry.create(keys.warehouse('A', 'alias'), legacy('alias', bRoot));
      await registry.create(keys.warehouse('A', 'hostdir'), legacy('hostdir', outside));
      // ...and the registry as it was before the storage-claims index existed.
      const index = await registry.read(keys.storageClaims());
      await registry.remove(keys.storageClaims(), index!.etag);
      await ok(call('POST', '/projects/A/v1/warehouses/alias/bind', ADMIN, { namespace: 'loot' }));
      // The old attack's result: B's dataset registered in A through the alias.
      const stolen: TableRecord = {
        kind: 'table',
        id: ['loot', 'stolen'],
        uid: 'stolen-uid',
        warehouse: 'alias',
        path: bTablePath,
        managedVersioning: true,
        properties: {},
        origin: 'registered',
        mayBeProtected: false,
        dataMarker: 'data',
        createdAt: new Date().toISOString(),
      } as TableRecord;
      await registry.create(keys.table('A', ['loot', 'stolen']), stolen);
    });

    /** The guarded state minus the claims index, which the first request after the upgrade rebuilds. */
    const guardedLegacy = async () => {
      const [b, o, reg, wh] = await guarded();
      return [b, o, reg.filter((l) => !l.startsWith('storage/') && !l.startsWith('reports/')), wh];
    };

    for (const role of ['admin', 'writer'] as const) {
      it(`as A's ${role}: drop through the alias, register through it and purge a host directory are refused; nothing changes`, async () => {
        const before = await guardedLegacy();
        for (const purge of [false, true]) {
          const r = await call('POST', `/projects/A/v1/table/loot%24stolen/drop?delimiter=%24${purge ? '&purge=true' : ''}`, roles[role], {});
          expectRefused(r, [409], `drop purge=${purge}`);
        }
        expectRefused(await call('POST', '/projects/A/v1/table/loot%24again/register?delimiter=%24', roles[role], { location: bTablePath }), [409], 'register via alias');
        expectRefused(await call('POST', '/projects/A/v1/warehouses/hostdir/delete', roles[role], { purge: true }), role === 'admin' ? [409] : [403, 404], 'purge /etc');
        expectRefused(await call('POST', '/projects/A/v1/warehouses/alias/delete', roles[role], { purge: true }), role === 'admin' ? [409] : [403, 404], 'purge alias');
        expect(await guardedLegacy()).toEqual(before);
        // The checks read the old warehouses from their records, without writing the index (a
        // read-only role runs them too); the next door that changes the index builds it with them,
        // so no create can overlap them either.
        await ok(call('POST', '/projects/A/v1/warehouses', ADMIN, { name: `after-${role}`, storage_root: path.join(server.dataDir, 'projects', 'A', `after-${role}`) }));
        const index = await registry.read<{ claims: { warehouse: string }[] }>(keys.storageClaims());
        expect(index!.value.claims.map((c) => c.warehouse)).toEqual(expect.arrayContaining(['alias', 'hostdir', `after-${role}`]));
        // B still reads its rows.
        const count = await call('GET', '/projects/B/v1/table/sales%24orders/count_rows?delimiter=%24', ADMIN);
        expect(count.text).toBe('7');
      });
    }

    it('the orphan scan refuses both roots (nothing listed, nothing deleted) and reconcile reports them', async () => {
      const before = await guardedLegacy();
      const env = { RASK_DATA_DIR: server.dataDir, RASK_LOG_LEVEL: 'warn' };
      const orphans = await rask(['maintenance', 'orphans', '--delete', '--json'], env);
      const report = JSON.parse(orphans.stdout);
      expect(report.items.filter((i: { warehouse: string }) => ['alias', 'hostdir'].includes(i.warehouse))).toEqual([]);
      expect(report.items.filter((i: { project: string }) => i.project === 'B')).toEqual([]);
      expect(report.problems.join('\n')).toMatch(/"A\/hostdir": refused, .* outside the storage/);
      expect(report.problems.join('\n')).toMatch(/"A\/alias": refused/);
      expect(report.problems.join('\n')).toMatch(/"B\/main": refused/);
      const reconcile = JSON.parse((await rask(['maintenance', 'reconcile', '--json'], env)).stdout);
      const found = reconcile.items.map((i: { kind: string; project: string; warehouse: string }) => `${i.kind} ${i.project}/${i.warehouse}`);
      expect(found).toEqual(expect.arrayContaining(['shared-root A/alias', 'shared-root B/main', 'outside-storage A/hostdir']));
      // Their reports land in the registry (registry/reports/): everything else is unchanged.
      expect(await guardedLegacy()).toEqual(before);
    }, 60_000);
  });
});
