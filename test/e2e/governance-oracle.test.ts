import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, governedApp, type Answer } from '../support/governed-app.js';

/**
 * No existence oracle (docs/rules.md rule 6): on destructive doors, "not yours" and "does not exist"
 * answer byte for byte the same (the `instance` request id aside). Create doors do the opposite.
 */
const comparable = (a: Answer) => ({
  status: a.status,
  headers: a.raw.headers,
  body: a.raw.body.toString('utf8').replace(/"instance":"[^"]*"/, '"instance":"…"'),
});

describe('destructive doors answer "not yours" exactly like "does not exist"', () => {
  let app: Awaited<ReturnType<typeof governedApp>>;
  let outsider: string;

  beforeAll(async () => {
    app = await governedApp();
    await app.arrange('POST', '/v1/projects', { name: 'acme' });
    await app.arrange('POST', '/v1/projects', { name: 'other' });
    await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: '/w/acme/main' });
    await app.arrange('POST', '/v1/warehouses', { name: 'spare', project: 'acme', storage_root: '/w/acme/spare' });
    outsider = await app.principal('outsider', { project: 'other', role: 'admin' });
  });

  // Each case: the door, how to make the object exist, and how to remove it again.
  const cases: { door: string; path: string; body?: unknown; create: [string, string, unknown][]; remove: [string, string, unknown][] }[] = [
    {
      door: 'DropTable',
      path: '/projects/acme/v1/table/ns1%24t/drop',
      create: [['POST', '/projects/acme/v1/namespace/ns1/create', {}], ['POST', '/projects/acme/v1/table/ns1%24t/declare', {}]],
      remove: [['POST', '/projects/acme/v1/table/ns1%24t/deregister', {}]],
    },
    {
      door: 'DeregisterTable',
      path: '/projects/acme/v1/table/ns2%24t/deregister',
      create: [['POST', '/projects/acme/v1/namespace/ns2/create', {}], ['POST', '/projects/acme/v1/table/ns2%24t/declare', {}]],
      remove: [['POST', '/projects/acme/v1/table/ns2%24t/deregister', {}]],
    },
    {
      door: 'RenameTable',
      path: '/projects/acme/v1/table/ns3%24t/rename',
      body: { new_table_name: 'u' },
      create: [['POST', '/projects/acme/v1/namespace/ns3/create', {}], ['POST', '/projects/acme/v1/table/ns3%24t/declare', {}]],
      remove: [['POST', '/projects/acme/v1/table/ns3%24t/deregister', {}]],
    },
    {
      door: 'DropNamespace',
      path: '/projects/acme/v1/namespace/ns4/drop',
      create: [['POST', '/projects/acme/v1/namespace/ns4/create', {}]],
      remove: [['POST', '/projects/acme/v1/namespace/ns4/drop', {}]],
    },
    {
      door: 'DeactivateWarehouse',
      path: '/v1/warehouses/w5/deactivate',
      body: { project: 'acme' },
      create: [['POST', '/v1/warehouses', { name: 'w5', project: 'acme', storage_root: '/w/acme/5' }]],
      remove: [['POST', '/v1/warehouses/w5/delete', { project: 'acme' }]],
    },
    {
      door: 'DeleteWarehouse',
      path: '/v1/warehouses/w6/delete',
      body: { project: 'acme', purge: true },
      create: [['POST', '/v1/warehouses', { name: 'w6', project: 'acme', storage_root: '/w/acme/6' }]],
      remove: [['POST', '/v1/warehouses/w6/delete', { project: 'acme' }]],
    },
    {
      door: 'DeleteProject',
      path: '/v1/projects/p7/delete',
      create: [['POST', '/v1/projects', { name: 'p7' }]],
      remove: [['POST', '/v1/projects/p7/delete', {}]],
    },
  ];

  for (const c of cases) {
    it(c.door, async () => {
      for (const [m, p, b] of c.create) await app.arrange(m, p, b);
      const notYours = await app.call('POST', c.path, c.body ?? {}, outsider);
      for (const [m, p, b] of c.remove) await app.arrange(m, p, b);
      const missingToOutsider = await app.call('POST', c.path, c.body ?? {}, outsider);
      const missingToAdmin = await app.call('POST', c.path, c.body ?? {}, ADMIN_KEY);
      expect(notYours.status).toBe(404);
      expect(comparable(notYours)).toEqual(comparable(missingToAdmin));
      expect(comparable(notYours)).toEqual(comparable(missingToOutsider));
    });
  }

  it('force / mode do not change the answer: authorization runs first and identically', async () => {
    await app.arrange('POST', '/projects/acme/v1/namespace/ns8/create', {});
    const plain = await app.call('POST', '/projects/acme/v1/namespace/ns8/drop', {}, outsider);
    const skip = await app.call('POST', '/projects/acme/v1/namespace/ns8/drop', { mode: 'skip', behavior: 'cascade' }, outsider);
    expect(comparable(plain)).toEqual(comparable(skip));
    expect(await app.arrange('POST', '/projects/acme/v1/namespace/ns8/describe', {})).toEqual({ properties: {}, protected: false });
  });

  it('create doors do the opposite: a missing parent is a 404 naming the door that creates it', async () => {
    // …to a caller who holds something in the project (an outsider: the next describe block).
    const reader = await app.principal('acme_reader', { project: 'acme', role: 'reader' });
    const res = await app.call('POST', '/projects/acme/v1/namespace/nope%24child/create', {}, reader);
    expect(res.status).toBe(404);
    expect(res.body.error).toContain('CreateNamespace');
    const denied = await app.call('POST', '/projects/acme/v1/namespace/fresh/create', {}, reader);
    expect(denied.status).toBe(403);
  });
});

/**
 * Create doors are no existence oracle across tenants (issue 24, finding 6; docs/governance.md,
 * "Destinations, force and tenants"): a caller who holds nothing in a project is decided by
 * authorization before anything about the project is looked up, so a project that does not
 * exist, a parent that does not exist and one that does all answer the same 403 — with the same
 * registry work. A caller who holds something in the project still gets the helpful 404.
 */
describe('create doors answer an outsider the same whether the project or parent exists', () => {
  let app: Awaited<ReturnType<typeof governedApp>>;
  let outsider: string;
  let member: string;

  beforeAll(async () => {
    app = await governedApp();
    await app.arrange('POST', '/v1/projects', { name: 'acme' });
    await app.arrange('POST', '/v1/projects', { name: 'other' });
    await app.arrange('POST', '/v1/warehouses', { name: 'main', project: 'acme', storage_root: '/w/acme' });
    await app.arrange('POST', '/projects/acme/v1/namespace/real/create', {});
    outsider = await app.principal('outsider2', { project: 'other', role: 'admin' });
    member = await app.principal('member2', { project: 'acme', role: 'writer', namespace: ['real'] });
  });

  /** The answer with the one name that differs between two probes written out as `X`. */
  const as = (a: Answer, name: string) => ({ ...comparable(a), body: comparable(a).body.split(name).join('X') });

  /**
   * The registry round trips one request makes in a row — what its latency is made of (each
   * one a request to S3): a read that starts while another is in flight shares its round trip.
   * Counted, not timed, so a loaded machine cannot make it flaky.
   */
  async function roundTrips(run: (i: number) => Promise<Answer>, runs = 1) {
    const store = app.registryStore;
    let inFlight = 0;
    let trips = 0;
    const counted = <A extends unknown[], R>(f: (...a: A) => Promise<R>) => async (...a: A) => {
      if (inFlight++ === 0) trips++;
      try {
        await new Promise((r) => setTimeout(r, 2));
        return await f(...a);
      } finally {
        inFlight--;
      }
    };
    const original = { get: store.get, head: store.head, list: store.list };
    store.get = counted(original.get.bind(store));
    store.head = counted(original.head.bind(store));
    store.list = counted(original.list.bind(store));
    try {
      const all: number[] = [];
      let answer: Answer | undefined;
      for (let i = 0; i < runs; i++) {
        trips = 0;
        answer = await run(i);
        all.push(trips);
      }
      expect(new Set(all).size, `round trips per run: ${all}`).toBe(1);
      return { answer: answer!, trips: all[0] };
    } finally {
      Object.assign(store, original);
    }
  }

  const probes: { door: string; method: string; path: (project: string, ns: string) => string; body?: (project: string) => unknown }[] = [
    { door: 'DeclareTable', method: 'POST', path: (p, ns) => `/projects/${p}/v1/table/${ns}%24t/declare` },
    { door: 'CreateNamespace', method: 'POST', path: (p, ns) => `/projects/${p}/v1/namespace/${ns}%24child/create` },
    { door: 'RegisterTable', method: 'POST', path: (p, ns) => `/projects/${p}/v1/table/${ns}%24t/register`, body: () => ({ location: 'x.lance' }) },
  ];

  for (const probe of probes) {
    it(`${probe.door}: an existing and a missing parent answer the outsider alike, in as many round trips`, async () => {
      const call = (ns: string) => () => app.call(probe.method, probe.path('acme', ns), probe.body?.('acme') ?? {}, outsider);
      await call('real')(); // warm the project cache, as any earlier request would
      const existing = await roundTrips(call('real'));
      const missing = await roundTrips(call('none'));
      expect(existing.answer.status, JSON.stringify(existing.answer.body)).toBe(403);
      expect(as(existing.answer, 'real')).toEqual(as(missing.answer, 'none'));
      expect(existing.trips).toBe(missing.trips);
    });

    it(`${probe.door}: a project that does not exist answers the outsider like one it holds nothing in, in as many round trips`, async () => {
      const call = (p: string) => () => app.call(probe.method, probe.path(p, 'real'), probe.body?.(p) ?? {}, outsider);
      await call('acme')();
      const existing = await roundTrips(call('acme'));
      const missing = await roundTrips(call('nope'));
      expect(existing.answer.status).toBe(403);
      expect(as(existing.answer, 'acme')).toEqual(as(missing.answer, 'nope'));
      expect(existing.trips).toBe(missing.trips);
      // A project nobody used lately (its record not cached): still as many.
      for (let i = 0; i < 5; i++) await app.arrange('POST', '/v1/projects', { name: `cold_${probe.door}_${i}` });
      const cold = await roundTrips((i) => app.call(probe.method, probe.path(`cold_${probe.door}_${i}`, 'real'), probe.body?.('x') ?? {}, outsider), 5);
      expect(cold.answer.status).toBe(403);
      expect(cold.trips).toBe(missing.trips);
    });
  }

  it('control-plane create doors too: a warehouse or a grant in a project that does not exist', async () => {
    for (const [path, body] of [
      ['/v1/warehouses', (p: string) => ({ project: p, name: 'w', storage_root: `/w/${p}-x` })],
      ['/v1/grants', (p: string) => ({ project: p, principal: 'outsider2', role: 'admin' })],
    ] as const) {
      const existing = await app.call('POST', path, body('acme'), outsider);
      const missing = await app.call('POST', path, body('nope'), outsider);
      expect(existing.status, JSON.stringify(existing.body)).toBe(403);
      expect(as(existing, 'acme')).toEqual(as(missing, 'nope'));
    }
  });

  it('a caller who holds something in the project still hears which parent to create', async () => {
    const res = await app.call('POST', '/projects/acme/v1/table/none%24t/declare', {}, member);
    expect([res.status, res.body.code]).toEqual([404, 1]);
    expect(res.body.error).toContain('CreateNamespace');
    // and the platform administrator hears that the project is missing, and how to create it
    const admin = await app.call('POST', '/projects/nope/v1/table/real%24t/declare', {}, ADMIN_KEY);
    expect(admin.status).toBe(404);
    expect(admin.body.error).toContain('POST /v1/projects');
  });
});
