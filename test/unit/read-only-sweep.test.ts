// @covers ListNamespaces, DescribeNamespace, NamespaceExists, ListTables, ListAllTables, DescribeTable, TableExists, ListTableVersions, DescribeTableVersion, DescribeTransaction, ListProjects, DescribeProject, ListWarehouses, DescribeWarehouse, GetProjectMaintenancePolicy, GetNamespaceMaintenancePolicy, GetTableMaintenancePolicy, GetNamespaceProtection, GetTableProtection, ListTableTasks, ListNamespaceTasks, ListChanges, GetRequestChanges, ListMaintenanceReports, ListJobs, GetProjectLimits, GetPrincipalLimits
/**
 * Every metadata read operation, served by an app in read-only mode (RASK_READ_ONLY, what the
 * per-operation deployment sets on read functions) over stores that refuse writes, against the
 * unsettled states reads repair in the default mode: a table decided-but-unfinished mid-rename
 * and a namespace left `dropping` by a crashed cascade. None may attempt a write (on AWS that is
 * AccessDenied, a 500), and each answers the status the default mode answers once it has repaired.
 *
 * The list of requests is checked against the operation table, so a read operation added later
 * without a case here fails this test.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { objectChangeLog } from '../../lib/adapters/aws/object-change-log.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { buildApp, type BuildOptions } from '../../lib/app/build.js';
import { dropNamespace } from '../../lib/catalog/namespaces/drop.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { liveRecord, readRaw } from '../../lib/catalog/protocols/move.js';
import { markMoving } from '../support/renames.js';
import type { Router } from '../../lib/http/router.js';
import { ALL_OPERATIONS } from '../../lib/contract/operations.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { noCredentials } from '../../lib/ports/credential-vendor.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { accessOf } from '../../infra/constructs/operation-functions.js';
import { writeFakeDataset } from '../support/table-invariants.js';
import { refusingWrites, type WriteRefusingStore } from '../support/write-refusing-store.js';

type Request = readonly [operation: string, method: 'GET' | 'POST', path: string, body?: unknown];

/**
 * a.t was renamed to a.u (decided, not finished); a.v is a managed table a client committed to
 * directly (its record does not know); d was being cascade-dropped (marked, nothing removed).
 */
const REQUESTS: readonly Request[] = [
  ['ListNamespaces', 'GET', '/v1/namespace/d/list'],
  ['ListNamespaces', 'GET', '/v1/namespace/%24/list'],
  ['DescribeNamespace', 'POST', '/v1/namespace/d/describe', {}],
  ['NamespaceExists', 'POST', '/v1/namespace/d/exists', {}],
  ['ListTables', 'GET', '/v1/namespace/a/table/list'],
  ['ListTables', 'GET', '/v1/namespace/d/table/list'],
  ['ListAllTables', 'GET', '/v1/table'],
  ['DescribeTable', 'POST', '/v1/table/a%24t/describe', {}],
  ['DescribeTable', 'POST', '/v1/table/a%24u/describe', {}],
  ['DescribeTable', 'POST', '/v1/table/d%24x/describe', {}],
  ['TableExists', 'POST', '/v1/table/a%24t/exists', {}],
  ['TableExists', 'POST', '/v1/table/a%24u/exists', {}],
  ['ListTableVersions', 'POST', '/v1/table/a%24u/version/list', {}],
  ['DescribeTableVersion', 'POST', '/v1/table/a%24u/version/describe', { version: 1 }],
  ['ListTableVersions', 'POST', '/v1/table/a%24v/version/list', {}],
  ['DescribeTableVersion', 'POST', '/v1/table/a%24v/version/describe', {}],
  ['DescribeTransaction', 'POST', '/v1/transaction/nope/describe', {}],
  ['ListProjects', 'GET', '/v1/projects'],
  ['DescribeProject', 'GET', '/v1/projects/default'],
  ['ListWarehouses', 'GET', '/v1/warehouses'],
  ['DescribeWarehouse', 'GET', '/v1/warehouses/default'],
  ['GetProjectMaintenancePolicy', 'GET', '/v1/maintenance-policy'],
  ['GetNamespaceMaintenancePolicy', 'GET', '/v1/namespace/d/maintenance-policy'],
  ['GetTableMaintenancePolicy', 'GET', '/v1/table/a%24u/maintenance-policy'],
  ['GetNamespaceProtection', 'GET', '/v1/namespace/d/protection'],
  ['GetTableProtection', 'GET', '/v1/table/a%24u/protection'],
  ['GetTableProtection', 'GET', '/v1/table/a%24t/protection'],
  ['ListTableTasks', 'GET', '/v1/table/a%24u/tasks'],
  ['ListNamespaceTasks', 'GET', '/v1/namespace/d/tasks'],
  ['ListChanges', 'GET', '/v1/changes?limit=10'],
  ['ListChanges', 'GET', '/v1/changes?order=newest_first&limit=10'],
  ['GetRequestChanges', 'GET', '/v1/requests/some-client-request-id'],
  ['ListMaintenanceReports', 'GET', '/v1/maintenance/reports?limit=5'],
  ['ListJobs', 'GET', '/v1/jobs?limit=5'],
  ['GetProjectLimits', 'GET', '/v1/limits'],
  ['GetPrincipalLimits', 'GET', '/v1/principals/admin/limits'],
];

function options(store: ObjectStore, warehouse: ObjectStore, readOnly: boolean): BuildOptions {
  return {
    registryStore: store,
    changes: objectChangeLog({ store }),
    storageFor: () => warehouse,
    project: 'default',
    warehouse: 'default',
    warehouseRoot: { kind: 'file', path: '/nowhere' },
    managedVersioning: true,
    trashGraceDays: 0,
    handlers: metaHandlers,
    maxBodyBytes: 1 << 20,
    vendor: noCredentials,
    readOnly,
  };
}

async function send(router: Router, [, method, path, body]: Request): Promise<{ status: number; body: string }> {
  const res = await router({
    method,
    rawPath: path,
    rawQuery: 'delimiter=%24',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
    requestId: randomUUID(),
  });
  return { status: res.status, body: res.body.toString() };
}

async function unsettledCatalog(s: CatalogServices, warehouse: ObjectStore, call: (r: Request) => Promise<{ status: number }>): Promise<void> {
  for (const r of [
    ['', 'POST', '/v1/namespace/a/create', {}],
    ['', 'POST', '/v1/namespace/d/create', {}],
    ['', 'POST', '/v1/namespace/d%24e/create', {}],
    ['', 'POST', '/v1/table/a%24t/declare', {}],
    ['', 'POST', '/v1/table/d%24x/declare', {}],
    ['', 'POST', '/v1/table/a%24v/declare', {}],
  ] as const) {
    expect((await call(r)).status, r[2]).toBe(200);
  }
  await writeFakeDataset(warehouse, (await readRaw(s, ['a', 'v']))!.value.path);
  const source = (await readRaw(s, ['a', 't']))!;
  const moving = await markMoving(s, ['a', 't'], source, ['a', 'u']);
  const arrival: TableRecord = { ...liveRecord(moving.value), id: ['a', 'u'], state: 'arriving', move: { nonce: moving.value.move!.nonce, from: ['a', 't'] } };
  await s.registry.create(keys.table(s.project, ['a', 'u']), arrival);
  await s.registry.replace(keys.table(s.project, ['a', 't']), { ...moving.value, state: 'moved' }, moving.etag);
  const crashing: CatalogServices = {
    ...s,
    crashPoint: (p) => {
      if (p === 'namespace-drop:marked') throw new Error('crash');
    },
  };
  await expect(dropNamespace(crashing, { id: ['d'], mode: 'fail', behavior: 'cascade' })).rejects.toThrow('crash');
}

describe('every metadata read in read-only mode, against states reads repair', () => {
  it('covers every metadata read operation of the operation table', () => {
    const reads = ALL_OPERATIONS.filter((o) => o.bundle === 'meta' && accessOf(o.action) === 'read' && metaHandlers[o.operationId as keyof typeof metaHandlers]);
    expect([...new Set(REQUESTS.map((r) => r[0]))].sort()).toEqual(reads.map((o) => o.operationId).sort());
  });

  it('attempts no write, never answers 5xx, and answers what the repairing mode answers on the same state', async () => {
    const statuses: Record<string, number> = {};
    for (const r of REQUESTS) {
      // A fresh unsettled catalog per request: in the default mode the first read repairs it,
      // which would change what the next request sees.
      const base = new MemoryObjectStore();
      const warehouseBase = new MemoryObjectStore();
      const writable = await buildApp(options(base, warehouseBase, false));
      await unsettledCatalog(writable.services, warehouseBase, (w) => send(writable.router, w));
      const registry: WriteRefusingStore = refusingWrites(base);
      const warehouse: WriteRefusingStore = refusingWrites(warehouseBase);
      const readOnly = await buildApp(options(registry, warehouse, true));
      expect(readOnly.services.readOnly).toBe(true);

      const res = await send(readOnly.router, r);
      expect(res.status, `${r[2]}: ${res.body}`).toBeLessThan(500);
      expect([...registry.attempts, ...warehouse.attempts], r[2]).toEqual([]);
      // The state is as it was (nothing written), so the default mode reads the same state and
      // repairs it on the way: the same status.
      expect((await send(writable.router, r)).status, `${r[1]} ${r[2]} in the default mode`).toBe(res.status);
      statuses[`${r[1]} ${r[2]}`] = res.status;
    }
    // Spot checks of the decided view: the table is at a.u; d is gone.
    expect(statuses['POST /v1/table/a%24u/describe']).toBe(200);
    expect(statuses['POST /v1/table/a%24t/describe']).toBe(404);
    expect(statuses['POST /v1/table/a%24t/exists']).toBe(404);
    expect(statuses['POST /v1/namespace/d/describe']).toBe(404);
    expect(statuses['GET /v1/namespace/d/table/list']).toBe(404);
    expect(statuses['GET /v1/namespace/a/table/list']).toBe(200);
    expect(statuses['POST /v1/table/a%24v/version/list']).toBe(200);
  });
});
