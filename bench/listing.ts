/**
 * What a ListTables page costs on the local server as the namespace grows: page 1 and page 100
 * of 10,000 tables, and page 1 of 100 tables. The records are written straight into the
 * registry directory (10,000 declares over HTTP would take the whole time budget), then the
 * pages are fetched over HTTP as a client would.
 *
 *   npx tsx bench/listing.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsObjectStore } from '../lib/adapters/local/fs-object-store.js';
import { startLocalServer } from '../lib/app/server.js';
import { loadLocalConfig } from '../lib/config.js';
import { keys } from '../lib/registry/keys.js';

export interface ListingCost {
  readonly workload: string;
  readonly ms: number;
}

export async function listingCosts(rounds = 40): Promise<ListingCost[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rask-bench-list-'));
  try {
    const server = await startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_DATA_DIR: dir, RASK_LOG_LEVEL: 'warn' }));
    const registry = new FsObjectStore(path.join(dir, 'registry'));
    const name = (i: number) => `t${String(i).padStart(5, '0')}`;
    for (const [ns, n] of [['big', 10_000], ['small', 100]] as const) {
      // fetch labels a string body text/plain, which the server refuses (415): say it is JSON.
      const created = await fetch(`${server.url}/v1/namespace/${ns}/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: [ns] }) });
      if (created.status !== 200) throw new Error(`create namespace ${ns}: ${created.status} ${await created.text()}`);
      for (let i = 0; i < n; i += 200) {
        await Promise.all(
          Array.from({ length: Math.min(200, n - i) }, (_, j) => {
            const id = [ns, name(i + j)];
            return registry.putIfAbsent(keys.table('default', id), JSON.stringify({ kind: 'table', id, uid: `u${i + j}`, warehouse: 'default', path: `tables/x${i + j}/t.lance`, managedVersioning: true, properties: {}, origin: 'declared', createdAt: new Date().toISOString() }));
          }),
        );
      }
    }
    // The store caches listings only of directories settled for 2 s (fs-object-store.ts).
    await new Promise((r) => setTimeout(r, 2_100));
    const page = async (ns: string, token?: string) => {
      const q = `limit=100${token ? `&page_token=${token}` : ''}`;
      const res = await fetch(`${server.url}/v1/namespace/${ns}/table/list?${q}`);
      const body = (await res.json()) as { tables: string[] };
      if (body.tables?.length !== 100) throw new Error(`page of ${body.tables?.length}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    };
    const time = async (workload: string, run: () => Promise<void>): Promise<ListingCost> => {
      await run(); // warm
      const start = performance.now();
      for (let r = 0; r < rounds; r++) await run();
      return { workload, ms: (performance.now() - start) / rounds };
    };
    const out = [
      await time('ListTables page 1 of 100 tables', () => page('small')),
      await time('ListTables page 1 of 10,000 tables', () => page('big')),
      await time('ListTables page 100 of 10,000 tables', () => page('big', name(9_899))),
    ];
    await server.close();
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [small, first, last] = await listingCosts();
  for (const c of [small, first, last]) console.log(`| ${c.workload} | ${c.ms.toFixed(2)} ms |`);
  console.log(`page 100 / page 1 at 10,000: ${(last.ms / first.ms).toFixed(2)}; page at 10,000 / page at 100: ${(last.ms / small.ms).toFixed(2)}`);
}
