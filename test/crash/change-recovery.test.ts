// @covers CreateNamespace, DeclareTable, ListChanges
/**
 * Durable delivery on the local server (docs/events.md, "Delivery"): a door's process SIGKILLed
 * right after one of its registry writes (test/crash/kill-switch-server.ts: deterministic, no
 * timing) never appended its event. After the restart, the start-up recovery
 * (lib/app/change-recovery.ts) finds the change by the stamp in the record it wrote: if that
 * record proves the change (the namespace's, the declared table's), the feed holds its event, with
 * the change's id; if the kill came before it (only the location claim written), the feed holds
 * none. A second restart adds nothing (the mark moved; the ids are there).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callUnlessKilled, killSwitchServers } from './spawn-server.js';

const { dirs, start, stop } = killSwitchServers();

async function feed(url: string): Promise<{ id: string; subject: string; data: { operation: string; details?: Record<string, unknown> } }[]> {
  const res = await fetch(`${url}/v1/changes?limit=1000`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: never[] }).events;
}

describe('events of changes whose process died before logging them', () => {
  it('are derived at the restart from the stamps the records carry, once, and only for changes that happened', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rask-recover-'));
    dirs.push(dir);
    // Killed right after the namespace record is written: the change happened, unanswered, unlogged.
    let dying = await start(dir, '/t/\\+n/kept$:1');
    expect(await callUnlessKilled(dying.url, 'POST', '/v1/namespace/kept/create', {})).toBeUndefined();
    await stop(dying);

    let server = await start(dir);
    const ns = await callUnlessKilled(server.url, 'POST', '/v1/namespace/kept/describe', {});
    expect(ns?.status).toBe(200);
    let events = await feed(server.url);
    expect(events.filter((e) => e.subject === 'namespace:kept').map((e) => [e.data.operation, e.data.details?.via])).toEqual([['CreateNamespace', 'registry']]);
    await stop(server);

    // A declare killed after its table record: derived. One killed after its location claim only: none.
    dying = await start(dir, '/\\+t/declared$:1');
    expect(await callUnlessKilled(dying.url, 'POST', '/v1/table/kept%24declared/declare', {})).toBeUndefined();
    await stop(dying);
    dying = await start(dir, '/loc/:1');
    expect(await callUnlessKilled(dying.url, 'POST', '/v1/table/kept%24never/declare', {})).toBeUndefined();
    await stop(dying);

    server = await start(dir);
    expect((await callUnlessKilled(server.url, 'POST', '/v1/table/kept%24declared/describe', {}))?.status).toBe(200);
    // The claim's write may land together with the record's (the kill comes after the claim's): the
    // feed must agree with what the registry then says.
    const never = (await callUnlessKilled(server.url, 'POST', '/v1/table/kept%24never/describe', {}))?.status;
    expect([200, 404]).toContain(never);
    events = await feed(server.url);
    expect(events.filter((e) => e.subject === 'table:kept.declared').map((e) => e.data.operation)).toEqual(['DeclareTable']);
    expect(events.filter((e) => e.subject === 'table:kept.never')).toHaveLength(never === 200 ? 1 : 0);
    // An acknowledged change: its event once, from the door; the restart adds no copy.
    const created = await callUnlessKilled(server.url, 'POST', '/v1/namespace/answered/create', {});
    expect(created?.status).toBe(200);
    await stop(server);
    server = await start(dir);
    events = await feed(server.url);
    expect(events.filter((e) => e.subject === 'namespace:answered')).toHaveLength(1);
    expect(events.filter((e) => e.subject === 'namespace:kept')).toHaveLength(1);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    await stop(server);
  });
});
