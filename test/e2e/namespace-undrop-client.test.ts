// @covers UndropNamespace, ListNamespaceTasks, DropNamespace
/**
 * A recoverable cascade drop of a three-level namespace subtree, with the official client
 * (docs/lifecycle.md, "Namespace subtrees"): tables with rows, two versions and a tag at every
 * level; drop with grace → opens fail → undrop → the same rows, versions and tags. Then the same
 * with the server process SIGKILLed in the middle of the detach and in the middle of the undrop
 * (test/crash/kill-switch-server.ts kills it right after a chosen registry write: deterministic,
 * no timing), restarted on the same data directory, and the job finished by a second call.
 */
import { callUnlessKilled, spawnServer, type SpawnedServer } from '../crash/spawn-server.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { keys } from '../../lib/registry/keys.js';
import type { NamespaceRecord } from '../../lib/registry/records.js';
import { Registry } from '../../lib/registry/registry.js';

const LEVELS: string[][] = [['life'], ['life', 'mid'], ['life', 'mid', 'deep']];
const TABLE_AT = ['top', 'middle', 'bottom'];
const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));

type Child = SpawnedServer;

const dirs: string[] = [];
const children: Child[] = [];
afterEach((ctx) => {
  if (ctx.task.result?.state !== 'fail') return;
  for (const c of children) if (c.stderr()) console.error(`server ${c.url} stderr:\n${c.stderr()}`);
});
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function startChild(dataDir: string, killAfter?: string): Promise<Child> {
  const env: Record<string, string | undefined> = { ...process.env, RASK_DATA_DIR: dataDir, RASK_TRASH_GRACE_DAYS: '7', RASK_LOG_LEVEL: 'warn' };
  if (killAfter) env.RASK_TEST_KILL_AFTER = killAfter;
  else delete env.RASK_TEST_KILL_AFTER;
  const child = await spawnServer(path.join(import.meta.dirname, '../crash/kill-switch-server.ts'), env);
  children.push(child);
  return child;
}

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rask-nsundrop-'));
  dirs.push(dir);
  return dir;
}

const call = callUnlessKilled;
const dropCascade = (url: string) => call(url, 'POST', '/v1/namespace/life/drop', { behavior: 'Cascade' });
const undrop = (url: string) => call(url, 'POST', '/v1/namespace/life/undrop', {});

interface Snapshot {
  rows: number;
  versions: number[];
  tags: string[];
}

/** Three levels, a table at each: 10 rows, then 5 more (version 2), tag `v1` on version 1. */
async function buildSubtree(url: string): Promise<Snapshot[]> {
  const db = await lancedb.connectNamespace('rest', { uri: url });
  const out: Snapshot[] = [];
  for (const [i, ns] of LEVELS.entries()) {
    await db.createNamespace(ns);
    const table = await db.createTable(TABLE_AT[i], rows(i * 100, 10), ns);
    await table.add(rows(i * 100 + 10, 5));
    await (await table.tags()).create('v1', 1);
    out.push(await snapshot(db, i));
  }
  return out;
}

async function snapshot(db: lancedb.Connection, level: number): Promise<Snapshot> {
  const table = await db.openTable(TABLE_AT[level], LEVELS[level]);
  return {
    rows: await table.countRows(),
    versions: (await table.listVersions()).map((v) => v.version),
    tags: Object.keys(await (await table.tags()).list()),
  };
}

async function expectGone(url: string): Promise<void> {
  const db = await lancedb.connectNamespace('rest', { uri: url });
  for (const [i, ns] of LEVELS.entries()) await expect(db.openTable(TABLE_AT[i], ns)).rejects.toThrow();
  expect((await call(url, 'POST', '/v1/namespace/life/describe', {}))!.status).toBe(404);
}

async function expectBack(url: string, before: Snapshot[]): Promise<void> {
  const db = await lancedb.connectNamespace('rest', { uri: url });
  const after: Snapshot[] = [];
  for (const i of LEVELS.keys()) after.push(await snapshot(db, i));
  expect(after).toEqual(before);
  expect(before.every((s) => s.rows === 15 && s.versions.length === 2 && s.tags[0] === 'v1')).toBe(true);
  expect((await call(url, 'GET', '/v1/namespace/life/tasks'))!.json).toEqual({ tasks: [] });
}

async function expectDeadline(url: string): Promise<void> {
  const { tasks } = (await call(url, 'GET', '/v1/namespace/life/tasks'))!.json;
  expect(tasks).toEqual([expect.objectContaining({ kind: 'trash', object: 'namespace', root: ['life'], namespaces: 3, tables: 3 })]);
  expect(Date.parse(tasks[0].expires_at) - Date.parse(tasks[0].dropped_at)).toBe(7 * 86_400_000);
}

describe('namespace subtree drop and undrop with the official client', () => {
  // The plain round trip (drop → gone → deadline → undrop → same data) is the first life of the
  // undrop-crash test below; each test checks the data is back after its second call.
  it('killed in the middle of the detach: after a restart the second drop finishes it, undrop restores', async () => {
    const dir = await dataDir();
    const first = await startChild(dir, '/trash/:2');
    const before = await buildSubtree(first.url);
    expect(await dropCascade(first.url)).toBeUndefined();
    expect(await first.exited).toBeNull(); // SIGKILL: no exit code
    // Caught in the middle: the root still marked, part of the subtree already in trash.
    const registry = new Registry(new FsObjectStore(path.join(dir, 'registry')));
    expect((await registry.read<NamespaceRecord>(keys.namespace('default', ['life'])))!.value.state).toBe('dropping');
    expect((await registry.store.list({ prefix: keys.trashPrefix('default') })).objects).toHaveLength(2);
    const second = await startChild(dir);
    expect((await dropCascade(second.url))!.status).toBe(200);
    await expectGone(second.url);
    await expectDeadline(second.url);
    expect((await undrop(second.url))!.status).toBe(200);
    await expectBack(second.url, before);
  });

  it('killed in the middle of the undrop: after a restart the second undrop finishes it', async () => {
    const dir = await dataDir();
    const first = await startChild(dir);
    const before = await buildSubtree(first.url);
    expect((await dropCascade(first.url))!.status).toBe(200);
    await expectGone(first.url);
    await expectDeadline(first.url);
    first.proc.kill('SIGKILL');
    await first.exited;
    // Killed right after the second table record is back (namespaces all rebuilt, one table to go).
    // Records only: the has-data markers mirror their keys under p/<project>/data/ and are
    // conditional writes too (lib/catalog/protocols/markers.ts).
    const second = await startChild(dir, String.raw`^p/[^/]+/t/.*\+t/[^/]+$:2`);
    expect(await undrop(second.url)).toBeUndefined();
    expect(await second.exited).toBeNull();
    const registry = new Registry(new FsObjectStore(path.join(dir, 'registry')));
    expect((await registry.store.list({ prefix: keys.namespaceTrashOf('default', ['life']) })).objects).toHaveLength(1);
    const third = await startChild(dir);
    const res = await undrop(third.url);
    expect(res!.status, JSON.stringify(res!.json)).toBe(200);
    // This call found the rest: every namespace, the table killed before its trash record went
    // (already back: counts as restored) and the last one.
    expect(res!.json).toMatchObject({ namespaces: 3, tables: 2 });
    expect(res!.json).toMatchObject({ restored: true });
    await expectBack(third.url, before);
  });
});
