/**
 * What a LanceDB session's entries cost beyond its byte accounting, and what a renewal costs
 * (issue #36; lib/adapters/lance/session.ts, SESSION_BYTES_PER_ITEM; docs/benchmarks.md,
 * "Renewals"). 48 tables, each under its own parent (as rask lays tables out), written in rounds:
 * every round opens each table, appends 10 rows, counts and closes it, through the process's one
 * session (64 MiB metadata budget) and rask's connection cache. Every 10 rounds: a full collection,
 * then RSS, the session's entries and bytes, renewals and retiring connections.
 *
 * Past the byte budget the entries keep rising while the bytes stay put; RSS over entries in that
 * stretch is the uncounted cost per entry. Run it once with no renewal and once with a limit to see
 * the step a renewal leaves:
 *
 *   node --expose-gc --import tsx bench/session-entries.ts [--item-limit 1000000000] [--rounds 240]
 *   node --expose-gc --import tsx bench/session-entries.ts --item-limit 8000
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectCached, retiredConnections, retiringSessions } from '../lib/adapters/lance/connections.js';
import { configureLanceSession, lanceCacheUse, uncollectedSessions } from '../lib/adapters/lance/session.js';

const { values } = parseArgs({
  options: { 'item-limit': { type: 'string', default: '1000000000' }, rounds: { type: 'string', default: '240' }, tables: { type: 'string', default: '48' }, 'no-gc': { type: 'boolean', default: false } },
});
const ITEM_LIMIT = Number(values['item-limit']);
const ROUNDS = Number(values.rounds);
const TABLES = Number(values.tables);
const METADATA = 64 << 20;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (see the header)');

configureLanceSession({ indexBytes: 192 << 20, metadataBytes: METADATA, itemLimit: ITEM_LIMIT });
const root = mkdtempSync(path.join(tmpdir(), 'rask-session-entries-'));
const rows = () => Array.from({ length: 10 }, (_, i) => ({ id: i, v: Math.random() }));
const parent = (t: number) => path.join(root, `t${t}`);

interface Sample {
  readonly round: number;
  readonly rssMiB: number;
  readonly items: number;
  readonly bytesMiB: number;
  readonly renewals: number;
  readonly retired: number;
  readonly retiring: number;
  readonly uncollected: number;
}
const samples: Sample[] = [];
try {
  for (let t = 0; t < TABLES; t++) await (await connectCached(parent(t), {})).createTable('t', rows());
  for (let round = 1; round <= ROUNDS; round++) {
    await Promise.all(
      Array.from({ length: TABLES }, async (_, t) => {
        const table = await (await connectCached(parent(t), {})).openTable('t');
        try {
          await table.add(rows());
          await table.countRows();
        } finally {
          table.close();
        }
      }),
    );
    if (round % 10 !== 0) continue;
    if (!values['no-gc']) gc();
    const use = lanceCacheUse({ fresh: true })!;
    const sample: Sample = {
      round,
      rssMiB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1),
      items: use.items,
      bytesMiB: +(use.bytes / 2 ** 20).toFixed(1),
      renewals: use.renewals,
      retired: retiredConnections(),
      retiring: retiringSessions(),
      uncollected: uncollectedSessions(),
    };
    samples.push(sample);
    console.log(JSON.stringify(sample));
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

// The stretch at the byte budget without a renewal: from the first sample at the budget to the last
// one of the same session.
const full = samples.filter((s) => s.bytesMiB >= (METADATA / 2 ** 20) * 0.98);
const first = full[0];
const last = first && [...full].reverse().find((s) => s.renewals === first.renewals && s.items > first.items);
if (first && last) {
  const perEntry = ((last.rssMiB - first.rssMiB) * 2 ** 20) / (last.items - first.items);
  console.log(
    `at the byte budget, rounds ${first.round}-${last.round}: entries ${first.items} -> ${last.items}, RSS ${first.rssMiB} -> ${last.rssMiB} MiB: ${(perEntry / 1024).toFixed(1)} KiB of RSS per entry`,
  );
}
const end = samples.at(-1);
if (end) console.log(`end: RSS ${end.rssMiB} MiB after ${end.round} rounds, ${end.renewals} renewals`);
