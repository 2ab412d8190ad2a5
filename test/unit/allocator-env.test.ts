/**
 * The allocator settings every LanceDB process starts with (lib/config.ts, NATIVE_ALLOCATOR_ENV;
 * issue #36): `npm start` carries the same ones, this glibc accepts them, and the local server can
 * tell which it started without.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { missingAllocatorSettings, NATIVE_ALLOCATOR_ENV } from '../../lib/config.js';

const LOADER = '/lib64/ld-linux-x86-64.so.2';

describe('the native allocator settings', () => {
  it('are what `npm start` puts in the environment', () => {
    const start: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts.start;
    const assignments = Object.fromEntries(
      start
        .split(/\s+/)
        .filter((word) => /^[A-Z_]+=/.test(word))
        .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
    );
    expect(assignments).toEqual(NATIVE_ALLOCATOR_ENV);
  });

  it('names the settings a process started without, and none when all are set', () => {
    expect(missingAllocatorSettings({})).toEqual(Object.entries(NATIVE_ALLOCATOR_ENV).map(([k, v]) => `${k}=${v}`));
    expect(missingAllocatorSettings({ ...NATIVE_ALLOCATOR_ENV })).toEqual([]);
    expect(missingAllocatorSettings({ ...NATIVE_ALLOCATOR_ENV, MALLOC_ARENA_MAX: '8' })).toEqual(['MALLOC_ARENA_MAX=2']);
  });

  // The dynamic loader ignores a tunable it does not know, silently: ask this glibc what it read.
  it.skipIf(!existsSync(LOADER))('are read by this glibc (ld.so --list-tunables)', () => {
    const listed = (env: Record<string, string>) => {
      const out = spawnSync(LOADER, ['--list-tunables'], { env, encoding: 'utf8' });
      expect(out.status).toBe(0);
      return /glibc\.malloc\.mmap_threshold: (0x[0-9a-f]+)/.exec(out.stdout)?.[1];
    };
    const threshold = /mmap_threshold=(\d+)/.exec(NATIVE_ALLOCATOR_ENV.GLIBC_TUNABLES)?.[1];
    expect(threshold).toBeDefined();
    expect(listed({ GLIBC_TUNABLES: NATIVE_ALLOCATOR_ENV.GLIBC_TUNABLES })).toBe(`0x${Number(threshold).toString(16)}`);
    expect(listed({})).toBe('0x0');
  });
});
