import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raskEventSchema } from '../../lib/events/schema.js';
import { OPERATION_EVENTS } from '../../lib/events/vocabulary.js';
import { OPERATIONS, type OperationId } from '../../lib/contract/operations.js';
import { ipcRows } from '../data/fixtures.js';
import { expectOk, TableApi } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Change events from the local server (docs/events.md): each door called once over HTTP, and
 * after each call exactly the events it should have appended to `events/*.ndjson` — one of its
 * documented type for a successful mutation, none for a read or a failure — each valid against
 * the schema.
 */
describe('change events (local NDJSON)', () => {
  let s: TestServer;
  let seen = 0;
  const eventsDir = () => path.join(s.dataDir, 'events');
  const allEvents = (): Record<string, any>[] =>
    existsSync(eventsDir())
      ? readdirSync(eventsDir())
          .sort()
          .flatMap((f) => readFileSync(path.join(eventsDir(), f), 'utf8').split('\n').filter(Boolean))
          .map((line) => JSON.parse(line))
      : [];
  /** The events appended since the last call. */
  const fresh = () => {
    const all = allEvents();
    const out = all.slice(seen);
    seen = all.length;
    return out;
  };
  const exercised = new Set<string>();
  /** Runs one door and checks it appended exactly its own event (or none for a read). */
  async function door(operation: OperationId, call: () => Promise<{ status: number; text: string }>, expectStatus = 200) {
    const res = await call();
    expect(res.status, `${operation}: ${res.text}`).toBe(expectStatus);
    const events = fresh();
    // A refused request changed nothing, so it says nothing either.
    const type = res.status < 300 ? OPERATION_EVENTS[operation] : null;
    if (type) {
      expect(events.map((e) => [e.type, e.data.operation]), operation).toEqual([[type, operation]]);
      exercised.add(operation);
    } else {
      expect(events, operation).toEqual([]);
    }
    for (const e of events) raskEventSchema.parse(e);
    return res;
  }

  beforeAll(async () => {
    s = await startTestServer({ RASK_MAX_SYNC_VECTOR_INDEX_ROWS: '5', RASK_JOBS_INTERVAL_MS: '0' });
    seen = allEvents().length;
  });
  afterAll(() => s?.stop());

  async function namespaceDoors() {
    await door('CreateNamespace', () => s.request('POST', '/v1/namespace/ev/create', '{}'));
    await door('DescribeNamespace', () => s.request('POST', '/v1/namespace/ev/describe', '{}'));
    await door('ListNamespaces', () => s.request('GET', '/v1/namespace/%24/list'));
    // A conflict changes nothing and says nothing.
    await door('CreateNamespace', () => s.request('POST', '/v1/namespace/ev/create', '{}'), 409);
    await door('CreateNamespace', () => s.request('POST', '/v1/namespace/gone/create', '{}'));
    await door('DropNamespace', () => s.request('POST', '/v1/namespace/gone/drop', '{}'));
    const created = allEvents().find((e) => e.type === 'dev.rask.namespace.created')!;
    expect(created).toMatchObject({
      specversion: '1.0',
      source: 'rask://default',
      subject: 'namespace:ev',
      datacontenttype: 'application/json',
      data: { project: 'default', kind: 'namespace', id: ['ev'], principal: 'anonymous', operation: 'CreateNamespace' },
    });
    expect(created.data.request_id).toMatch(/^[0-9a-f-]{36}$/);
  }

  /** Table and data doors, each with its one event and the version it produced. */
  async function tableDoors() {
    const t = new TableApi(s, ['ev', 't']);
    await door('CreateTable', () => t.arrow('create', ipcRows(10)));
    await door('InsertIntoTable', () => t.arrow('insert', ipcRows(5, 10)));
    const inserted = allEvents().at(-1)!;
    expect(inserted.data).toMatchObject({ operation: 'InsertIntoTable', version: 2, id: ['ev', 't'] });
    await door('MergeInsertIntoTable', () => t.arrow('merge_insert', ipcRows(2, 14), 'on=id&when_matched_update_all=true&when_not_matched_insert_all=true'));
    await door('UpdateTable', () => t.post('update', { predicate: 'id = 1', updates: [['text', "'one'"]] }));
    await door('DeleteFromTable', () => t.post('delete', { predicate: 'id = 2' }));
    await door('CountTableRows', () => t.get('count_rows'));
    await door('QueryTable', () => t.post('query', { k: 3 }));
    await door('DescribeTable', () => t.post('describe'));
    await door('CreateTableScalarIndex', () => t.post('create_scalar_index', { column: 'id', index_type: 'BTREE', name: 'id_idx' }));
    await door('DropTableIndex', () => t.post('index/id_idx/drop'));
    const queued = await door('CreateTableIndex', () => t.post('create_index', { column: 'vec', index_type: 'IVF_PQ', num_partitions: 2 }));
    const transactionId = JSON.parse(queued.text).transaction_id as string;
    expect(allEvents().at(-1)!.data.details).toMatchObject({ transaction_id: transactionId });
    await door('DescribeTransaction', () => s.request('POST', `/v1/transaction/${transactionId}/describe`, '{}'));
    await door('AlterTransaction', () => s.request('POST', `/v1/transaction/${transactionId}/alter`, JSON.stringify({ actions: [{ setStatusAction: { status: 'CANCELED' } }] })));
    await door('CreateTableTag', () => t.post('tags/create', { tag: 'v1', version: 1 }));
    await door('UpdateTableTag', () => t.post('tags/update', { tag: 'v1', version: 2 }));
    await door('DeleteTableTag', () => t.post('tags/delete', { tag: 'v1' }));
    await door('CreateTableBranch', () => t.post('branches/create', { name: 'dev' }));
    await door('DeleteTableBranch', () => t.post('branches/delete', { name: 'dev' }));
    await door('AlterTableAddColumns', () => t.post('add_columns', { new_columns: [{ name: 'double', expression: 'id * 2' }] }));
    await door('AlterTableAlterColumns', () => t.post('alter_columns', { alterations: [{ path: 'double', rename: 'twice' }] }));
    await door('UpdateFieldMetadata', () => t.post('update_field_metadata', { updates: [{ path: 'text', metadata: { unit: 'words' } }] }));
    await door('UpdateTableSchemaMetadata', () => s.request('POST', t.path('schema_metadata/update'), JSON.stringify({ owner: 'ana' })));
    await door('AlterTableDropColumns', () => t.post('drop_columns', { columns: ['twice'] }));
    await door('AlterTableAddColumns', () => t.post('add_columns', { new_columns: [{ name: 'c', computed: 'id * 3' }] }));
    await door('AlterTableBackfillColumns', () => t.post('backfill_column', { column: 'c' }), 202);
    await door('RestoreTable', () => t.post('restore', { version: 1 }));
    await door('RenameTable', () => t.post('rename', { new_table_name: 't2' }));
    expect(allEvents().at(-1)!.data.details).toMatchObject({ new_table_name: 't2' });
    const t2 = new TableApi(s, ['ev', 't2']);
    await door('DeregisterTable', () => t2.post('deregister'));
    const location = JSON.parse(allEvents().at(-1)!.data.details ? JSON.stringify(allEvents().at(-1)!.data.details) : '{}').location as string;
    expect(location).toMatch(/\.lance$/);
    await door('RegisterTable', () => t2.post('register', { location }));
    await door('DeclareTable', () => new TableApi(s, ['ev', 'declared']).post('declare'));
    await door('DropTable', () => t2.post('drop'));
  }

  /** The official client through managed versioning: declare, one version.created per commit, versions deleted. */
  async function clientCommits() {
    fresh();
    const db = await lancedb.connectNamespace('rest', { uri: s.url });
    const table = await db.createTable('client', [{ id: 1, vector: [1, 2] }], ['ev']);
    await table.add([{ id: 2, vector: [3, 4] }]);
    await table.add([{ id: 3, vector: [5, 6] }]);
    expect(fresh().map((e) => [e.type, e.data.version ?? null])).toEqual([
      ['dev.rask.table.declared', null],
      ['dev.rask.table.version.created', 1],
      ['dev.rask.table.version.created', 2],
      ['dev.rask.table.version.created', 3],
    ]);
    exercised.add('DeclareTable').add('CreateTableVersion');
    const t = new TableApi(s, ['ev', 'client']);
    await door('ListTableVersions', () => t.post('version/list'));
    await door('BatchDeleteTableVersions', () => t.post('version/delete', { ranges: [{ start_version: 1, end_version: 1 }] }));
  }

  it('every supported mutation of the operation table emits exactly its one event; reads and refusals none', async () => {
    await namespaceDoors();
    await tableDoors();
    await clientCommits();
    const unsupported = new Set(['BatchCreateTableVersions', 'BatchCommitTables', 'CreateMaterializedView', 'RefreshMaterializedView']);
    const mutations = OPERATIONS.map((o) => o.operationId).filter((op) => OPERATION_EVENTS[op] && !unsupported.has(op));
    expect(mutations.filter((op) => !exercised.has(op))).toEqual([]);
  });

  it('a publish that fails does not fail the request', async () => {
    rmSync(eventsDir(), { recursive: true, force: true });
    writeFileSync(eventsDir(), 'not a directory');
    try {
      expectOk(await s.request('POST', '/v1/namespace/unlogged/create', '{}'));
      expectOk(await s.request('POST', '/v1/namespace/unlogged/describe', '{}'));
    } finally {
      rmSync(eventsDir(), { force: true });
    }
  });
});
