/**
 * What the local registry journal (lib/adapters/local/registry-journal.ts) costs on the write
 * path: the same registry writes (a create and two replaces per record) on the filesystem store,
 * with and without the journal, alternating rounds so load drifts hit both alike.
 *
 *   npx tsx bench/registry-journal.ts [--records 300] [--rounds 5] [--dir /path/on/the/disk]
 *
 * Prints the median per-write time of each arm and their ratio, and the time spent in the
 * journal's append itself per write (docs/benchmarks.md, "Registry journal").
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FsObjectStore } from '../lib/adapters/local/fs-object-store.js';
import { journaled, RegistryJournal } from '../lib/adapters/local/registry-journal.js';
import { Registry } from '../lib/registry/registry.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '300' }, rounds: { type: 'string', default: '5' }, dir: { type: 'string' } } });
const records = Number(values.records);
const rounds = Number(values.rounds);

/** Time spent inside the journal's own append (the cost it adds to each write), per call, µs. */
const appendUs: number[] = [];

async function arm(withJournal: boolean): Promise<number> {
  const dir = await mkdtemp(path.join(values.dir ?? tmpdir(), 'rask-journal-bench-'));
  try {
    const inner = new FsObjectStore(path.join(dir, 'registry'));
    const journal = withJournal ? await RegistryJournal.open(inner, { dir: path.join(dir, 'registry-journal'), retentionMs: 7 * 86_400_000 }) : undefined;
    if (journal) {
      const record = journal.record.bind(journal);
      journal.record = (...args: Parameters<typeof record>) => {
        const t0 = process.hrtime.bigint();
        record(...args);
        appendUs.push(Number(process.hrtime.bigint() - t0) / 1000);
      };
    }
    const registry = new Registry(journal ? journaled(inner, journal) : inner);
    const record = { kind: 'table', id: ['ns', 't'], uid: 'x'.repeat(32), properties: { a: 'b' }, path: 'tables/abc/t.lance', createdAt: new Date().toISOString() };
    const start = process.hrtime.bigint();
    for (let i = 0; i < records; i++) {
      const key = `p/default/t/ns/+t/t${i}`;
      let etag = await registry.create(key, record);
      etag = await registry.replace(key, { ...record, state: 'moving' }, etag);
      await registry.replace(key, { ...record, state: 'active' }, etag);
    }
    const us = Number(process.hrtime.bigint() - start) / 1000 / (records * 3);
    journal?.close();
    return us;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const off: number[] = [];
const on: number[] = [];
for (let r = 0; r < rounds; r++) {
  off.push(await arm(false));
  on.push(await arm(true));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
const append = { meanUs: Number((appendUs.reduce((a, b) => a + b, 0) / appendUs.length).toFixed(1)), p50Us: Number(quantile(appendUs, 0.5).toFixed(1)), p99Us: Number(quantile(appendUs, 0.99).toFixed(1)), maxUs: Math.round(Math.max(...appendUs)) };
console.log(JSON.stringify({ records, rounds, writesPerRound: records * 3, withoutJournalUs: Math.round(median(off)), withJournalUs: Math.round(median(on)), ratio: Number((median(on) / median(off)).toFixed(3)), append, rawOff: off.map(Math.round), rawOn: on.map(Math.round) }));
