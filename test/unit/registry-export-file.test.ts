/**
 * The portable export file (lib/maintenance/registry/export-file.ts): an export taken while
 * writers keep writing is exactly the registry's state at its instant (consistency); a file cut
 * short or altered is refused before anything is written; `--map-storage` rewrites warehouse
 * roots (a move between local and AWS) and nothing else.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { exportRegistry, importRegistry, parseStorageRoot } from '../../lib/maintenance/registry/export-file.js';
import { keys } from '../../lib/registry/keys.js';
import { historied, type HistoriedFixture } from '../support/historied.js';

let f: HistoriedFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

async function exported(fx: HistoriedFixture, at: Date, all = true): Promise<string> {
  let text = '';
  await exportRegistry(fx.history, all ? { all: true } : { project: 'default' }, at, (line) => void (text += line));
  return text;
}

async function contents(store: MemoryObjectStore | HistoriedFixture['store']): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of (await store.list({})).objects) out.set(o.key, (await store.get(o.key))!.body.toString('utf8'));
  return out;
}

describe('registry export file', () => {
  it.each(['memory', 'fs'] as const)('%s: an export taken while writers write is the state at its instant', async (kind) => {
    f = await historied(kind);
    const s = f.services;
    await createNamespace(s, { id: ['a'], mode: 'create', properties: {} });
    for (let i = 0; i < 5; i++) await declareTable(s, { id: ['a', `t${i}`], properties: {}, identity: {} });
    await new Promise((r) => setTimeout(r, 3));
    const at = new Date();
    const expected = await contents(f.store);
    await new Promise((r) => setTimeout(r, 3));
    // Writers keep going during the export: none of it may show.
    const writing = (async () => {
      for (let i = 5; i < 25; i++) await declareTable(s, { id: ['a', `t${i}`], properties: {}, identity: {} });
    })();
    const text = await exported(f, at);
    await writing;
    const target = new MemoryObjectStore();
    await importRegistry(target, text);
    expect(await contents(target)).toEqual(expected);
  });

  it('refuses a file cut short or altered, and writes nothing', async () => {
    f = await historied('memory');
    await createNamespace(f.services, { id: ['a'], mode: 'create', properties: {} });
    const text = await exported(f, new Date());
    const target = new MemoryObjectStore();
    const cut = text.split('\n').slice(0, -2).join('\n');
    await expect(importRegistry(target, cut)).rejects.toThrow(/cut short|trailer/);
    await expect(importRegistry(target, text.replace('"k":"', '"k":"x'))).rejects.toThrow(/digest/);
    expect((await target.list({})).objects).toEqual([]);
  });

  it('--map-storage rewrites the warehouse roots and the storage claims, every other record byte for byte', async () => {
    f = await historied('memory');
    await createNamespace(f.services, { id: ['a'], mode: 'create', properties: {} });
    const text = await exported(f, new Date());
    const from = parseStorageRoot('file:/nonexistent/warehouse');
    const to = parseStorageRoot('s3://rask-warehouse/warehouse');
    expect(to).toEqual({ kind: 's3', bucket: 'rask-warehouse', prefix: 'warehouse/' });
    const target = new MemoryObjectStore();
    const summary = await importRegistry(target, text, { mapStorage: [{ from, to }] });
    expect(summary.remapped).toBe(1);
    const before = await contents(f.store);
    const after = await contents(target);
    const wh = keys.warehouse('default', 'default');
    expect(JSON.parse(after.get(wh)!).storage).toEqual(to);
    for (const [k, v] of before) if (k !== wh) expect(after.get(k), k).toBe(v);
  });
});

describe('a project export refused on import when it names what the project does not depend on', () => {
  /** A project export of `default` with its trailer recomputed over `extra` lines added: a well-formed, hand-made file. */
  function withLines(text: string, extra: { k: string; b: string }[]): string {
    const lines = text.trim().split('\n');
    const body = [...lines.slice(1, -1), ...extra.map((e) => JSON.stringify(e))];
    const sha256 = createHash('sha256').update(body.map((l) => `${l}\n`).join('')).digest('hex');
    return `${[lines[0], ...body, JSON.stringify({ end: true, keys: body.length, sha256 })].join('\n')}\n`;
  }

  it.each([
    ['another project\'s record', { k: 'p/other/t/+n/x', b: '{"kind":"namespace"}' }],
    ['a principal without a grant in the project', { k: 'principals/mallory', b: '{"kind":"principal","name":"mallory","platformAdmin":true,"createdAt":"2026-01-01T00:00:00Z"}' }],
    ['an API key of a principal not in the file', { k: 'apikeys/abc', b: '{"kind":"api-key","keyId":"abc","principal":"mallory","secretSha256":"00","createdAt":"2026-01-01T00:00:00Z"}' }],
  ])('%s: nothing is written', async (_what, extra) => {
    f = await historied('memory');
    await createNamespace(f.services, { id: ['a'], mode: 'create', properties: {} });
    await new Promise((r) => setTimeout(r, 3));
    const text = withLines(await exported(f, new Date(), false), [extra]);
    const target = new MemoryObjectStore();
    await expect(importRegistry(target, text)).rejects.toThrow(/holds key\(s\) of nothing it depends on/);
    expect((await target.list({})).objects).toEqual([]);
    // The same file without the stray line imports.
    expect((await importRegistry(target, withLines(await exported(f, new Date(), false), []))).keys).toBeGreaterThan(0);
  });
});
