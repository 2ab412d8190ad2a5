/**
 * The local registry's history (lib/adapters/local/registry-journal.ts): every write of the
 * journaled store is in it with its issue time, the baseline holds what was there before, a
 * segment older than the retention is folded into the baseline (whose time moves up, so older
 * instants are refused) without changing any state inside the retention, and a torn last line
 * (a process killed mid-append) is skipped.
 */
import { appendFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { journaled, RegistryJournal } from '../../lib/adapters/local/registry-journal.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import type { KeyVersion } from '../../lib/ports/registry-history.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function all(journal: RegistryJournal, prefix = ''): Promise<KeyVersion[][]> {
  const out: KeyVersion[][] = [];
  for await (const v of journal.versions(prefix)) out.push([...v]);
  return out;
}

/** The content of every key at `t` per the journal. */
async function stateAt(journal: RegistryJournal, t: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const versions of await all(journal)) {
    const v = versions.find((x) => x.time.getTime() <= t);
    if (v && !v.deleted) out[v.key] = (await journal.body(v)).toString();
  }
  return out;
}

describe.each(['memory', 'fs'] as const)('registry journal (%s)', (kind) => {
  it('baseline, every write with its time, newest first; retention folds old segments and keeps the state', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-journal-'));
    let now = 1_000_000_000_000;
    const clock = () => now;
    const inner = kind === 'fs' ? new FsObjectStore(path.join(dir, 'registry')) : new MemoryObjectStore();
    await inner.putIfAbsent('before', 'b0');
    const options = { ...(kind === 'fs' ? { dir: path.join(dir, 'journal') } : {}), retentionMs: 10 * 3_600_000, rollMs: 3_600_000, now: clock };
    const journal = await RegistryJournal.open(inner, options);
    const store = journaled(inner, journal, clock);
    expect((await journal.retainedFrom()).getTime()).toBe(now);
    const times: number[] = [];
    // One write an hour for 20 hours: 20 segments of an hour each.
    let etag = (await store.putIfAbsent('k', 'v0')).etag;
    times.push(now);
    for (let i = 1; i < 20; i++) {
      now += 3_600_000;
      etag = (await store.putIfMatch('k', `v${i}`, etag)).etag;
      times.push(now);
    }
    // Mid-run state, before anything is folded: every write is there, newest first.
    journal.compact();
    const model = (t: number) => {
      const i = times.filter((x) => x <= t).length - 1;
      return i < 0 ? { before: 'b0' } : { before: 'b0', k: `v${i}` };
    };
    const versions = await all(journal);
    expect(versions.map((v) => v[0]!.key)).toEqual(['before', 'k']);
    const k = versions[1]!;
    expect(k[0]!.current).toBe(true);
    expect((await journal.body(k[0]!)).toString()).toBe('v19');
    // Versions are newest first and every one inside the retention is there.
    const kept = k.map((v) => v.time.getTime());
    expect(kept).toEqual([...kept].sort((a, b) => b - a));
    for (const t of times.filter((x) => x >= now - options.retentionMs)) expect(kept).toContain(t);
    // The retention folded old segments: the history begins later than the first write, no later than the retention allows.
    const from = (await journal.retainedFrom()).getTime();
    expect(from).toBeGreaterThan(times[0]!);
    expect(from).toBeLessThanOrEqual(now - options.retentionMs);
    if (kind === 'fs') expect(readdirSync(options.dir!).filter((n) => n.startsWith('segment-')).length).toBeLessThan(20);
    // Every instant the history still covers reads as the model says.
    for (const t of times.filter((x) => x >= from)) expect(await stateAt(journal, t), `at ${t}`).toEqual(model(t));
    await store.delete('before');
    now += 1;
    const latest = await all(journal);
    expect(latest[0]![0]).toMatchObject({ deleted: true, current: true });
    expect(await stateAt(journal, now)).toEqual({ k: 'v19' });
    journal.close();
  });

  it.runIf(kind === 'fs')('skips a torn last line (a process killed mid-append)', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-journal-'));
    const inner = new FsObjectStore(path.join(dir, 'registry'));
    const options = { dir: path.join(dir, 'journal'), retentionMs: 86_400_000 };
    const journal = await RegistryJournal.open(inner, options);
    const store = journaled(inner, journal);
    await store.putIfAbsent('a', '1');
    const segment = readdirSync(options.dir).find((n) => n.startsWith('segment-'))!;
    appendFileSync(path.join(options.dir, segment), '{"t":1,"k":"b","b":"tor');
    journal.close();
    const reopened = await RegistryJournal.open(inner, options);
    expect((await all(reopened)).map((v) => v[0]!.key)).toEqual(['a']);
    reopened.close();
  });
});
