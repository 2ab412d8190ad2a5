// @covers CreateWarehouse, DescribeWarehouse, BindNamespace, DeclareTable, DropTable, ListTableTasks
/**
 * A warehouse created without `trash_grace_days` keeps dropped tables as long as the deployment
 * says (RASK_TRASH_GRACE_DAYS), like the default warehouse does: on the real local server
 * configured with a grace of 3 days, CreateWarehouse without the field answers 3, DescribeWarehouse
 * says 3, and a table dropped there goes to trash expiring 3 days after its drop. The field, given
 * (0 included), still wins.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jsonPosts } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const GRACE = 3;
const DAY = 86_400_000;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RASK_TRASH_GRACE_DAYS: String(GRACE) });
});
afterAll(() => s.stop());

const { ok } = jsonPosts(() => s);

it("CreateWarehouse without trash_grace_days takes the deployment's grace, and a drop there expires after it", async () => {
  await ok('/v1/projects', { name: 'acme' });
  const created = await ok('/v1/warehouses', { name: 'w1', project: 'acme', storage_root: `${s.dataDir}/projects/acme/w1` });
  expect(created.trash_grace_days).toBe(GRACE);
  const described = await s.request('GET', '/v1/warehouses/w1?project=acme');
  expect(described.status, described.text).toBe(200);
  expect(described.json().trash_grace_days).toBe(GRACE);

  await ok('/v1/warehouses/w1/bind', { project: 'acme', namespace: 'ml' });
  await ok('/projects/acme/v1/table/ml%24t/declare', { id: ['ml', 't'] });
  await ok('/projects/acme/v1/table/ml%24t/drop', { id: ['ml', 't'] });
  const tasks = await s.request('GET', '/projects/acme/v1/table/ml%24t/tasks');
  expect(tasks.status, tasks.text).toBe(200);
  const [task] = tasks.json().tasks as { dropped_at: string; expires_at: string }[];
  expect(Date.parse(task.expires_at) - Date.parse(task.dropped_at)).toBe(GRACE * DAY);
});

it('trash_grace_days given, 0 included, is what the warehouse keeps', async () => {
  await ok('/v1/projects', { name: 'beta' });
  const zero = await ok('/v1/warehouses', { name: 'w0', project: 'beta', storage_root: `${s.dataDir}/projects/beta/w0`, trash_grace_days: 0 });
  expect(zero.trash_grace_days).toBe(0);
  const nine = await ok('/v1/warehouses', { name: 'w9', project: 'beta', storage_root: `${s.dataDir}/projects/beta/w9`, trash_grace_days: 9 });
  expect(nine.trash_grace_days).toBe(9);
});
