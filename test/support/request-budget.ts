/**
 * The metadata operations of issue #12, run through the metadata Lambda's own composition
 * (createAwsApp) over the stateful S3 fake, each with every S3 request it made and its serial
 * round trips. Shared by test/catalog/s3-request-budget.test.ts (which holds each to its budget)
 * and `npm run bench` (which prints the same table).
 */
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createAwsApp } from '../../lib/app/aws.js';
import { consoleLogger } from '../../lib/app/build.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import { manifestName } from '../../lib/catalog/dataset/manifests.js';
import { loadAwsConfig } from '../../lib/config.js';
import type { Router } from '../../lib/http/router.js';
import { callAsAdmin } from './admin-call.js';
import { metaHandlers } from '../../lib/operations/handlers-meta.js';
import { keys } from '../../lib/registry/keys.js';
import type { TableRecord } from '../../lib/registry/records.js';
import { createS3Fake, type S3Fake, type S3Op, type S3Request } from './s3-fake.js';
import { criticalPath } from './s3-requests.js';

const REGISTRY = 'registry-bucket';
const WH = 'wh-bucket';

/**
 * S3's shape (reads ~15 ms, writes and listings ~30 ms) scaled down to keep the run fast: only
 * the overlap matters to the serial count, and any positive latency shows it.
 */
const LATENCY = (op: S3Op) => (op === 'GET' || op === 'HEAD' ? 2 : 4);

export interface Budget {
  /** Requests in all. */
  readonly requests: number;
  /** Requests on the critical path (each waits for the one before). */
  readonly serial: number;
  /** Only these request kinds (e.g. start-up reads only). */
  readonly only?: readonly S3Op[];
}

export interface Measured {
  readonly operation: string;
  /** The door's own requests (registry and warehouse), the ones its budget counts. */
  readonly requests: readonly S3Request[];
  readonly serial: number;
  readonly budget: Budget;
  /**
   * The change-log appends under `changes/` (docs/events.md, "Delivery"): one per mutation, after
   * the door's work. It takes the round trip the synchronous PutEvents took before the relay
   * (issue #27), so it is counted apart from the door's budget: `serialWithAppend` is the whole
   * critical path.
   */
  readonly appends: readonly S3Request[];
  readonly serialWithAppend: number;
}

/** A request of the change log (the registry prefix, then `changes/`). */
const isAppend = (r: S3Request) => r.bucket === REGISTRY && r.key.startsWith('registry/changes/');

export interface BudgetRun {
  readonly results: readonly Measured[];
  /** One request through the router (not measured). */
  call(method: 'GET' | 'POST', path: string, body?: unknown, query?: string): Promise<unknown>;
  /** Stops intercepting S3 calls. */
  restore(): void;
}

export async function measureMetadataOperations(): Promise<BudgetRun> {
  const fake: S3Fake = createS3Fake();
  const config = loadAwsConfig({ RASK_REGISTRY_BUCKET: REGISTRY, RASK_WAREHOUSE_BUCKET: WH, AWS_REGION: 'us-east-1' });
  let router: Router;
  let services: CatalogServices;
  const results: Measured[] = [];

  async function call(method: 'GET' | 'POST', path: string, body?: unknown, query = '') {
    const res = await callAsAdmin(router, method, path, body, query);
    if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
    return JSON.parse(res.text || 'null');
  }

  /** Runs `op` with latency on and records every request it made. */
  async function measure<T>(operation: string, budget: Budget, op: () => Promise<T>): Promise<T> {
    fake.clearRequests();
    fake.setLatency(LATENCY);
    try {
      const out = await op();
      const all = fake.requests();
      const requests = all.filter((r) => !isAppend(r));
      const appends = all.filter(isAppend);
      results.push({ operation, requests, serial: criticalPath(requests), budget, appends, serialWithAppend: criticalPath(all) });
      return out;
    } finally {
      fake.setLatency(undefined);
    }
  }

  const declare = (ns: string, name: string) => call('POST', `/v1/table/${ns}%24${name}/declare`, { id: [ns, name] });

  /** Stages a manifest the way the Lance client does before version/create. */
  async function stage(tableKey: string, version: number, body: string) {
    const key = `${tableKey}/_versions/${manifestName(version, 'V2')}-${randomUUID()}`;
    const res = await fake.client.send(new PutObjectCommand({ Bucket: WH, Key: key, Body: Buffer.from(body) }));
    return { manifest_path: key, e_tag: res.ETag!, manifest_size: Buffer.byteLength(body), naming_scheme: 'V2' };
  }

  // Problems only: the request table is the output, not a line per authorization decision.
  const observe = { logger: { error: consoleLogger.error, warn: consoleLogger.warn } };
  // A registry that an earlier container already initialised.
  await createAwsApp(config, metaHandlers, fake.client, undefined, observe);
  const first = await measure('first invocation of a container', { requests: 3, serial: 1, only: ['GET'] }, () =>
    createAwsApp(config, metaHandlers, fake.client, undefined, observe),
  );
  ({ router, services } = first);

  await call('POST', '/v1/namespace/ns/create', { id: ['ns'] });
  await measure('CreateNamespace (nested)', { requests: 3, serial: 3 }, () =>
    call('POST', '/v1/namespace/ns%24child/create', { id: ['ns', 'child'] }),
  );
  await declare('ns', 'warm');
  const t = (await measure('DeclareTable', { requests: 4, serial: 3 }, () => declare('ns', 't'))) as { location: string };
  await measure('DescribeTable', { requests: 1, serial: 1 }, () => call('POST', '/v1/table/ns%24t/describe', { id: ['ns', 't'] }));
  // The namespace alone: its record says no protection record can exist (`mayBeProtected`).
  await measure('DescribeNamespace', { requests: 1, serial: 1 }, () => call('POST', '/v1/namespace/ns/describe', { id: ['ns'] }));
  await measure('ListNamespaces', { requests: 2, serial: 1 }, () => call('GET', '/v1/namespace/ns/list'));
  await measure('ListTables', { requests: 2, serial: 1 }, () => call('GET', '/v1/namespace/ns/table/list'));

  const tableKey = t.location.slice(`s3://${WH}/`.length);
  await call('POST', '/v1/table/ns%24t/version/create', { id: ['ns', 't'], version: 1, ...(await stage(tableKey, 1, 'v1')) });
  const v2 = await stage(tableKey, 2, 'manifest v2');
  // GET of the table beside the chain's LIST, then the pinned copy; the staging file stays.
  await measure('CreateTableVersion (version 2)', { requests: 3, serial: 2 }, () =>
    call('POST', '/v1/table/ns%24t/version/create', { id: ['ns', 't'], version: 2, ...v2 }),
  );
  // Without the client's e_tag a HEAD of the staging file (after the table read) pins the copy.
  const { e_tag: _etag, ...v3 } = await stage(tableKey, 3, 'manifest v3');
  await measure('CreateTableVersion (version 3, no e_tag)', { requests: 4, serial: 3 }, () =>
    call('POST', '/v1/table/ns%24t/version/create', { id: ['ns', 't'], version: 3, ...v3 }),
  );

  await declare('ns', 'r');
  // Two rename marks (put beside the first reads, removed at the end: one round trip more) so a
  // listing after a crash mid-rename names only what describes (docs/protocols.md, "The rename mark").
  await measure('RenameTable', { requests: 14, serial: 7 }, () =>
    call('POST', '/v1/table/ns%24r/rename', { id: ['ns', 'r'], new_table_name: 'r2' }),
  );
  await declare('ns', 'dr');
  await measure('DropTable (declared-only)', { requests: 6, serial: 4 }, () => call('POST', '/v1/table/ns%24dr/drop', { id: ['ns', 'dr'] }));
  await declare('ns', 'dg');
  await measure('DeregisterTable', { requests: 4, serial: 3 }, () => call('POST', '/v1/table/ns%24dg/deregister', { id: ['ns', 'dg'] }));

  // 1,000 declared-only tables, records written directly (a thousand declares would only be slow).
  await call('POST', '/v1/namespace/many/create', { id: ['many'] });
  const record = (await services.registry.read<TableRecord>(keys.table('default', ['ns', 'warm'])))!.value;
  await Promise.all(
    Array.from({ length: 1000 }, (_, i) => {
      const id = ['many', `d${String(i).padStart(4, '0')}`];
      return services.registry.create(keys.table('default', id), { ...record, id, uid: randomUUID(), path: `tables/x${i}/t.lance` });
    }),
  );
  await measure('ListTables include_declared=false, page of 100 among 1,000 declared-only', { requests: 3, serial: 2 }, () =>
    call('GET', '/v1/namespace/many/table/list', undefined, '&include_declared=false&limit=100'),
  );
  // One LIST per page: namespace records share the walked subtree, so the page may be short of 100.
  await measure('ListAllTables, limit 100', { requests: 1, serial: 1 }, () => call('GET', '/v1/table', undefined, '&limit=100'));

  return { results, call, restore: () => fake.mock.restore() };
}

/** The markdown table: requests by kind, count and serial round trips beside their budgets. */
export function requestTable(results: readonly Measured[]): string {
  const kinds = (rs: readonly S3Request[]) => {
    const n = new Map<string, number>();
    for (const r of rs) n.set(r.op, (n.get(r.op) ?? 0) + 1);
    return [...n].map(([op, c]) => `${c} ${op}`).join(' + ') || 'none';
  };
  const mark = (ok: boolean) => (ok ? '' : ' ✗');
  const rows = results.map(
    (r) =>
      `| ${r.operation} | ${kinds(r.requests)} | ${r.requests.length}${mark(r.requests.length <= r.budget.requests)} | ≤ ${r.budget.requests} | ` +
      `${r.serial}${mark(r.serial <= r.budget.serial)} | ≤ ${r.budget.serial} |`,
  );
  return ['| operation | S3 requests | count | budget | serial round trips | budget |', '|---|---|---|---|---|---|', ...rows].join('\n');
}
