/**
 * Object quotas at the doors that bring objects back from trash (lib/operations/quota-admission.ts,
 * lib/catalog/namespaces/undrop.ts): an undrop adds an object to the project like a create does,
 * so it takes a quota slot by the same compare-and-swap. On the real local server: 16 concurrent
 * UndropTable against a table quota of 10 restore exactly 10, the others get 403 / 15 and stay in
 * trash; a namespace undrop takes a slot per namespace of its subtree, all or none.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jsonPosts } from '../support/data-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ RASK_TRASH_GRACE_DAYS: '7' });
});
afterAll(() => s.stop());

const { post, ok } = jsonPosts(() => s);
async function tablesOf(ns: string): Promise<Set<string>> {
  const r = await s.request('GET', `/v1/namespace/${ns}/table/list?limit=1000`);
  expect(r.status, r.text).toBe(200);
  return new Set(r.json().tables);
}

it('16 concurrent UndropTable against a table quota of 10: exactly 10 restored, 6 refused with 403 / 15 and left in trash', async () => {
  await ok('/v1/namespace/u/create');
  for (let i = 0; i < 16; i++) await ok(`/v1/table/u%24t${i}/declare`);
  for (let i = 0; i < 16; i++) await ok(`/v1/table/u%24t${i}/drop`);
  expect((await ok('/v1/limits', { tables: 10 })).tables).toMatchObject({ limit: 10, in_use: 0 });

  const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => post(`/v1/table/u%24t${i}/undrop`)));
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((x) => x === 200).length, String(statuses)).toBe(10);
  const refused = answers.filter((a) => a.status !== 200);
  expect(refused.map((a) => [a.status, a.json().code])).toEqual(Array(6).fill([403, 15]));
  expect(refused[0].json().error).toMatch(/has reached its quota of 10 tables/);
  const restored = new Set(answers.flatMap((a, i) => (a.status === 200 ? [`t${i}`] : [])));
  expect(await tablesOf('u')).toEqual(restored);

  // A refused undrop wrote nothing: with the quota raised, the same table comes back.
  const left = answers.findIndex((a) => a.status !== 200);
  await ok('/v1/limits', { tables: 11 });
  await ok(`/v1/table/u%24t${left}/undrop`);
  expect((await tablesOf('u')).has(`t${left}`)).toBe(true);
  // Under another name too: the rename target takes the slot, and the quota is full again.
  const another = answers.findIndex((a, i) => a.status !== 200 && i !== left);
  const full = await post(`/v1/table/u%24t${another}/undrop`, { new_table_name: 'renamed' });
  expect([full.status, full.json().code], full.text).toEqual([403, 15]);
  expect((await tablesOf('u')).has('renamed')).toBe(false);
  await ok('/v1/limits', { tables: null });
});

it('a namespace undrop takes a namespace slot for each namespace of its subtree, all or none', async () => {
  await ok('/v1/namespace/w/create');
  await ok('/v1/namespace/w%24a/create');
  await ok('/v1/namespace/w%24b/create');
  await ok('/v1/namespace/w/drop', { behavior: 'Cascade' });
  // u alone is left; w, w$a and w$b would make 4.
  expect((await ok('/v1/limits', { namespaces: 3 })).namespaces).toMatchObject({ limit: 3, in_use: 1 });
  const refused = await post('/v1/namespace/w/undrop');
  expect([refused.status, refused.json().code], refused.text).toEqual([403, 15]);
  expect(refused.json().error).toMatch(/quota of 3 namespaces .*so these 3 namespaces were not added/);
  for (const n of ['w', 'w%24a', 'w%24b']) expect((await post(`/v1/namespace/${n}/exists`)).status).toBe(404);

  await ok('/v1/limits', { namespaces: 4 });
  expect(await ok('/v1/namespace/w/undrop')).toMatchObject({ restored: true, namespaces: 3 });
  expect((await post('/v1/namespace/w%24b/exists')).status).toBe(200);
  expect((await ok('/v1/limits', {})).namespaces).toMatchObject({ limit: 4, in_use: 4 });
});

it('BindNamespace that creates the namespace takes a namespace slot: over the quota it is 403 / 15 and nothing exists', async () => {
  await ok('/v1/projects', { name: 'acme' });
  await ok('/v1/warehouses', { name: 'w1', project: 'acme', storage_root: `${s.dataDir}/projects/acme/w1` });
  await ok('/projects/acme/v1/limits', { namespaces: 1 });
  expect(await ok('/v1/warehouses/w1/bind', { project: 'acme', namespace: 'ml' })).toMatchObject({ created: true });
  const refused = await post('/v1/warehouses/w1/bind', { project: 'acme', namespace: 'sales' });
  expect([refused.status, refused.json().code], refused.text).toEqual([403, 15]);
  expect(refused.json().error).toMatch(/project "acme" has reached its quota of 1 namespaces/);
  expect((await post('/projects/acme/v1/namespace/sales/exists')).status).toBe(404);
  // Binding the namespace that exists adds nothing and is still answered.
  expect(await ok('/v1/warehouses/w1/bind', { project: 'acme', namespace: 'ml' })).toMatchObject({ created: false });
});
