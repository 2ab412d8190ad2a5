/**
 * A small real world for the fuzz suites: the local composition (file registry, file warehouse,
 * LanceDB) in a throw-away data directory, driven in-process through the router (the same code
 * path as HTTP, minus the socket), with a few namespaces and tables holding rows, tags, a branch
 * and indices.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { createLocalApp } from '../../lib/app/local.js';
import { loadLocalConfig } from '../../lib/config.js';
import type { ErrorLogger } from '../../lib/http/respond.js';
import type { HttpResponse } from '../../lib/contract/http.js';
import { ipcRows } from '../data/fixtures.js';

export interface WorldResponse extends HttpResponse {
  readonly text: string;
  json(): any;
}

export interface World {
  readonly dataDir: string;
  /** What the server logged (errors), newest last. */
  readonly logs: { message: string; fields: Record<string, unknown> }[];
  call(method: string, rawPath: string, options?: { query?: string; body?: Buffer | string | object; headers?: Record<string, string> }): Promise<WorldResponse>;
  close(): Promise<void>;
}

export async function startWorld(): Promise<World> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rask-world-'));
  const logs: World['logs'] = [];
  const push = (message: string, fields: Record<string, unknown>) => void logs.push({ message, fields });
  const logger: ErrorLogger = { error: push, warn: push };
  const app = await createLocalApp(loadLocalConfig({ RASK_DATA_DIR: dataDir, RASK_JOBS_INTERVAL_MS: '0' }), { logger });
  const call: World['call'] = async (method, rawPath, options = {}) => {
    const b = options.body;
    const body = b === undefined ? Buffer.alloc(0) : Buffer.isBuffer(b) ? b : Buffer.from(typeof b === 'string' ? b : JSON.stringify(b));
    const res = await app.router({
      method,
      rawPath,
      rawQuery: options.query ?? '',
      headers: { ...(Buffer.isBuffer(b) || b === undefined ? {} : { 'content-type': 'application/json' }), ...(options.headers ?? {}) },
      body,
      requestId: randomUUID(),
    });
    const text = res.body.toString('utf8');
    return { ...res, text, json: () => JSON.parse(text) };
  };
  return { dataDir, logs, call, close: () => rm(dataDir, { recursive: true, force: true }) };
}

const ok = (res: WorldResponse) => expect(res.status, res.text).toBeLessThan(300);

/** Namespaces w1, w1$sub, w2; tables w1$t1 (rows, tags, a branch, indices), w1$sub$t3 (rows), w2$d (declared). */
export async function seedWorld(world: World): Promise<void> {
  for (const ns of ['w1', 'w1%24sub', 'w2']) ok(await world.call('POST', `/v1/namespace/${ns}/create`, { body: {} }));
  ok(await world.call('POST', '/v1/table/w1%24t1/create', { body: ipcRows(300) }));
  ok(await world.call('POST', '/v1/table/w1%24t1/insert', { body: ipcRows(20, 300) }));
  ok(await world.call('POST', '/v1/table/w1%24t1/tags/create', { body: { tag: 'v1', version: 1 } }));
  ok(await world.call('POST', '/v1/table/w1%24t1/branches/create', { body: { name: 'b1' } }));
  ok(await world.call('POST', '/v1/table/w1%24t1/create_scalar_index', { body: { column: 'id', index_type: 'BTREE', name: 'id_idx' } }));
  ok(
    await world.call('POST', '/v1/table/w1%24t1/create_index', {
      body: { column: 'vec', index_type: 'IVF_FLAT', name: 'vec_idx', num_partitions: 2, distance_type: 'l2' },
    }),
  );
  ok(await world.call('POST', '/v1/table/w1%24sub%24t3/create', { body: ipcRows(10) }));
  ok(await world.call('POST', '/v1/table/w2%24d/declare', { body: {} }));
  await restoreScratch(world);
}

/** The scratch tables destructive fuzz operations aim at, (re-)created when gone. */
export async function restoreScratch(world: World): Promise<void> {
  for (const t of ['w2%24s1', 'w2%24s2']) {
    const res = await world.call('POST', `/v1/table/${t}/create`, { body: ipcRows(30), query: 'mode=exist_ok' });
    if (res.status >= 300) ok(await world.call('POST', `/v1/table/${t}/create`, { body: ipcRows(30), query: 'mode=overwrite' }));
  }
}
