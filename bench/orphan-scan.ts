/**
 * Orphan-scan throughput on local disk, in objects per second (docs/benchmarks.md).
 *
 *   npx tsx bench/orphan-scan.ts [leftoverFiles=20000] [appends=50]
 *
 * The warehouse holds one real LanceDB dataset with `appends` versions (every manifest is read
 * and decoded), 100 declared tables with 20 uncommitted data files each (claimed locations: a
 * manifest listing each, every file a candidate) and `leftoverFiles` files in folders no record
 * or claim reaches (unreferenced folders). Everything is aged past the grace period.
 */
import { createRequire } from 'node:module';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createNamespace } from '../lib/catalog/namespaces/create.js';
import { declareTable } from '../lib/catalog/tables/declare.js';
import { registerTable } from '../lib/catalog/tables/register.js';
import { orphanScanWith } from '../lib/maintenance/orphans.js';
import { keys } from '../lib/registry/keys.js';
import type { WarehouseRecord } from '../lib/registry/records.js';
import { servicesOver } from '../test/support/services.js';

const leftovers = Number(process.argv[2] ?? 20_000);
const appends = Number(process.argv[3] ?? 50);
const lancedb = createRequire(import.meta.url)('@lancedb/lancedb') as typeof import('@lancedb/lancedb');

const f = await servicesOver('fs');
try {
  const s = f.services;
  const root = ((await s.registry.read<WarehouseRecord>(keys.warehouse(s.project, 'default')))!.value.storage as { path: string }).path;
  await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
  const db = await lancedb.connect(path.join(root, 'ds'));
  const t = await db.createTable('t', [{ id: 0 }]);
  for (let i = 1; i < appends; i++) await t.add([{ id: i }]);
  await registerTable(s, { id: ['a', 't'], location: 'ds/t.lance', mode: 'create', properties: {} });
  for (let i = 0; i < 100; i++) {
    const { location } = await declareTable(s, { id: ['a', `d${i}`], properties: {}, identity: {} });
    const dir = path.join(location, 'data');
    await mkdir(dir, { recursive: true });
    await Promise.all(Array.from({ length: 20 }, (_, j) => writeFile(path.join(dir, `${j}.lance`), 'x')));
  }
  for (let i = 0; i < leftovers; i += 100) {
    const dir = path.join(root, 'leftover', `f${i}.lance`, 'data');
    await mkdir(dir, { recursive: true });
    await Promise.all(Array.from({ length: Math.min(100, leftovers - i) }, (_, j) => writeFile(path.join(dir, `${j}.lance`), 'x')));
  }
  const old = new Date(Date.now() - 30 * 86_400_000);
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) await utimes(path.join(e.parentPath, e.name), old, old);
  }
  const start = performance.now();
  const r = await orphanScanWith({ graceMs: 86_400_000 })(s, {});
  const ms = performance.now() - start;
  const objects = r.summary.objects;
  console.log(`${objects} objects (${r.summary.candidates} candidates, ${r.summary.transactions} transaction files) in ${ms.toFixed(0)} ms: ${Math.round((objects / ms) * 1000)} objects/s (complete: ${r.complete})`);
} finally {
  await f.cleanup();
}
