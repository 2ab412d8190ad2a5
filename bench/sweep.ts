/**
 * Sweep cost: `npx tsx bench/sweep.ts [--tables 10] [--appends 20] [--fragments 1000]`.
 *
 * Two measurements on local disk, each a real sweep (compact → fold → clean up) of real
 * LanceDB datasets through the catalog:
 * 1. per table: `--tables` tables of `--appends` appends of 10 rows, swept with
 *    `--older-than-days 0` (every untagged old version reclaimed);
 * 2. per 1,000 fragments: one table of `--fragments` one-row appends, swept the same way.
 * Also an idle pass (nothing left to do) over the same tables: the floor a scheduled sweep pays.
 */
import { parseArgs } from 'node:util';
import { sweep } from '../lib/maintenance/sweep.js';
import { decodeIpc } from '../lib/data/arrow.js';
import { estate, openClient, tableWithAppends } from '../test/maintenance/fixtures.js';
import { ipcRows } from '../test/data/fixtures.js';

const { values } = parseArgs({
  options: { tables: { type: 'string', default: '10' }, appends: { type: 'string', default: '20' }, fragments: { type: 'string', default: '1000' } },
});
const TABLES = Number(values.tables);
const APPENDS = Number(values.appends);
const FRAGMENTS = Number(values.fragments);

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

const e = await estate('fs');
try {
  for (let t = 0; t < TABLES; t++) await tableWithAppends(e.services, ['bench', `t${t}`], APPENDS);
  const busy = await timed(() => sweep(e.services, { scope: { namespace: ['bench'] }, overrides: { olderThanDays: 0 } }));
  const idle = await timed(() => sweep(e.services, { scope: { namespace: ['bench'] }, overrides: { olderThanDays: 0 } }));

  const { location } = await tableWithAppends(e.services, ['big', 'f'], 1, 1);
  const client = await openClient(location);
  for (let i = 1; i < FRAGMENTS; i++) await client.add(decodeIpc(ipcRows(1, i)));
  client.close();
  const big = await timed(() => sweep(e.services, { scope: { table: ['big', 'f'] }, overrides: { olderThanDays: 0 } }));
  const item = big.value.items[0] as Record<string, number>;

  console.log(`| workload | tables | ms total | ms per table | fragments before → after | versions removed |`);
  console.log(`|---|---|---|---|---|---|`);
  const s = busy.value.summary;
  console.log(`| sweep, ${APPENDS} appends × 10 rows per table | ${TABLES} | ${busy.ms.toFixed(0)} | ${(busy.ms / TABLES).toFixed(1)} | ${s.fragments_before} → ${s.fragments_after} | ${s.versions_removed} |`);
  console.log(`| idle sweep (nothing to do) | ${TABLES} | ${idle.ms.toFixed(0)} | ${(idle.ms / TABLES).toFixed(1)} | ${idle.value.summary.fragments_before} → ${idle.value.summary.fragments_after} | ${idle.value.summary.versions_removed} |`);
  console.log(`| sweep, ${FRAGMENTS} one-row fragments | 1 | ${big.ms.toFixed(0)} | ${big.ms.toFixed(0)} (${((big.ms / FRAGMENTS) * 1000).toFixed(0)} per 1,000 fragments) | ${item.fragments_before} → ${item.fragments_after} | ${item.versions_removed} |`);
} finally {
  await e.cleanup();
}
