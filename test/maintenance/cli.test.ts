import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../../lib/app/local.js';
import { loadLocalConfig } from '../../lib/config.js';
import { datasetState } from '../../lib/adapters/lance/maintenance.js';
import { Writable } from 'node:stream';
import { humanLines, tableProgress, terminalProgress } from '../../functions/cli.js';
import type { PassReport } from '../../lib/maintenance/pass.js';
import { decodeIpc } from '../../lib/data/arrow.js';
import { ipcRows } from '../data/fixtures.js';
import { diskAgainstManifests, openClient, tableWithAppends } from './fixtures.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin/rask.mjs');

/** Runs `rask` as a child process (stdout is a pipe, so the default output is JSON). */
function rask(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('rask CLI (child process, temp data dir)', () => {
  let dir: string;
  let env: Record<string, string>;
  let location: string; // a.b.t: the sweep test compacts it
  let dryLocation: string; // d.e.t: the dry-run test's own table, never swept
  let taggedLocation: string; // r.t: appends, a deletion, an index and a tag; the bytes test sweeps it
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rask-cli-'));
    env = { RASK_DATA_DIR: dir };
    const { services } = await createLocalApp(loadLocalConfig(env));
    ({ location } = await tableWithAppends(services, ['a', 'b', 't'], 8));
    ({ location: dryLocation } = await tableWithAppends(services, ['d', 'e', 't'], 8));
    await tableWithAppends(services, ['c', 'u'], 3);
    ({ location: taggedLocation } = await tableWithAppends(services, ['r', 't'], 6));
    const t = await openClient(taggedLocation);
    await t.delete('id < 5');
    await t.createIndex('id');
    await (await t.tags()).create('keep', 3);
    for (let w = 0; w < 4; w++) await t.add(decodeIpc(ipcRows(10, 1000 + w * 10)));
    t.close();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const reports = async () => {
    const d = path.join(dir, 'registry', 'reports');
    return existsSync(d) ? (await readdir(d, { recursive: true })).filter((f) => String(f).endsWith('.json')) : [];
  };

  // Reports other tests wrote stay; each test checks what it added.
  it('refuses bad usage with status 2 and writes nothing', async () => {
    const before = await reports();
    const cases = [['maintenance', 'nope'], ['maintenance', 'sweep', '--older-than-days', '-1', '--bogus']];
    const results = await Promise.all(cases.map((args) => rask(args, env)));
    results.forEach((r, i) => {
      expect(r.code, cases[i].join(' ')).toBe(2);
      expect(r.stderr).toMatch(/usage: rask maintenance/);
    });
    expect(await reports()).toEqual(before);
  });

  it('--dry-run reports what it would do and changes nothing', async () => {
    const before = await reports();
    const r = await rask(['maintenance', 'sweep', '--namespace', 'd.e', '--dry-run', '--older-than-days', '0'], env);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.items.map((i: { table: string[] }) => i.table)).toEqual([['d', 'e', 't']]);
    expect(report.items[0].steps.compact).toMatchObject({ status: 'would-run', fragments: 8 });
    // A dry run sweeps nothing: its summary says what a real run would sweep.
    expect(report.summary).toMatchObject({ tables_visited: 1, tables_swept: 0, tables_would_sweep: 1, fragments_would_compact: 8 });
    expect(report.summary.versions_would_remove).toBeGreaterThan(0);
    // Nothing it did not do: no after-figures, no removals.
    expect(Object.keys(report.summary).filter((k) => /_after$|_removed$/.test(k))).toEqual([]);
    expect(humanLines(report, { dryRun: true }).at(-1)).toMatch(/^sweep \(dry run, nothing was changed\): tables_visited=1 tables_swept=0 tables_would_sweep=1 /);
    expect((await datasetState(dryLocation)).fragments).toBe(8);
    expect(await reports()).toEqual(before);
  });

  it('sweeps one table with a one-run override and prints the JSON report', async () => {
    const before = await reports();
    const r = await rask(['maintenance', 'sweep', '--table', 'a.b.t', '--older-than-days', '0', '--json'], env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ pass: 'sweep', complete: true, summary: { tables_visited: 1, fragments_before: 8 } });
    expect(report.items[0].overrides).toEqual({ older_than_days: 0 });
    const after = await datasetState(location);
    expect(after.fragments).toBe(1);
    expect(after.rows).toBe(80);
    expect(after.versions).toHaveLength(1);
    expect((await reports()).filter((f) => !before.includes(f))).toHaveLength(1);
  });

  it('--older-than-days 0 leaves on disk exactly what the kept versions and the tag reference, and reports the bytes', async () => {
    const before = await diskAgainstManifests(taggedLocation);
    const r = await rask(['maintenance', 'sweep', '--table', 'r.t', '--older-than-days', '0', '--json'], env);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const item = JSON.parse(r.stdout).items[0];
    const after = await diskAgainstManifests(taggedLocation);
    // Every file is a kept manifest, the version hint, the tag, or named by a kept version;
    // nothing a kept version names is missing.
    expect([...after.onDisk.keys()].sort()).toEqual([...after.kept].sort());
    expect(after.missing).toEqual([]);
    const sum = (m: Map<string, number>, keys: Iterable<string>) => [...keys].reduce((n, k) => n + (m.get(k) ?? 0), 0);
    expect(sum(after.onDisk, after.onDisk.keys())).toBe(sum(after.onDisk, after.kept));
    // The tag's version, its files included, is still readable: 60 rows written, 5 deleted.
    const versions = (await datasetState(taggedLocation)).versions.map((v) => v.version);
    expect(versions[0]).toBe(3);
    expect(versions).toHaveLength(2);
    const t = await openClient(taggedLocation);
    await t.checkout('keep');
    expect(await t.countRows()).toBe(30);
    await t.checkoutLatest();
    expect(await t.countRows()).toBe(95);
    t.close();
    // The bytes reported reclaimed cover at least every file of before that is gone.
    const gone = [...before.onDisk.keys()].filter((k) => !after.onDisk.has(k));
    expect(gone.some((k) => k.startsWith('_transactions/'))).toBe(true);
    expect(item.bytes_removed).toBeGreaterThanOrEqual(sum(before.onDisk, gone));
    expect(item.steps.cleanup.bytes_removed).toBe(item.bytes_removed);
  });

  it('a --table or --namespace that does not exist is an error (status 1, named), not an empty success', async () => {
    for (const args of [['--table', 'nope.nope'], ['--namespace', 'nope'], ['--table', 'a.b.missing']]) {
      const r = await rask(['maintenance', 'sweep', ...args, '--dry-run'], env);
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report.problems).toEqual([expect.stringMatching(new RegExp(`${args[0].slice(2)} "${args[1].replace(/\./g, '\\.')}" does not exist`))]);
    }
    // An existing namespace with nothing in scope is fine.
    expect((await rask(['maintenance', 'sweep', '--namespace', 'a', '--dry-run'], env)).code).toBe(0);
  });

  it('answers a pass this build does not include with a clear "not available"', async () => {
    const here = existsSync(path.join(root, 'lib/maintenance/orphans.ts'));
    const r = await rask(['maintenance', 'orphans', '--dry-run'], env);
    if (here) {
      expect(JSON.parse(r.stdout).pass).toBe('orphans');
    } else {
      expect(r.code).toBe(3);
      expect(JSON.parse(r.stdout)).toEqual({ pass: 'orphans', available: false, error: 'the orphans pass is not available in this build' });
    }
  });
});

describe('rask CLI on a terminal', () => {
  const report = {
    pass: 'sweep',
    complete: true,
    summary: { tables_visited: 1, tables_swept: 1 },
    problems: [],
    items: [
      {
        project: 'default',
        table: ['a', 't'],
        steps: {
          compact: { status: 'done', fragments_removed: 21, fragments_added: 1, target_rows_per_fragment: 1048576 },
          optimize_indices: { status: 'nothing-to-do', indices: 0 },
          cleanup: { status: 'done', versions_removed: 22, bytes_removed: 29581, protected_tags: [] },
        },
      },
      { project: 'default', table: ['a', 'u'], skipped: 'declared', reason: 'no dataset yet' },
    ],
  } as unknown as PassReport;

  it('prints one human line per table, no JSON', () => {
    const lines = humanLines(report);
    expect(lines.filter((l) => /[{}[\]"]/.test(l))).toEqual([]);
    expect(lines[0]).toBe('default.a.t: compact done (fragments_removed=21 fragments_added=1 target_rows_per_fragment=1048576); optimize_indices nothing-to-do (indices=0); cleanup done (versions_removed=22 bytes_removed=29581)');
    expect(lines[1]).toBe('default.a.u: skipped (declared): no dataset yet');
    expect(lines[2]).toBe('sweep: tables_visited=1 tables_swept=1');
  });

  it('the progress bar ends at 100 % and counts tables in words', () => {
    const calls: [string, ...unknown[]][] = [];
    const bar = {
      start: (total: number, value: number, payload?: object) => void calls.push(['start', total, value, payload]),
      update: (value: number, payload?: object) => void calls.push(['update', value, payload]),
      setTotal: (total: number) => void calls.push(['setTotal', total]),
      stop: () => void calls.push(['stop']),
    };
    const progress = tableProgress(bar);
    for (const done of [1, 2, 3]) progress.onProgress({ done, unit: `t${done}` });
    progress.finish();
    const last = calls.filter((c) => c[0] === 'setTotal').at(-1);
    const value = calls.filter((c) => c[0] === 'update').at(-1);
    expect(last).toEqual(['setTotal', 3]);
    expect(value).toEqual(['update', 3, { unit: '', noun: 'tables' }]);
    expect(calls.at(-1)).toEqual(['stop']);
    expect(calls.find((c) => c[0] === 'update' && c[1] === 1)).toEqual(['update', 1, { unit: 't1', noun: 'table' }]);
  });

  it('the real bar on a terminal: its last frame says 100 % and "3 tables", and the cursor comes back', async () => {
    let text = '';
    const tty = Object.assign(new Writable({ write: (chunk, _enc, done) => void ((text += String(chunk)), done()) }), { isTTY: true, columns: 120 });
    const progress = await terminalProgress('sweep', tty);
    progress.onProgress({ done: 1, unit: 'a.t' });
    progress.onProgress({ done: 2, unit: 'a.u' });
    progress.onProgress({ done: 3, unit: 'b.v' });
    progress.finish();
    // Frames are separated by the bar's return to column 1 (ESC [ 1 G); escapes stripped.
    const frames = text.split('\x1b[1G').map((f) => f.replace(/\x1b(\[[0-9?;]*[A-Za-z]|[78])/g, '').trim()).filter(Boolean);
    expect(frames.at(-1)).toMatch(/^sweep \S+ 100% \| 3 tables \|$/);
    expect(frames.filter((f) => / 1 tables/.test(f))).toEqual([]);
    expect(text.lastIndexOf('\x1b[?25h')).toBeGreaterThan(text.lastIndexOf('\x1b[?25l'));
  });
});
