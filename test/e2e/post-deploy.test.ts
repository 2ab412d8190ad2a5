import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const run = promisify(execFile);
const SCRIPT = path.resolve('scripts/post-deploy.ts');
const TSX = path.resolve('node_modules/.bin/tsx');

/** The first-deploy check (scripts/post-deploy.ts) through the same client code path, against the local server. */
describe('post-deploy check script', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it('passes every step against a healthy catalog and leaves nothing behind', async () => {
    const { stdout } = await run(TSX, [SCRIPT, '--endpoint', server.url], { timeout: 120_000 });
    expect(stdout).toMatch(/^6 checks passed$/m);
    expect(stdout).not.toMatch(/^FAIL/m);
    for (const step of ['create a namespace', 'create a table with 10 rows', 'append 5 rows', 'vector search', 'list and describe', 'drop the table']) {
      expect(stdout).toMatch(new RegExp(`^ok   ${step}`, 'm'));
    }
    const listed = await server.request('GET', '/v1/namespace/%24/list');
    expect(listed.json().namespaces).toEqual([]);
  });

  it('fails with a non-zero exit and says what a failure means when the catalog is unreachable', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const failure = await run(TSX, [SCRIPT, '--endpoint', `http://127.0.0.1:${closed}`], { timeout: 120_000 }).then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(6);
    expect(failure?.stdout).toMatch(/^FAIL create a namespace/m);
    expect(failure?.stdout).toMatch(/what it likely means: the API, the authorizer or the metadata function is not reachable/);
  });
});
