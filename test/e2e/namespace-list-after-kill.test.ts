// @covers ListNamespaces, DescribeNamespace, DropNamespace
/**
 * Issue 26 item 3, as it was found: a namespace holding a child namespace and a table with rows
 * (written by the official client), DropNamespace Cascade, and the server process SIGKILLed
 * right after its 1st…6th registry write (test/crash/kill-switch-server.ts: deterministic, no
 * timing). After the restart on the same data directory, the parent's ListNamespaces must name
 * exactly the namespaces DescribeNamespace answers 200 for (it named the dying one, which
 * answered 404, before the drop marks of lib/catalog/namespaces/drop-marks.ts).
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, describe, expect, it } from 'vitest';
import { callUnlessKilled, spawnServer, type SpawnedServer } from '../crash/spawn-server.js';

const dirs: string[] = [];
const children: SpawnedServer[] = [];
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function start(dataDir: string, killAfter?: string): Promise<SpawnedServer> {
  const env: Record<string, string | undefined> = { ...process.env, RASK_DATA_DIR: dataDir, RASK_LOG_LEVEL: 'silent' };
  if (killAfter) env.RASK_TEST_KILL_AFTER = killAfter;
  else delete env.RASK_TEST_KILL_AFTER;
  const child = await spawnServer(path.join(import.meta.dirname, '../crash/kill-switch-server.ts'), env);
  children.push(child);
  return child;
}

async function stop(child: SpawnedServer): Promise<void> {
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
  await child.exited;
}

const call = callUnlessKilled;

describe('ListNamespaces after a kill during a cascade drop (real server, official client)', () => {
  it('names exactly what DescribeNamespace answers 200 for, after a kill at each of the first six registry writes', { timeout: 120_000 }, async () => {
    const template = await mkdtemp(path.join(tmpdir(), 'rask-nslist-'));
    dirs.push(template);
    const builder = await start(template);
    const db = await lancedb.connectNamespace('rest', { uri: builder.url });
    for (const ns of [['p'], ['p', 'n'], ['p', 'n', 'c'], ['p', 's']]) await db.createNamespace(ns);
    await db.createTable('t', [{ id: 1, vector: [1, 2] }, { id: 2, vector: [3, 4] }], ['p', 'n']);
    await stop(builder);

    for (let k = 1; k <= 6; k++) {
      const dir = await mkdtemp(path.join(tmpdir(), 'rask-nslist-'));
      dirs.push(dir);
      await cp(template, dir, { recursive: true });
      const dying = await start(dir, `^p/:${k}`);
      const dropped = await call(dying.url, 'POST', '/v1/namespace/p%24n/drop', { behavior: 'Cascade' });
      await stop(dying);
      expect(dropped, `the server answered the drop despite the kill after write #${k}`).toBeUndefined();

      const server = await start(dir);
      // Listed first: a describe settles the drop and would hide the disagreement.
      const listed = (await call(server.url, 'GET', '/v1/namespace/p/list'))!;
      expect(listed.status).toBe(200);
      const describable: string[] = [];
      for (const name of ['n', 's']) {
        const d = (await call(server.url, 'POST', `/v1/namespace/p%24${name}/describe`, {}))!;
        if (d.status === 200) describable.push(name);
      }
      expect(listed.json.namespaces, `after a kill at registry write #${k}`).toEqual(describable);
      await stop(server);
    }
  });
});
