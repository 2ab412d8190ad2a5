/**
 * Mutation check for the protocol steps issue #14 names: each mutation removes or weakens one
 * step, and some test must fail because of it, in every run. Run by hand (not part of npm test):
 *
 *   npx tsx scripts/mutations.ts                 # every mutation, each once
 *   npx tsx scripts/mutations.ts --runs 3 M1 M6a # chosen mutations, three runs each
 *   npx tsx scripts/mutations.ts --check         # only verify every mutation still applies (no tests)
 *
 * Each mutation is applied to a scratch copy of the repository (lib/, test/, spec/ and the
 * config files copied, node_modules linked), never to the working tree, and the test files it
 * names are run there. Mutations find their code by exact string, not by line number, and the
 * script stops loudly when a string is missing or ambiguous (the code moved on: update the
 * mutation, do not drop it). "caught" means the named test files failed in every run.
 */
import { spawnSync } from 'node:child_process';
import { transformSync } from 'esbuild';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Mutation {
  readonly id: string;
  readonly what: string;
  readonly file: string;
  readonly apply: (source: string) => string;
  readonly tests: readonly string[];
}

/** Replaces the one occurrence of `find`; throws when it occurs zero or several times. */
function once(find: string, replace: string): (source: string) => string {
  return (source) => {
    const first = source.indexOf(find);
    if (first < 0) throw new Error(`pattern not found: ${JSON.stringify(find)}`);
    if (source.indexOf(find, first + 1) >= 0) throw new Error(`pattern occurs more than once: ${JSON.stringify(find)}`);
    return source.slice(0, first) + replace + source.slice(first + find.length);
  };
}

/** Moves the one occurrence of `block` to just before the one occurrence of `before`. */
function moveBefore(block: string, before: string): (source: string) => string {
  return (source) => {
    const without = once(block, '')(source);
    return once(before, block + before)(without);
  };
}

const RENAME_TESTS = ['test/unit/protocol-gates.test.ts', 'test/unit/table-lifecycle.test.ts'];

const MUTATIONS: readonly Mutation[] = [
  // ---- the six the audit found uncaught or caught only by chance ----
  {
    id: 'M1',
    what: 'rename: the decisive CAS (source moving → moved) made an unconditional put',
    file: 'lib/catalog/protocols/move.ts',
    apply: once(
      'movedEtag = await services.registry.replace(tableKey(services, sourceId), moved, moving.etag);',
      'movedEtag = (await services.registry.store.put(tableKey(services, sourceId), JSON.stringify(moved))).etag;',
    ),
    tests: RENAME_TESTS,
  },
  {
    id: 'M2',
    what: 'rename: the committed source is deleted before the destination is activated',
    file: 'lib/catalog/protocols/move.ts',
    apply: moveBefore(
      '  await services.registry.remove(tableKey(services, sourceId), moved.etag).catch(ignoreLostRace);\n',
      '  const { to: dest, nonce } = moved.value.move ?? {};\n',
    ),
    tests: RENAME_TESTS,
  },
  {
    id: 'M2b',
    what: 'rename: the location claim names the destination only after the source marker is deleted',
    file: 'lib/catalog/protocols/move.ts',
    apply: (source) =>
      once(
        '  await services.registry.remove(tableKey(services, sourceId), moved.etag).catch(ignoreLostRace);\n',
        '  await services.registry.remove(tableKey(services, sourceId), moved.etag).catch(ignoreLostRace);\n  if (dest && nonce) await moveClaimId(services, moved.value, sourceId, dest, known.claim);\n',
      )(once('      moveClaimId(services, moved.value, sourceId, dest, known.claim),\n', '')(source)),
    tests: RENAME_TESTS,
  },
  {
    id: 'M3a',
    what: 'errors: code 15 (PermissionDenied) answers 400 instead of 403',
    file: 'lib/errors.ts',
    apply: once('  15: 403,', '  15: 400,'),
    tests: ['test/unit/errors.test.ts'],
  },
  {
    id: 'M3b',
    what: 'errors: code 17 (ServiceUnavailable) answers 500 instead of 503',
    file: 'lib/errors.ts',
    apply: once('  17: 503,', '  17: 500,'),
    tests: ['test/unit/errors.test.ts'],
  },
  {
    id: 'M4a',
    what: 'respond: an unexpected error is no longer logged',
    file: 'lib/http/respond.ts',
    apply: once("  logger?.error('unexpected error', { requestId, err: describe(err) });", ''),
    tests: ['test/unit/errors.test.ts'],
  },
  {
    id: 'M4b',
    what: 'respond: an InternalError (code 18) is no longer logged',
    file: 'lib/http/respond.ts',
    apply: once("if (err.code === ErrorCode.Internal) logger?.error('internal error', { requestId, err: describe(err) });", ''),
    tests: ['test/unit/errors.test.ts'],
  },
  {
    id: 'M4c',
    what: 'router: the logger is not passed to errorResponse',
    file: 'lib/http/router.ts',
    apply: once('errorResponse(err, request.requestId, options.logger, {', 'errorResponse(err, request.requestId, undefined, {'),
    tests: ['test/unit/errors.test.ts'],
  },
  {
    id: 'M5a',
    what: 'result bound: the check while streaming batches removed',
    file: 'lib/adapters/lance/query.ts',
    apply: once('    if (bytes > maxBytes) throw resultTooLarge(maxBytes);\n', ''),
    tests: ['test/data/result-bound.test.ts'],
  },
  {
    id: 'M5b',
    what: 'result bound: the check after encoding removed',
    file: 'lib/adapters/lance/engine.ts',
    apply: once('      if (bytes.length > maxBytes) throw resultTooLarge(maxBytes);\n', ''),
    tests: ['test/data/result-bound.test.ts'],
  },
  {
    id: 'M6a',
    what: 'CreateNamespace: the parent re-check after the write removed',
    file: 'lib/catalog/namespaces/create.ts',
    apply: once('    await confirmParentOrWithdraw(services, parentId, key, etag);\n', ''),
    tests: ['test/unit/namespace-races.test.ts'],
  },
  {
    id: 'M6b',
    what: 'DeclareTable: the namespace re-check after the write removed',
    file: 'lib/catalog/tables/declare.ts',
    apply: once('  await confirmParentOrWithdraw(services, namespace, key, etag, () => takeBackClaim(services, record));\n', ''),
    tests: ['test/unit/protocol-gates.test.ts'],
  },
  {
    id: 'M6c',
    what: 'RegisterTable: a claim lost to a drop of the new record reported as a concurrent registration',
    file: 'lib/catalog/tables/register.ts',
    apply: once(
      '      if (!(await withdrawOwnRecord(services, record, key, etag))) return { location, properties: { ...record.properties } };\n',
      '      await withdrawOwnRecord(services, record, key, etag);\n',
    ),
    tests: ['test/unit/protocol-gates.test.ts'],
  },
  {
    id: 'M6d',
    what: 'claims: the confirmation without a read made an unconditional put (a takeover would be overwritten)',
    file: 'lib/catalog/protocols/claims.ts',
    apply: once(
      "    await services.registry.replace<LocationClaimRecord>(key, { ...written.claim, state: 'held' }, written.etag);\n",
      "    await services.registry.store.put(key, JSON.stringify({ ...written.claim, state: 'held' }));\n",
    ),
    tests: ['test/unit/protocol-gates.test.ts'],
  },
  // ---- issue #12: the protection flag and the has-data markers ----
  {
    id: 'P1',
    what: 'protection: the table record is not flagged before the protection record is written',
    file: 'lib/catalog/protection.ts',
    apply: once(
      "    await (kind === 'table' ? flagTable(services, id, uid) : flagNamespace(services, id, uid));\n",
      "    await (kind === 'table' ? Promise.resolve() : flagNamespace(services, id, uid));\n",
    ),
    tests: ['test/unit/protection.test.ts'],
  },
  {
    id: 'D1',
    what: 'has-data markers: a committed rename does not write the marker at the destination',
    file: 'lib/catalog/protocols/move.ts',
    apply: once('      putMarkersOf(services, dest, moved.value),\n', ''),
    tests: ['test/unit/data-markers.test.ts'],
  },
  {
    id: 'D2',
    what: 'has-data markers: a first commit does not mark the table',
    file: 'lib/catalog/tables/version-create.ts',
    apply: once("  if (table.record.dataMarker === 'none') {", '  if (false) {'),
    tests: ['test/unit/data-markers.test.ts'],
  },
  // ---- RenameTable's mark and arrival in one round trip (issue #12) ----
  {
    id: 'F1',
    what: 'rename: an arrival judged stale while its source is still at the etag the mark expects, without fencing the source first',
    file: 'lib/catalog/protocols/move.ts',
    apply: once(
      '    await services.registry.replace(tableKey(services, src!), source.value, source.etag);\n',
      '',
    ),
    tests: ['test/unit/protocol-gates.test.ts'],
  },
  {
    id: 'F2',
    // The lineage stamped beside the write id lists earlier write ids, so it goes too: without it
    // the stored bytes of a record written back to an old value are its old bytes again.
    what: 'registry: writes no longer stamped with a fresh write id (a record written back to an old value brings its old etag back)',
    file: 'lib/registry/registry.ts',
    apply: once(
      'return JSON.stringify({ ...value, [WRITE_ID]: stamp.write, ...(stamp.lineage.length > 0 ? { [LINEAGE]: stamp.lineage } : {}) });',
      'return JSON.stringify(value);',
    ),
    tests: ['test/unit/protocol-gates.test.ts'],
  },
  // ---- seven that were already caught (kept so they stay caught) ----
  {
    id: 'C1',
    what: 'registry: create (put-if-absent) made a plain put',
    file: 'lib/registry/registry.ts',
    apply: once(
      'return this.settled(key, stamp, undefined, () => this.store.putIfAbsent(key, stamped(value, stamp)));',
      'return this.settled(key, stamp, undefined, () => this.store.put(key, stamped(value, stamp)));',
    ),
    tests: ['test/unit/namespace-races.test.ts'],
  },
  {
    id: 'C2',
    what: 'CreateTable: the location-claim confirmation removed (a registration that took the pending claim over would share the location)',
    file: 'lib/catalog/tables/declare.ts',
    apply: once('if (!(await persist(() => confirmClaim(services, record, claimed)))) {', 'if (!(await Promise.resolve(true))) {'),
    tests: ['test/unit/table-lifecycle.test.ts', 'test/unit/create-table.test.ts', 'test/unit/protocol-gates.test.ts'],
  },
  {
    id: 'C3',
    what: 'rename: the contended CAS (source active → moving) made an unconditional put',
    file: 'lib/catalog/protocols/move.ts',
    apply: once(
      'services.registry.replace(tableKey(services, sourceId), moving, source.etag),',
      'services.registry.store.put(tableKey(services, sourceId), JSON.stringify(moving)).then((r) => r.etag),',
    ),
    tests: ['test/unit/table-races.test.ts'],
  },
  {
    id: 'C4',
    what: 'CreateTableVersion: the copy-if-absent of the final manifest (the commit point) made an unconditional copy',
    file: 'lib/catalog/tables/version-create.ts',
    apply: once(
      'copied = await store.copyIfAbsent(stagingKey, finalKey, { sourceEtag: pinned ? input.eTag : staging!.etag });',
      'copied = { ...(await store.put(finalKey, (await store.get(stagingKey))!.body)), lastModified: new Date() };',
    ),
    tests: ['test/catalog/table-versions.test.ts'],
  },
  {
    id: 'C5',
    what: 'Restrict DropNamespace: the emptiness check removed',
    file: 'lib/catalog/namespaces/drop.ts',
    apply: once('    if (contents) {\n', '    if (contents && false) {\n'),
    tests: ['test/unit/namespace-races.test.ts'],
  },
  {
    id: 'C6',
    what: 'rename: readers answer from unsettled records (no help-on-read)',
    file: 'lib/catalog/protocols/move.ts',
    apply: once(
      '    const found = await readRaw(services, id);\n    if (!found || isLive(found.value)) return found;',
      '    const found = await readRaw(services, id);\n    return found;',
    ),
    tests: RENAME_TESTS,
  },
  {
    id: 'C7',
    what: 'location claims: put-if-absent of the claim made a plain put',
    file: 'lib/catalog/protocols/claims.ts',
    apply: once(
      '      return { claim, etag: await services.registry.create(key, claim) };',
      '      return { claim, etag: (await services.registry.store.put(key, JSON.stringify(claim))).etag };',
    ),
    tests: ['test/unit/table-races.test.ts'],
  },
  {
    id: 'H1',
    what: 'data plane: a kept table handle is not brought to the latest version at the start of a call',
    file: 'lib/adapters/lance/engine.ts',
    apply: once('        if (!opened) await shared.checkoutLatest();\n', ''),
    tests: ['test/data/table-handles.test.ts'],
  },
];

const RUN_TIMEOUT_MS = 240_000;
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const COPIED = ['lib', 'test', 'spec', 'functions', 'infra', 'bench', 'scripts', 'docs', 'events', 'package.json', 'tsconfig.json', 'vitest.config.ts', 'cdk.json'];

function scratchCopy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rask-mutations-'));
  for (const entry of COPIED) {
    try {
      cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function runTests(dir: string, files: readonly string[]): { passed: boolean; seconds: number; summary: string; failures: string } {
  const started = Date.now();
  // A mutation can turn a bounded loop into an endless one that no test timeout interrupts: a
  // run that does not finish in RUN_TIMEOUT_MS counts as failed (caught), and is marked so.
  // GNU timeout kills the whole process group (vitest and its workers), not just npx.
  const res = spawnSync('timeout', ['-s', 'KILL', String(RUN_TIMEOUT_MS / 1000), 'npx', 'vitest', 'run', ...files], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, CI: '1' },
  });
  if (res.status === 137 || res.signal === 'SIGKILL') {
    return { passed: false, seconds: (Date.now() - started) / 1000, summary: `hung: killed after ${RUN_TIMEOUT_MS / 1000} s`, failures: '' };
  }
  const out = `${res.stdout}\n${res.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
  const summary = /Tests\s+(.*)/.exec(out)?.[1]?.trim() ?? `exit ${res.status}`;
  const failures = out.split('\n').filter((l) => /^\s*FAIL\s|AssertionError|Error:/.test(l)).slice(0, 6).join('\n');
  return { passed: res.status === 0, seconds: (Date.now() - started) / 1000, summary, failures };
}

/**
 * --check: every chosen mutation's file exists, its patterns each occur exactly once, the
 * mutated source still parses, and the test files it names exist. Reports every problem (not
 * just the first) and runs no test, so it is cheap to run after code moves.
 */
function checkAll(chosen: readonly Mutation[]): boolean {
  let bad = 0;
  for (const m of chosen) {
    const problems: string[] = [];
    try {
      const source = readFileSync(path.join(ROOT, m.file), 'utf8');
      const mutated = m.apply(source);
      if (mutated === source) problems.push('the mutation leaves the source unchanged');
      // A mutant that does not even parse would be "caught" by any test that imports it.
      else transformSync(mutated, { loader: 'ts', sourcefile: m.file });
    } catch (err) {
      problems.push((err as Error).message);
    }
    for (const t of m.tests) if (!existsSync(path.join(ROOT, t))) problems.push(`test file missing: ${t}`);
    if (problems.length) bad++;
    console.log(`${m.id.padEnd(4)} ${problems.length ? 'BROKEN' : 'applies'}  ${m.file}${problems.map((p) => `\n       ${p}`).join('')}`);
  }
  console.log(`\n${chosen.length - bad}/${chosen.length} mutations apply exactly once`);
  return bad === 0;
}

function main(): void {
  const args = process.argv.slice(2);
  let runs = 1;
  const runsAt = args.indexOf('--runs');
  if (runsAt >= 0) {
    runs = Number(args[runsAt + 1]);
    args.splice(runsAt, 2);
  }
  const checkAt = args.indexOf('--check');
  const checkOnly = checkAt >= 0;
  if (checkOnly) args.splice(checkAt, 1);
  const chosen = args.length ? MUTATIONS.filter((m) => args.includes(m.id)) : MUTATIONS;
  if (chosen.length === 0) throw new Error(`no mutation matches ${args.join(' ')}`);
  const unknown = args.filter((a) => !MUTATIONS.some((m) => m.id === a));
  if (unknown.length) throw new Error(`no mutation named ${unknown.join(' ')}`);

  if (checkOnly) {
    process.exitCode = checkAll(chosen) ? 0 : 1;
    return;
  }

  // Every pattern must apply before anything runs: a stale mutation is an error, not a skip.
  for (const m of chosen) m.apply(readFileSync(path.join(ROOT, m.file), 'utf8'));

  const dir = scratchCopy();
  const rows: string[] = [];
  let uncaught = 0;
  try {
    const baseline = runTests(dir, [...new Set(chosen.flatMap((m) => m.tests))]);
    if (!baseline.passed) throw new Error(`the unmutated tests fail already (${baseline.summary}); fix them first:\n${baseline.failures}`);
    for (const m of chosen) {
      const target = path.join(dir, m.file);
      const original = readFileSync(target, 'utf8');
      writeFileSync(target, m.apply(original));
      const results: boolean[] = [];
      let seconds = 0;
      let summary = '';
      try {
        for (let r = 0; r < runs; r++) {
          const res = runTests(dir, m.tests);
          results.push(!res.passed);
          seconds += res.seconds;
          summary = res.summary;
        }
      } finally {
        writeFileSync(target, original);
      }
      const caughtRuns = results.filter(Boolean).length;
      const verdict = caughtRuns === runs ? 'caught' : caughtRuns === 0 ? 'NOT CAUGHT' : `CAUGHT ONLY ${caughtRuns}/${runs}`;
      if (caughtRuns !== runs) uncaught++;
      const row = `${m.id.padEnd(4)} ${verdict.padEnd(18)} ${(seconds / runs).toFixed(1).padStart(6)} s/run  ${m.what}  [${summary}]`;
      rows.push(row);
      console.log(row);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${chosen.length - uncaught}/${chosen.length} mutations caught in all ${runs} run(s)`);
  process.exitCode = uncaught ? 1 : 0;
}

main();
