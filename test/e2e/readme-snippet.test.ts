/**
 * The README's client snippets, exactly as written, run as standalone ES modules in a fresh
 * directory outside the source tree against the real local server — twice each, because the
 * README promises they can be re-run. A README edit that breaks them fails here.
 * The fresh directory gets LanceDB through a symlinked node_modules (what `npm install
 * @lancedb/lancedb` would give it), so the test does not need the network.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const repo = path.resolve(import.meta.dirname, '../..');

/** `<!-- readme-snippet: name -->` followed by a fenced js block. */
function snippets(): Map<string, string> {
  const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
  const found = new Map<string, string>();
  for (const m of readme.matchAll(/<!-- readme-snippet: (\S+) -->\s*```js\n([\s\S]*?)```/g)) found.set(m[1], m[2]);
  return found;
}

function runNode(file: string, cwd: string, url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env: { PATH: process.env.PATH, RASK_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('README client snippets', () => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer();
    dir = await mkdtemp(path.join(tmpdir(), 'rask-demo-'));
    await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the README has both snippets', () => {
    expect([...snippets().keys()]).toEqual(['demo.mjs', 'delimiter.mjs']);
  });

  it.each([
    ['demo.mjs', /^rows: 1$/m],
    ['delimiter.mjs', /^tables: \[ 'eur\$rates' \]$/m],
  ])('%s runs as-is outside the repository, twice', async (name, expected) => {
    const code = snippets().get(name);
    expect(code).toBeDefined();
    expect(dir.startsWith(repo)).toBe(false);
    await writeFile(path.join(dir, name), code!);
    for (const run of [1, 2]) {
      const out = await runNode(name, dir, server.url);
      expect({ run, code: out.code, stderr: out.stderr }).toEqual({ run, code: 0, stderr: '' });
      expect(out.stdout).toMatch(expected);
    }
  });

  it('the delimiter snippet really kept `$` inside the names', async () => {
    // Runs the snippet itself (it is idempotent: exist_ok) so this test does not lean on the one above.
    await writeFile(path.join(dir, 'delimiter.mjs'), snippets().get('delimiter.mjs')!);
    const out = await runNode('delimiter.mjs', dir, server.url);
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    const res = await server.request('GET', '/v1/namespace/%3A%3A/list?delimiter=%3A%3A');
    expect(res.json().namespaces).toContain('prices$usd');
  });
});
