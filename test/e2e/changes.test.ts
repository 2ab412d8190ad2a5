// @covers ListChanges, CreateNamespace, DeclareTable, GrantRole
/**
 * The change feed over HTTP on the real local server (docs/events.md, "The feed"):
 * - each mutation's registry record carries its change stamp, whose change id is the event's id;
 * - a consumer pages GET /v1/changes with limit 100 over more than 1,000 changes while writers
 *   keep writing: no gap, no duplicate after dedup by id, and its cursor resumes after a restart
 *   of the server on the same data directory;
 * - a principal without access to a namespace sees none of its events, and one without anything
 *   in the project is refused the same way whether the project exists or not.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalServer, type RunningServer } from '../../lib/app/server.js';
import { loadLocalConfig } from '../../lib/config.js';
import { keys } from '../../lib/registry/keys.js';
import { startTestServer, type TestServer } from '../support/server.js';

const CHANGES = 1_050;
const WRITERS = 6;

async function get(url: string, p: string, headers: Record<string, string> = {}) {
  const res = await fetch(url + p, { headers });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}
async function post(url: string, p: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + p, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

describe('the change feed (local server)', () => {
  let s: TestServer | undefined;
  afterAll(async () => s?.stop());

  it("stamps the door's record with its change, whose id is the event's; pages under the project base URI; refuses bad input", async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0' });
    const created = await post(s.url, '/v1/namespace/stamped/create', {});
    expect(created.status, created.text).toBe(200);
    const raw = JSON.parse(await readFile(path.join(s.dataDir, 'registry', keys.namespace('default', ['stamped'])), 'utf8'));
    expect(raw._change).toMatchObject({ op: 'CreateNamespace', by: 'anonymous', id: ['stamped'] });
    // Readers never see it.
    const described = await post(s.url, '/v1/namespace/stamped/describe', {});
    expect(described.text).not.toContain('_change');
    const page = await get(s.url, '/v1/changes?limit=10');
    expect(page.status, page.text).toBe(200);
    const body = page.json();
    const mine = body.events.filter((e: any) => e.subject === 'namespace:stamped');
    expect(mine).toHaveLength(1);
    expect(mine[0].id).toBe(raw._change.c);
    expect(mine[0].data.request_id).toBe(raw._change.req);
    expect(typeof body.next_cursor).toBe('string');
    const based = await get(s.url, '/projects/default/v1/changes?limit=10');
    expect(based.json().events.map((e: any) => e.id)).toEqual(body.events.map((e: any) => e.id));
    // Resuming from the cursor: nothing new, same cursor.
    const again = await get(s.url, `/v1/changes?since=${encodeURIComponent(body.next_cursor)}&limit=10`);
    expect(again.json()).toMatchObject({ events: [], next_cursor: body.next_cursor });
    for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'since=nope']) {
      const r = await get(s.url, `/v1/changes?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.json().code, bad).toBe(13);
    }
    const expired = await get(s.url, '/v1/changes?since=2000-01-01:0');
    expect(expired.status, expired.text).toBe(410);
    expect(expired.json().code).toBe(13);
    expect(expired.json().error).toMatch(/oldest cursor still held is \d{4}-\d{2}-\d{2}:0/);
    await s.stop();
    s = undefined;
  });

  it('pages newest first with order=newest_first: back to the oldest by prev_cursor, forward from next_cursor; refuses bad input and changes nothing', async () => {
    s = await startTestServer({ RASK_JOBS_INTERVAL_MS: '0' });
    for (let i = 0; i < 7; i++) expect((await post(s.url, `/v1/namespace/n${i}/create`, {})).status).toBe(200);
    const forward = (await get(s.url, '/v1/changes?limit=1000')).json().events.map((e: any) => e.id);
    expect(forward.length).toBeGreaterThanOrEqual(7);
    const back: string[] = [];
    let first: any;
    let before: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const r = await get(s.url, `/v1/changes?order=newest_first&limit=3${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      expect(r.status, r.text).toBe(200);
      const body = r.json();
      first ??= body;
      expect(body.events.length).toBeLessThanOrEqual(3);
      back.push(...body.events.map((e: any) => e.id));
      expect(body.has_more).toBe(body.prev_cursor !== undefined);
      if (!body.prev_cursor) break;
      before = body.prev_cursor;
    }
    expect(back).toEqual([...forward].reverse());
    expect(first.events[0].subject).toBe('namespace:n6');
    // Following forward from the newest page's next_cursor: exactly the later changes.
    expect((await post(s.url, '/v1/namespace/later/create', {})).status).toBe(200);
    const after = (await get(s.url, `/v1/changes?since=${encodeURIComponent(first.next_cursor)}`)).json();
    expect(after.events.map((e: any) => e.subject)).toEqual(['namespace:later']);
    for (const bad of ['order=sideways', 'order=newest_first&since=2026-01-01:0', `before=${encodeURIComponent(first.next_cursor)}`, 'order=newest_first&before=nope', 'order=newest_first&limit=0']) {
      const r = await get(s.url, `/v1/changes?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.json().code, bad).toBe(13);
    }
    const expired = await get(s.url, '/v1/changes?order=newest_first&before=2000-01-01:0');
    expect(expired.status, expired.text).toBe(410);
    // Nothing changed: the newest page is the one it was, plus the later namespace.
    const now = (await get(s.url, '/v1/changes?order=newest_first&limit=2')).json();
    expect(now.events.map((e: any) => e.subject)).toEqual(['namespace:later', 'namespace:n6']);
    await s.stop();
    s = undefined;
  });
});

describe('a consumer follows the feed while writers write, and resumes after a restart', () => {
  let running: RunningServer | undefined;
  let dataDir = '';
  afterAll(async () => {
    await running?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  const start = () => startLocalServer(loadLocalConfig({ RASK_PORT: '0', RASK_HOST: '127.0.0.1', RASK_DATA_DIR: dataDir, RASK_LOG_LEVEL: 'warn', RASK_JOBS_INTERVAL_MS: '0' }));

  it(`${CHANGES} changes, limit 100: no gap, no duplicate after dedup, resumable across a restart`, { timeout: 180_000 }, async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'rask-feed-'));
    running = await start();
    let url = running.url;
    const acknowledged = new Set<string>();
    const seen = new Map<string, string>(); // event id → subject
    const subjects: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    const pageOnce = async () => {
      const r = await get(url, `/v1/changes?limit=100${cursor === undefined ? '' : `&since=${encodeURIComponent(cursor)}`}`);
      expect(r.status, r.text).toBe(200);
      const body = r.json();
      expect(body.events.length).toBeLessThanOrEqual(100);
      pages++;
      for (const e of body.events) {
        if (seen.has(e.id)) continue; // at least once: dedup by id
        seen.set(e.id, e.subject);
        subjects.push(e.subject);
      }
      const moved = body.next_cursor !== cursor;
      cursor = body.next_cursor;
      return { moved, count: body.events.length };
    };
    let writing = true;
    let n = 0;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (;;) {
        const i = n++;
        if (i >= CHANGES) return;
        const name = `w${w}n${i}`;
        const r = await post(url, `/v1/namespace/${name}/create`, {});
        expect(r.status, r.text).toBe(200);
        acknowledged.add(`namespace:${name}`);
      }
    });
    const consumer = (async () => {
      while (writing) {
        await pageOnce();
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all(writers);
    writing = false;
    await consumer;
    for (;;) if (!(await pageOnce()).moved) break;
    expect(pages).toBeGreaterThan(10);
    expect(new Set(subjects).size, 'a subject seen under two ids').toBe(subjects.length);
    expect([...acknowledged].filter((x) => !subjects.includes(x)), 'acknowledged changes missing from the feed').toEqual([]);
    expect(subjects.filter((x) => !acknowledged.has(x)), 'events of changes that did not happen').toEqual([]);

    // A restart of the server on the same directory: the cursor resumes where it was.
    await running.close();
    running = await start();
    url = running.url;
    for (const name of ['after1', 'after2']) expect((await post(url, `/v1/namespace/${name}/create`, {})).status).toBe(200);
    const before = subjects.length;
    for (;;) if (!(await pageOnce()).moved) break;
    expect(subjects.slice(before)).toEqual(['namespace:after1', 'namespace:after2']);
  });
});

describe('who sees what in the feed', () => {
  const ADMIN = 'feed-admin-key-0123456789abcdef';
  let s: TestServer | undefined;
  afterAll(async () => s?.stop());

  it('a principal granted one namespace sees its events and none of another; one holding nothing is refused alike for a real and a made-up project', async () => {
    s = await startTestServer({ RASK_AUTH: 'keys', RASK_ADMIN_KEY: ADMIN, RASK_JOBS_INTERVAL_MS: '0' });
    const admin = { 'x-api-key': ADMIN };
    const P = '/projects/acme';
    expect((await post(s.url, '/v1/projects', { name: 'acme' }, admin)).status).toBe(200);
    const wh = await post(s.url, '/v1/warehouses', { name: 'main', project: 'acme', storage_root: path.join(s.dataDir, 'projects', 'acme', 'main') }, admin);
    expect(wh.status, wh.text).toBe(200);
    for (const ns of ['seen', 'hidden']) {
      expect((await post(s.url, `${P}/v1/namespace/${ns}/create`, {}, admin)).status).toBe(200);
      expect((await post(s.url, `${P}/v1/table/${ns}%24t/declare?delimiter=%24`, {}, admin)).status).toBe(200);
    }
    const keyOf = async (name: string) => {
      expect((await post(s!.url, '/v1/principals', { name }, admin)).status).toBe(200);
      return (await post(s!.url, `/v1/principals/${name}/keys`, {}, admin)).json().api_key as string;
    };
    const reader = await keyOf('reader');
    const stranger = await keyOf('stranger');
    const granted = await post(s.url, `${P}/v1/grants`, { principal: 'reader', role: 'reader', namespace: ['seen'] }, admin);
    expect(granted.status, granted.text).toBe(200);

    const all = (await get(s.url, `${P}/v1/changes?limit=1000`, admin)).json().events.map((e: any) => e.subject);
    expect(all).toEqual(expect.arrayContaining(['namespace:seen', 'table:seen.t', 'namespace:hidden', 'table:hidden.t', 'grant:reader']));
    const visible = await get(s.url, `${P}/v1/changes?limit=1000`, { 'x-api-key': reader });
    expect(visible.status, visible.text).toBe(200);
    const subjects = visible.json().events.map((e: any) => e.subject);
    expect(subjects).toEqual(expect.arrayContaining(['namespace:seen', 'table:seen.t']));
    expect(subjects.filter((x: string) => x.includes('hidden')), 'events of a namespace the reader may not read').toEqual([]);
    expect(subjects.filter((x: string) => x.startsWith('grant:') || x.startsWith('principal:'))).toEqual([]);
    expect(JSON.stringify(visible.json())).not.toContain('hidden');
    const newest = await get(s.url, `${P}/v1/changes?order=newest_first&limit=1000`, { 'x-api-key': reader });
    expect(newest.json().events.map((e: any) => e.subject)).toEqual([...subjects].reverse());
    const real = await get(s.url, `${P}/v1/changes`, { 'x-api-key': stranger });
    const madeUp = await get(s.url, '/projects/nosuch/v1/changes', { 'x-api-key': stranger });
    expect(real.status, real.text).toBe(403);
    expect(madeUp.status, madeUp.text).toBe(real.status);
    expect(madeUp.json().code).toBe(real.json().code);
  });
});
