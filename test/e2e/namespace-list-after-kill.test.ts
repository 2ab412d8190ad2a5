// @covers ListNamespaces, DescribeNamespace, DropNamespace
/**
 * Issue 26 item 3, as it was found: a namespace holding a child namespace and a table with rows
 * (written by the official client), DropNamespace Cascade, and the server process SIGKILLed
 * right after its 1st, 2nd, … registry write until the drop is answered (test/crash/kill-switch-server.ts:
 * deterministic, no timing). After the restart on the same data directory, the parent's
 * ListNamespaces must name exactly the namespaces DescribeNamespace answers 200 for (it named the
 * dying one, which answered 404, before the drop marks of lib/catalog/namespaces/drop-marks.ts),
 * and every table ListAllTables names must describe. Each kill costs two server starts (about 12 s
 * on a busy machine), so `npm test` kills at the first six writes and `npm run soak` (RASK_SOAK=1)
 * at every one; test/unit/namespace-listing-after-crash.test.ts kills at every one in-process.
 */
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { describe, expect, it } from 'vitest';
import { callUnlessKilled, killSwitchServers } from '../crash/spawn-server.js';

const { dirs, start, stop } = killSwitchServers();

const call = callUnlessKilled;

describe('ListNamespaces after a kill during a cascade drop (real server, official client)', () => {
  it('names exactly what DescribeNamespace answers 200 for, after a kill at each registry write of the drop', { timeout: 600_000 }, async () => {
    const template = await mkdtemp(path.join(tmpdir(), 'rask-nslist-'));
    dirs.push(template);
    const builder = await start(template);
    const db = await lancedb.connectNamespace('rest', { uri: builder.url });
    for (const ns of [['p'], ['p', 'n'], ['p', 'n', 'c'], ['p', 's']]) await db.createNamespace(ns);
    await db.createTable('t', [{ id: 1, vector: [1, 2] }, { id: 2, vector: [3, 4] }], ['p', 'n']);
    await stop(builder);

    let answered = false;
    let k = 1;
    const last = process.env.RASK_SOAK === '1' ? 60 : 6;
    for (; !answered && k <= last; k++) {
      const dir = await mkdtemp(path.join(tmpdir(), 'rask-nslist-'));
      dirs.push(dir);
      await cp(template, dir, { recursive: true });
      const dying = await start(dir, `^p/:${k}`);
      const dropped = await call(dying.url, 'POST', '/v1/namespace/p%24n/drop', { behavior: 'Cascade' });
      await stop(dying);
      // Answered: the drop made fewer than k writes (the kill came after it, or never).
      answered = dropped !== undefined;
      if (answered) expect(dropped!.status, JSON.stringify(dropped!.json)).toBe(200);

      const server = await start(dir);
      // Listed first: a describe settles the drop and would hide the disagreement.
      const [listed, all] = [(await call(server.url, 'GET', '/v1/namespace/p/list'))!, (await call(server.url, 'GET', '/v1/table'))!];
      expect(listed.status).toBe(200);
      expect(all.status).toBe(200);
      for (const t of all.json.tables as string[]) {
        const d = (await call(server.url, 'POST', `/v1/table/${encodeURIComponent(t)}/describe`, {}))!;
        expect(d.status, `${t}, listed by ListAllTables after a kill at registry write #${k}`).toBe(200);
      }
      const describable: string[] = [];
      for (const name of ['n', 's']) {
        const d = (await call(server.url, 'POST', `/v1/namespace/p%24${name}/describe`, {}))!;
        if (d.status === 200) describable.push(name);
      }
      expect(listed.json.namespaces, `after a kill at registry write #${k}`).toEqual(describable);
      await stop(server);
    }
    expect(k - 1, 'the drop makes more than six registry writes').toBeGreaterThanOrEqual(6);
    expect(answered, last > 6 ? 'the drop ran to its end within 60 writes' : 'the first six kills all came before the drop ended').toBe(last > 6);
  });
});
