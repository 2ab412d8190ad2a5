/**
 * Runs every test of the given files on its own (`vitest run <file> -t <its title>`), to prove
 * no test depends on another having run first. By hand, not part of npm test:
 *
 *   npx tsx scripts/each-alone.ts test/e2e/tables-client.test.ts test/data/engine.test.ts
 *
 * A title shared by several tests (describe.each) runs those together; they share nothing.
 */
import { spawnSync } from 'node:child_process';

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('name the test files to check');
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let failed = 0;
let ran = 0;
for (const file of files) {
  const listed = spawnSync('npx', ['vitest', 'list', file, '--json'], { encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`could not list ${file}: ${listed.stderr}`);
  const titles = [...new Set((JSON.parse(listed.stdout) as { name: string }[]).map((t) => t.name.split(' > ').at(-1)!))];
  for (const title of titles) {
    ran++;
    const res = spawnSync('npx', ['vitest', 'run', file, '-t', `${escape(title)}$`], { encoding: 'utf8' });
    const out = `${res.stdout}${res.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    const summary = /Tests\s+(.*)/.exec(out)?.[1]?.trim() ?? `exit ${res.status}`;
    const ok = res.status === 0 && !/\bskipped\b.*\(0\)|no tests/i.test(summary) && /passed/.test(summary);
    if (!ok) failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${file} :: ${title}  [${summary}]`);
  }
}
console.log(`\n${ran - failed}/${ran} tests pass alone`);
process.exitCode = failed ? 1 : 0;
