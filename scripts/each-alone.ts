/**
 * Runs every test on its own, to prove no test depends on another having run first (issue 14:
 * "every test file passes with its tests shuffled and each `it` alone"). By hand, not part of
 * npm test:
 *
 *   npx tsx scripts/each-alone.ts test/e2e/tables-client.test.ts test/data/engine.test.ts
 *   npx tsx scripts/each-alone.ts test/e2e test/unit          # every test file under these folders
 *   npx tsx scripts/each-alone.ts --all                       # every file npm test runs (not test/deploy)
 *   npx tsx scripts/each-alone.ts --all --shard 2/3           # the second of three parts, to run in pieces
 *   npx tsx scripts/each-alone.ts test/unit --parallel 1      # one file at a time (default 2 side by side)
 *
 * One Vitest instance (the repository's vitest.config.ts) collects each file's tests, then runs
 * the file once per test with only that test selected by its id (`TestCase.toTestSpecification()`):
 * a fresh worker each time (forks pool, isolated), so module state, `beforeAll` and the data
 * directory are the test's own — but no new Vitest, Vite server or transform per test, which is
 * what made `vitest run file -t title` per test too slow for ~1,100 tests. Tests made by
 * `it.each` or a loop are run one by one too. A shard is a set of whole files (round-robin over
 * the sorted list), so the parts together cover every file exactly once. `--parallel N` runs N
 * files side by side (one test of each per round, each in its own worker; never two tests of one
 * file at once). On a shared 2-CPU machine the whole suite (1,094 tests) took about 45 minutes;
 * timings per folder are in docs/testing.md.
 *
 * The companion check, every file with its tests shuffled, is plain Vitest:
 *
 *   npx vitest run test/e2e --sequence.shuffle --sequence.seed=777
 *
 * Prints one line per test (`ok`/`FAIL`), then `N/N tests pass alone` and the files it ran;
 * exits 1 if any test failed alone, was not run, or a file could not be collected.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { TestCase, TestModule } from 'vitest/node';
import { createVitest } from 'vitest/node';

const repo = path.resolve(import.meta.dirname, '..');

interface Options {
  targets: string[];
  shard?: { index: number; count: number };
  /** Files run side by side, one worker each. */
  parallel: number;
}

function parseArgs(argv: string[]): Options {
  const targets: string[] = [];
  let shard: Options['shard'];
  let parallel = 2;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--all') targets.push('test');
    else if (a === '--shard' || a.startsWith('--shard=')) {
      const value = a === '--shard' ? argv[++i] : a.slice('--shard='.length);
      const m = /^(\d+)\/(\d+)$/.exec(value ?? '');
      if (!m || +m[1] < 1 || +m[1] > +m[2]) throw new Error(`--shard wants i/n with 1 <= i <= n, got ${value}`);
      shard = { index: +m[1], count: +m[2] };
    } else if (a === '--parallel' || a.startsWith('--parallel=')) {
      const value = a === '--parallel' ? argv[++i] : a.slice('--parallel='.length);
      parallel = Number(value);
      if (!Number.isInteger(parallel) || parallel < 1) throw new Error(`--parallel wants a whole number >= 1, got ${value}`);
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else targets.push(a);
  }
  if (targets.length === 0) throw new Error('name test files or folders, or --all');
  return { targets, shard, parallel };
}

/** Test files under the targets, sorted; test/deploy needs a fresh synth and its own config. */
function testFiles(targets: string[]): string[] {
  const found = new Set<string>();
  const walk = (p: string) => {
    if (statSync(p).isDirectory()) {
      for (const e of readdirSync(p)) walk(path.join(p, e));
    } else if (p.endsWith('.test.ts')) found.add(path.relative(repo, p));
  };
  for (const t of targets) walk(path.resolve(repo, t));
  return [...found].filter((f) => !f.startsWith(`test${path.sep}deploy${path.sep}`)).sort();
}

/** Every test case of a module, depth first, in definition order. */
function casesOf(module: TestModule): TestCase[] {
  return [...module.children.allTests()];
}

interface Slot {
  file: string;
  moduleId: string;
  cases: TestCase[];
  next: number;
  failed: number;
  started: number;
}

async function main() {
  const { targets, shard, parallel } = parseArgs(process.argv.slice(2));
  let files = testFiles(targets);
  if (shard) files = files.filter((_, i) => i % shard.count === shard.index - 1);
  if (files.length === 0) throw new Error(`no test files under ${targets.join(' ')}`);

  // No reporter: the per-test lines below are the report; watch off so the runs end. One worker
  // per file in flight (Vitest's default on a 2-CPU machine would be one in all).
  const vitest = await createVitest('test', { watch: false, reporters: [{}], silent: true, maxWorkers: parallel });
  await vitest.standalone();
  const project = vitest.getRootProject();
  let ran = 0;
  const failures: string[] = [];
  const broken: string[] = [];
  const done: string[] = [];
  const queue = [...files];
  const started = Date.now();

  /** The next file's tests, collected (imported, not run); undefined when none are left. */
  async function open(): Promise<Slot | undefined> {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const moduleId = path.resolve(repo, file);
      // The results hold every module seen so far: pick this file's.
      const collected = await vitest.collectTests([project.createSpecification(moduleId)]);
      const module = collected.testModules.find((m) => m.moduleId === moduleId);
      const all = module ? casesOf(module) : [];
      const cases = all.filter((c) => c.options.mode === 'run');
      // Said, not dropped: a test the file itself skips (skip, todo, skipIf) is not checked here.
      if (cases.length < all.length) console.log(`note ${file}: ${all.length - cases.length} test(s) skipped by the file itself, not run`);
      if (module && module.errors().length === 0 && cases.length > 0) return { file, moduleId, cases, next: 0, failed: 0, started: Date.now() };
      broken.push(file);
      console.log(`FAIL ${file}: could not collect its tests ${JSON.stringify(module?.errors().map((e) => e.message) ?? [])}`);
    }
    return undefined;
  }

  try {
    const slots: Slot[] = [];
    for (;;) {
      while (slots.length < parallel) {
        const slot = await open();
        if (!slot) break;
        slots.push(slot);
      }
      if (slots.length === 0) break;
      // One test from each open file, side by side: each in its own worker, never two of one file.
      const batch = slots.map((slot) => ({ slot, wanted: slot.cases[slot.next++] }));
      const result = await vitest.runTestSpecifications(batch.map((b) => b.wanted.toTestSpecification()));
      // An unhandled error cannot be traced to one file: it counts against every test of the batch.
      const unhandled = result.unhandledErrors.map((e) => `unhandled: ${(e as Error)?.message ?? String(e)}`);
      for (const { slot, wanted } of batch) {
        ran++;
        const after = result.testModules.find((m) => m.moduleId === slot.moduleId);
        const all = after ? casesOf(after) : [];
        const mine = all.find((c) => c.id === wanted.id);
        const others = all.filter((c) => c.id !== wanted.id && c.result().state !== 'skipped');
        const state = mine?.result().state ?? 'not run';
        const problems = [
          ...(state === 'passed' ? [] : [`state ${state}`]),
          ...(others.length ? [`${others.length} other test(s) ran`] : []),
          ...(after?.errors() ?? []).map((e) => e.message),
          ...unhandled,
          ...(mine?.result().errors ?? []).map((e) => e.message.split('\n')[0]),
        ];
        const ok = problems.length === 0;
        if (!ok) {
          slot.failed++;
          failures.push(`${slot.file} :: ${wanted.fullName}`);
        }
        console.log(`${ok ? 'ok  ' : 'FAIL'} ${slot.file} :: ${wanted.fullName}${ok ? '' : `  [${problems.join('; ')}]`}`);
      }
      for (const slot of [...slots]) {
        if (slot.next < slot.cases.length) continue;
        const line = `${slot.file}: ${slot.cases.length - slot.failed}/${slot.cases.length} alone in ${((Date.now() - slot.started) / 1000).toFixed(1)} s`;
        console.log(`  ${line}`);
        done.push(line);
        slots.splice(slots.indexOf(slot), 1);
      }
    }
  } finally {
    await vitest.close();
  }
  console.log(`\n${ran - failures.length}/${ran} tests pass alone, ${files.length} files${shard ? ` (shard ${shard.index}/${shard.count})` : ''}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const line of done) console.log(`  ${line}`);
  for (const f of failures) console.log(`  failed alone: ${f}`);
  for (const f of broken) console.log(`  not collected: ${f}`);
  process.exitCode = failures.length || broken.length ? 1 : 0;
}

await main();
