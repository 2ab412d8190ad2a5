// @covers CreateNamespace, DropNamespace, DescribeNamespace, CreateTable, DeclareTable, InsertIntoTable, RenameTable, DropTable, DescribeTable, CountTableRows
/**
 * Crash consistency (issue #8): a real server process is SIGKILLed at seeded random points of a
 * mixed workload — create / declare / rename / drop tables, create / cascade-drop namespaces,
 * inserts — and restarted on the same data directory, again and again. After every restart:
 *
 * - no acknowledged table is lost, and every table holds exactly the rows acknowledged for it;
 * - the request that was in flight at the kill took effect entirely or not at all (its outcome
 *   is read back: a rename leaves exactly one of the old and new names, an insert all its rows
 *   or none, a cascade drop the namespace with all its tables or neither);
 * - no zombie namespace: no record is left `dropping` once the namespaces have been read, every
 *   table record's namespace is active, and the registry holds exactly the tables of the model;
 * - no two live tables on one location; each live table's location claim carries its uid;
 * - the change feed holds exactly one event (after dedup by id) of every acknowledged change, at
 *   most one of the change in flight at the kill when it is read back as done, and none of a
 *   change that did not happen (docs/events.md, "Delivery").
 *
 * Workers own disjoint namespaces and run their operations one after another, so each worker
 * has at most one request in flight at a kill and the model stays exact. `npm test` runs a few
 * lives (seeded, ~20 s); `npm run soak` (RASK_SOAK=1) runs many more.
 */
import { spawnServer, type SpawnedServer } from './spawn-server.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { Registry } from '../../lib/registry/registry.js';
import { assertCrashInvariants } from '../support/crash-invariants.js';
import { ipcRows } from '../data/fixtures.js';

const SOAK = process.env.RASK_SOAK === '1';
const LIVES = Number(process.env.RASK_CRASH_LIVES ?? (SOAK ? 40 : 3));
const SEED = Number(process.env.RASK_CRASH_SEED ?? 20261130);
const WORKERS = 3;

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] };
}

// ---------------------------------------------------------------- the server process

type Child = SpawnedServer;

function startChild(dataDir: string): Promise<Child> {
  return spawnServer(path.join(import.meta.dirname, 'child-server.ts'), { ...process.env, RASK_DATA_DIR: dataDir });
}

// ---------------------------------------------------------------- HTTP

interface Answer {
  status: number;
  text: string;
}

/** One request; `undefined` when the connection died (the server was killed). */
async function call(url: string, method: string, p: string, body?: string | Buffer): Promise<Answer | undefined> {
  try {
    const res = await fetch(url + p, { method, body, headers: body === undefined || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' } });
    return { status: res.status, text: await res.text() };
  } catch {
    return undefined;
  }
}

const tid = (ns: string, t: string) => `${ns}%24${t}`;
const api = {
  createNs: (u: string, ns: string) => call(u, 'POST', `/v1/namespace/${ns}/create?delimiter=%24`, '{}'),
  describeNs: (u: string, ns: string) => call(u, 'POST', `/v1/namespace/${ns}/describe?delimiter=%24`, '{}'),
  dropNsCascade: (u: string, ns: string) => call(u, 'POST', `/v1/namespace/${ns}/drop?delimiter=%24`, JSON.stringify({ behavior: 'Cascade' })),
  createTable: (u: string, ns: string, t: string, rows: number) => call(u, 'POST', `/v1/table/${tid(ns, t)}/create?delimiter=%24`, ipcRows(rows)),
  declare: (u: string, ns: string, t: string) => call(u, 'POST', `/v1/table/${tid(ns, t)}/declare?delimiter=%24`, '{}'),
  insert: (u: string, ns: string, t: string, rows: number, start: number) =>
    call(u, 'POST', `/v1/table/${tid(ns, t)}/insert?delimiter=%24`, ipcRows(rows, start)),
  rename: (u: string, ns: string, t: string, to: string) =>
    call(u, 'POST', `/v1/table/${tid(ns, t)}/rename?delimiter=%24`, JSON.stringify({ new_table_name: to })),
  drop: (u: string, ns: string, t: string) => call(u, 'POST', `/v1/table/${tid(ns, t)}/drop?delimiter=%24`, '{}'),
  describe: (u: string, ns: string, t: string) => call(u, 'POST', `/v1/table/${tid(ns, t)}/describe?delimiter=%24`, '{}'),
  count: (u: string, ns: string, t: string) => call(u, 'GET', `/v1/table/${tid(ns, t)}/count_rows?delimiter=%24`),
};

// ---------------------------------------------------------------- the model

interface TableModel {
  rows: number;
  /** Declared and never written: no dataset to count. */
  declaredOnly: boolean;
}
type Op =
  | { kind: 'createNs'; ns: string }
  | { kind: 'dropNs'; ns: string }
  | { kind: 'createTable'; ns: string; t: string; rows: number }
  | { kind: 'declare'; ns: string; t: string }
  | { kind: 'insert'; ns: string; t: string; rows: number }
  | { kind: 'rename'; ns: string; t: string; to: string }
  | { kind: 'drop'; ns: string; t: string };

/** The event a change of `op` has in the feed: its operation and subject (docs/events.md). */
function eventKey(op: Op): string {
  const [operation, subject] = {
    createNs: ['CreateNamespace', `namespace:${op.ns}`],
    dropNs: ['DropNamespace', `namespace:${op.ns}`],
    createTable: ['CreateTable', `table:${op.ns}.${'t' in op ? op.t : ''}`],
    declare: ['DeclareTable', `table:${op.ns}.${'t' in op ? op.t : ''}`],
    insert: ['InsertIntoTable', `table:${op.ns}.${'t' in op ? op.t : ''}`],
    rename: ['RenameTable', `table:${op.ns}.${'t' in op ? op.t : ''}`],
    drop: ['DropTable', `table:${op.ns}.${'t' in op ? op.t : ''}`],
  }[op.kind];
  return `${operation}|${subject}`;
}

class Worker {
  readonly namespaces = new Map<string, Map<string, TableModel>>();
  /**
   * Changes by event key: `sure` were acknowledged (exactly one event each), `maybe` were in flight
   * at a kill and read back as done (an event if the door logged it or its record proves it).
   */
  readonly changes = new Map<string, { sure: number; maybe: number }>();
  happened(op: Op, sure: boolean): void {
    const c = this.changes.get(eventKey(op)) ?? { sure: 0, maybe: 0 };
    if (sure) c.sure++;
    else c.maybe++;
    this.changes.set(eventKey(op), c);
  }
  /** The request in flight when the server died: its outcome is read back after the restart. */
  pending: Op | undefined;
  private seq = 0;
  private rowSeq = 0;
  constructor(
    readonly w: number,
    readonly rnd: ReturnType<typeof prng>,
  ) {}

  name(prefix: string) {
    return `${prefix}${this.w}x${++this.seq}`;
  }

  nextOp(): Op {
    const r = this.rnd;
    const nss = [...this.namespaces.keys()];
    if (nss.length === 0 || (nss.length < 3 && r.next() < 0.1)) return { kind: 'createNs', ns: this.name('n') };
    const ns = r.pick(nss);
    const tables = [...this.namespaces.get(ns)!.keys()];
    const roll = r.next();
    if (roll < 0.08 && tables.length > 0) return { kind: 'dropNs', ns };
    if (roll < 0.25 || tables.length === 0) return { kind: 'createTable', ns, t: this.name('t'), rows: r.int(1, 5) };
    if (roll < 0.35) return { kind: 'declare', ns, t: this.name('d') };
    const t = r.pick(tables);
    if (roll < 0.75) return { kind: 'insert', ns, t, rows: r.int(1, 4) };
    if (roll < 0.88) return { kind: 'rename', ns, t, to: this.name('r') };
    return { kind: 'drop', ns, t };
  }

  async send(url: string, op: Op): Promise<Answer | undefined> {
    switch (op.kind) {
      case 'createNs':
        return api.createNs(url, op.ns);
      case 'dropNs':
        return api.dropNsCascade(url, op.ns);
      case 'createTable':
        return api.createTable(url, op.ns, op.t, op.rows);
      case 'declare':
        return api.declare(url, op.ns, op.t);
      case 'insert':
        return api.insert(url, op.ns, op.t, op.rows, 100_000 + this.w * 10_000 + ++this.rowSeq * 10);
      case 'rename':
        return api.rename(url, op.ns, op.t, op.to);
      case 'drop':
        return api.drop(url, op.ns, op.t);
    }
  }

  /** The model after `op` took effect. */
  apply(op: Op): void {
    const tables = this.namespaces.get(op.ns);
    switch (op.kind) {
      case 'createNs':
        this.namespaces.set(op.ns, new Map());
        return;
      case 'dropNs':
        this.namespaces.delete(op.ns);
        return;
      case 'createTable':
        tables!.set(op.t, { rows: op.rows, declaredOnly: false });
        return;
      case 'declare':
        tables!.set(op.t, { rows: 0, declaredOnly: true });
        return;
      case 'insert': {
        const t = tables!.get(op.t)!;
        t.rows += op.rows;
        t.declaredOnly = false;
        return;
      }
      case 'rename':
        tables!.set(op.to, tables!.get(op.t)!);
        tables!.delete(op.t);
        return;
      case 'drop':
        tables!.delete(op.t);
        return;
    }
  }
}

// ---------------------------------------------------------------- checks

async function tableState(url: string, ns: string, t: string): Promise<{ exists: boolean; rows?: number }> {
  const d = await api.describe(url, ns, t);
  expect(d, `describe ${ns}.${t}`).toBeDefined();
  if (d!.status === 404) return { exists: false };
  expect(d!.status, d!.text).toBe(200);
  const c = await api.count(url, ns, t);
  if (c!.status === 200) return { exists: true, rows: Number(c!.text) };
  // A declared table without a dataset has no rows to count.
  expect(JSON.parse(d!.text).is_only_declared ?? true, `${ns}.${t}: ${c!.text}`).not.toBe(false);
  return { exists: true, rows: undefined };
}

async function nsExists(url: string, ns: string): Promise<boolean> {
  const d = await api.describeNs(url, ns);
  expect([200, 404], d?.text).toContain(d?.status);
  return d!.status === 200;
}

/** Reads back the outcome of the request in flight at the kill: all or nothing. */
async function resolvePending(url: string, w: Worker): Promise<void> {
  const op = w.pending;
  w.pending = undefined;
  if (!op) return;
  const tables = w.namespaces.get(op.ns);
  const where = `${JSON.stringify(op)}`;
  switch (op.kind) {
    case 'createNs':
      if (await nsExists(url, op.ns)) (w.apply(op), w.happened(op, false));
      return;
    case 'dropNs':
      // Describing it settles an interrupted drop: finished (gone, with every table) or never begun.
      if (!(await nsExists(url, op.ns))) {
        for (const t of tables!.keys()) expect((await tableState(url, op.ns, t)).exists, `${where}: table ${t} outlived its namespace`).toBe(false);
        (w.apply(op), w.happened(op, false));
      }
      return;
    case 'createTable': {
      const s = await tableState(url, op.ns, op.t);
      if (s.exists) {
        expect(s.rows, where).toBe(op.rows);
        (w.apply(op), w.happened(op, false));
      }
      return;
    }
    case 'declare':
      if ((await tableState(url, op.ns, op.t)).exists) (w.apply(op), w.happened(op, false));
      return;
    case 'insert': {
      const before = tables!.get(op.t)!;
      const s = await tableState(url, op.ns, op.t);
      expect(s.exists, where).toBe(true);
      const rows = s.rows ?? 0;
      expect([before.rows, before.rows + op.rows], where).toContain(rows);
      if (rows === before.rows + op.rows) (w.apply(op), w.happened(op, false));
      return;
    }
    case 'rename': {
      const [from, to] = [await tableState(url, op.ns, op.t), await tableState(url, op.ns, op.to)];
      expect(from.exists !== to.exists, `${where}: exactly one of old/new name must be live`).toBe(true);
      if (to.exists) (w.apply(op), w.happened(op, false));
      return;
    }
    case 'drop':
      if (!(await tableState(url, op.ns, op.t)).exists) (w.apply(op), w.happened(op, false));
      return;
  }
}

/**
 * The change feed after a restart (docs/events.md, "Delivery"): after dedup by id, every
 * acknowledged change has exactly one event, a change read back as done at most one, and nothing
 * else has any (no event of a change that did not happen).
 */
async function checkEvents(url: string, workers: Worker[]): Promise<number> {
  const seen = new Set<string>();
  const got = new Map<string, number>();
  let cursor: string | undefined;
  for (;;) {
    const r = await call(url, 'GET', `/v1/changes?limit=500${cursor === undefined ? '' : `&since=${encodeURIComponent(cursor)}`}`);
    expect(r?.status, r?.text).toBe(200);
    const page = JSON.parse(r!.text) as { events: { id: string; subject: string; data: { operation: string } }[]; next_cursor: string };
    for (const e of page.events) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      if (!/^(namespace|table):/.test(e.subject)) continue; // maintenance reports
      const key = `${e.data.operation}|${e.subject}`;
      got.set(key, (got.get(key) ?? 0) + 1);
    }
    if (page.next_cursor === cursor) break;
    cursor = page.next_cursor;
  }
  const expected = new Map<string, { sure: number; maybe: number }>();
  for (const w of workers) for (const [k, c] of w.changes) expected.set(k, c);
  for (const [key, c] of expected) {
    const n = got.get(key) ?? 0;
    expect(n, `events of ${key} (${c.sure} acknowledged, ${c.maybe} read back as done)`).toBeGreaterThanOrEqual(c.sure);
    expect(n, `events of ${key} (${c.sure} acknowledged, ${c.maybe} read back as done)`).toBeLessThanOrEqual(c.sure + c.maybe);
  }
  for (const key of got.keys()) expect(expected.has(key), `an event of a change that did not happen: ${key}`).toBe(true);
  return seen.size;
}

async function checkAll(url: string, dataDir: string, workers: Worker[]): Promise<void> {
  for (const w of workers) await resolvePending(url, w);
  await checkEvents(url, workers);
  const expected = new Set<string>();
  for (const w of workers) {
    for (const [ns, tables] of w.namespaces) {
      expect(await nsExists(url, ns), `acknowledged namespace ${ns} lost`).toBe(true);
      for (const [t, model] of tables) {
        const s = await tableState(url, ns, t);
        expect(s.exists, `acknowledged table ${ns}.${t} lost`).toBe(true);
        if (!model.declaredOnly) expect(s.rows, `rows of ${ns}.${t}`).toBe(model.rows);
        expected.add(`${ns}.${t}`);
      }
    }
  }
  // The registry itself, read straight from disk (reads only: the server owns the writes).
  const registry = new Registry(new FsObjectStore(path.join(dataDir, 'registry')));
  const tables = await assertCrashInvariants(registry, 'default');
  expect(tables.map((t) => t.id.join('.')).sort(), 'the registry holds exactly the acknowledged tables').toEqual([...expected].sort());
}

// ---------------------------------------------------------------- the run

let dataDir: string | undefined;
let child: Child | undefined;
afterAll(async () => {
  child?.proc.kill('SIGKILL');
  await child?.exited;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('crash consistency: SIGKILL during a mixed workload, restart, check', () => {
  it(`${LIVES} lives, seed ${SEED}`, { timeout: SOAK ? 1_800_000 : 60_000 }, async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'rask-crash-'));
    const rnd = prng(SEED);
    const workers = Array.from({ length: WORKERS }, (_, w) => new Worker(w, prng(SEED * 31 + w)));
    let acknowledged = 0;
    let inFlightAtKill = 0;
    for (let life = 0; life < LIVES; life++) {
      child = await startChild(dataDir);
      const url = child.url;
      await checkAll(url, dataDir, workers);
      // Kill after a seeded number of requests has been sent, with every worker mid-request; in
      // every other life, a few milliseconds into the first cascade drop instead (the longest
      // multi-step door, and the one that left zombies).
      const killAt = rnd.int(4, 30);
      const onCascade = life % 2 === 1;
      const cascadeDelayMs = rnd.int(0, 40);
      let sent = 0;
      let killed = false;
      const current = child;
      const kill = () => {
        if (killed) return;
        killed = true;
        current.proc.kill('SIGKILL');
      };
      await Promise.all(
        workers.map(async (w) => {
          while (!killed) {
            const op = w.nextOp();
            w.pending = op;
            const n = ++sent;
            const sending = w.send(url, op);
            if (onCascade ? op.kind === 'dropNs' || n >= 3 * killAt : n >= killAt) {
              if (onCascade && op.kind === 'dropNs') setTimeout(kill, cascadeDelayMs);
              else kill();
            }
            const answer = await sending;
            if (answer === undefined) return; // died with the server: read back after restart
            expect(answer.status, `${JSON.stringify(op)} → ${answer.text}`).toBeLessThan(300);
            w.pending = undefined;
            w.apply(op);
            w.happened(op, true);
            acknowledged++;
          }
        }),
      );
      await current.exited;
      inFlightAtKill += workers.filter((w) => w.pending).length;
      child = undefined;
    }
    child = await startChild(dataDir);
    await checkAll(child.url, dataDir, workers);
    // The run did what it claims: requests were acknowledged, and kills caught some mid-flight.
    expect(acknowledged).toBeGreaterThan(LIVES * 3);
    expect(inFlightAtKill).toBeGreaterThan(0);
    console.log(JSON.stringify({ crashTest: { lives: LIVES, seed: SEED, acknowledged, inFlightAtKill } }));
  });
});
