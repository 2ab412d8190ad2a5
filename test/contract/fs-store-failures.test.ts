// @covers CreateNamespace
/**
 * A failing disk under the filesystem store (issue #35): EIO, ENOSPC, EMFILE and the like mean
 * what S3's 5xx mean — the storage cannot answer now — so the store throws
 * StorageUnavailableError and a door answers 503 / code 17 with Retry-After, never 500 / 18.
 * node:fs is wrapped so one call can be made to fail with a chosen errno, on the real local
 * server over HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { StorageUnavailableError } from '../../lib/errors.js';
import { ConditionFailedError } from '../../lib/ports/object-store.js';
import { startTestServer } from '../support/server.js';

/** The next call of `fn` whose first argument (a path or descriptor) passes `match` fails with `code`. */
const planned: { fn: string; match: (target: unknown) => boolean; code: string }[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const failing =
    <F extends (...args: never[]) => unknown>(name: string, fn: F) =>
    (...args: Parameters<F>) => {
      const i = planned.findIndex((p) => p.fn === name && p.match(args[0]));
      if (i >= 0) {
        const { code } = planned.splice(i, 1)[0];
        throw Object.assign(new Error(`${code}: simulated, ${name} ${String(args[0])}`), { code, syscall: name });
      }
      return fn(...args);
    };
  const wrapped = {
    ...real,
    openSync: failing('openSync', real.openSync),
    readSync: failing('readSync', real.readSync),
  };
  return { ...wrapped, default: wrapped };
});

// Calls that change a directory run off the event loop (fs-files.ts, inDirAsync).
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const failing =
    <F extends (...args: never[]) => Promise<unknown>>(name: string, fn: F) =>
    async (...args: Parameters<F>) => {
      const i = planned.findIndex((p) => p.fn === name && p.match(args[0]));
      if (i >= 0) {
        const { code } = planned.splice(i, 1)[0];
        throw Object.assign(new Error(`${code}: simulated, ${name} ${String(args[0])}`), { code, syscall: name });
      }
      return fn(...args);
    };
  const wrapped = { ...real, link: failing('link', real.link), rename: failing('rename', real.rename) };
  return { ...wrapped, default: wrapped };
});

const fail = (fn: string, code: string, match: (target: unknown) => boolean = () => true) => planned.push({ fn, match, code });

afterEach(() => {
  planned.length = 0;
});

describe('FsObjectStore on a failing disk', () => {
  let root: string;
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it.each(['EIO', 'ENOSPC', 'EMFILE', 'ENFILE', 'EBUSY', 'EAGAIN'])('throws StorageUnavailableError for %s, on writes and reads', async (code) => {
    root = await mkdtemp(path.join(tmpdir(), 'rask-fs-fail-'));
    const store = new FsObjectStore(root);
    fail('link', code);
    const write = await store.putIfAbsent('k', 'v').catch((e: unknown) => e);
    expect(write).toBeInstanceOf(StorageUnavailableError);
    expect(write).not.toBeInstanceOf(ConditionFailedError);
    expect((write as Error).message).not.toContain(root);
    expect(await store.head('k')).toBeUndefined(); // nothing written
    await store.putIfAbsent('k', 'v');
    fail('openSync', code, (p) => String(p).endsWith(`${path.sep}k`));
    await expect(store.get('k')).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it('passes other errors through unchanged', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'rask-fs-fail-'));
    const store = new FsObjectStore(root);
    fail('link', 'EACCES');
    await expect(store.putIfAbsent('k', 'v')).rejects.toMatchObject({ code: 'EACCES' });
  });
});

describe('the local server on a failing disk', () => {
  it.each(['EIO', 'ENOSPC'])('answers %s with 503 / code 17 and Retry-After, and the retry succeeds', async (code) => {
    const server = await startTestServer({ RASK_LOG_LEVEL: 'silent' });
    try {
      // The namespace record's put-if-absent: a hard link into the registry's tree.
      fail('link', code, (p) => String(p).includes(`${path.sep}registry${path.sep}`));
      const res = await server.request('POST', '/v1/namespace/disk/create', JSON.stringify({ id: ['disk'] }), { 'content-type': 'application/json' });
      expect(res.status).toBe(503);
      expect(res.json()).toMatchObject({ code: 17 });
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.text).not.toContain(tmpdir());
      const again = await server.request('POST', '/v1/namespace/disk/create', JSON.stringify({ id: ['disk'] }), { 'content-type': 'application/json' });
      expect(again.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
