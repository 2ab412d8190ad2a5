import 'aws-sdk-client-mock-vitest/extend';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lib/adapters/aws/s3-object-store.js';
import { FsObjectStore } from '../../lib/adapters/local/fs-object-store.js';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { StorageUnavailableError } from '../../lib/errors.js';
import { ConditionFailedError } from '../../lib/ports/object-store.js';
import { startAwsHttpFake } from '../support/aws-http-fake.js';
import { createS3Fake, s3Error, type S3Fake } from '../support/s3-fake.js';
import { createS3Faults, faultyS3Client } from '../support/s3-faults.js';
import { lostRace, runFailingStoreContract, runObjectStoreContract } from './object-store.suite.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CAS_WORKER = fileURLToPath(new URL('../support/fs-cas-worker.ts', import.meta.url));

async function tempRoot(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'rask-object-store-'));
}

runObjectStoreContract('MemoryObjectStore', async () => ({ store: new MemoryObjectStore() }));

runObjectStoreContract('FsObjectStore', async () => {
  const root = await tempRoot();
  return { store: new FsObjectStore(root), cleanup: () => rm(root, { recursive: true, force: true }) };
});

runObjectStoreContract('S3ObjectStore over the S3 fake, with a prefix', async () => {
  const fake = createS3Fake();
  return {
    store: new S3ObjectStore({ client: fake.client, bucket: 'contract', prefix: 'tenant-a' }),
    cleanup: async () => fake.mock.restore(),
  };
});

runObjectStoreContract('S3ObjectStore over the S3 fake, without a prefix', async () => {
  const fake = createS3Fake();
  return { store: new S3ObjectStore({ client: fake.client, bucket: 'contract' }), cleanup: async () => fake.mock.restore() };
});

// The same contract over real HTTP, against the S3 the deploy suite and the s3:// data-plane test
// run on: its conditional writes, byte-order listing and continuation are what they rely on.
runObjectStoreContract('S3ObjectStore over HTTP, against the loopback AWS fake', async () => {
  const fake = await startAwsHttpFake();
  const client = new S3Client({ region: 'us-east-1', endpoint: fake.endpoint, forcePathStyle: true, credentials: fake.principal('contract') });
  return {
    store: new S3ObjectStore({ client, bucket: 'contract', prefix: 'tenant-a' }),
    cleanup: async () => {
      client.destroy();
      await fake.close();
    },
  };
});

// S3 failing as S3 fails, inside the SDK's retry loop (issue #35): with the SDK's retries (three
// attempts, no backoff so the suite is quick) and with them spent (one attempt).
for (const maxAttempts of [3, 1]) {
  runFailingStoreContract(`S3ObjectStore, ${maxAttempts} SDK attempt(s)`, async () => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 35 });
    const client = faultyS3Client(fake, faults, { retryStrategy: new ConfiguredRetryStrategy(maxAttempts, 0) });
    return {
      store: new S3ObjectStore({ client, bucket: 'contract', prefix: 'tenant-a', conflictBackoffMs: 1 }),
      faults,
      maxAttempts,
      cleanup: async () => fake.mock.restore(),
    };
  });
}

describe('MemoryObjectStore', () => {
  it('hands out copies, so mutating a returned body does not change the stored object', async () => {
    const store = new MemoryObjectStore();
    await store.put('k', 'abc');
    (await store.get('k'))!.body.fill(0);
    expect((await store.get('k'))?.body.toString()).toBe('abc');
  });
});

describe('S3ObjectStore', () => {
  let fake: S3Fake;
  let store: S3ObjectStore;

  beforeEach(() => {
    fake = createS3Fake();
    store = new S3ObjectStore({ client: fake.client, bucket: 'b', prefix: 'tenant-a' });
  });
  afterEach(() => fake.mock.restore());

  it('stores keys under the prefix (normalised to end in /) and hides everything else', async () => {
    expect(store.url).toBe('s3://b/tenant-a/');
    expect(new S3ObjectStore({ client: fake.client, bucket: 'b', prefix: 'p/' }).url).toBe('s3://b/p/');
    expect(new S3ObjectStore({ client: fake.client, bucket: 'b' }).url).toBe('s3://b/');
    await store.put('x/y', 'v');
    await fake.client.send(new PutObjectCommand({ Bucket: 'b', Key: 'tenant-ab/z', Body: 'other tenant' }));
    expect([...fake.bucketContents('b').keys()]).toEqual(['tenant-a/x/y', 'tenant-ab/z']);
    expect((await store.list({})).objects.map((o) => o.key)).toEqual(['x/y']);
    expect((await store.list({ delimiter: '/' })).commonPrefixes).toEqual(['x/']);
  });

  it('sends If-None-Match: * on create and If-Match: <etag> on replace and delete', async () => {
    const { etag } = await store.putIfAbsent('k', 'v1');
    expect(fake.mock).toHaveReceivedCommandWith(PutObjectCommand, { Bucket: 'b', Key: 'tenant-a/k', IfNoneMatch: '*' });
    const second = await store.putIfMatch('k', 'v2', etag);
    expect(fake.mock).toHaveReceivedLastCommandWith(PutObjectCommand, { Key: 'tenant-a/k', IfMatch: etag });
    await store.deleteIfMatch('k', second.etag);
    expect(fake.mock).toHaveReceivedCommandExactlyOnceWith(DeleteObjectCommand, { Key: 'tenant-a/k', IfMatch: second.etag });
  });

  it('sends no condition on unconditional put and delete', async () => {
    await store.put('k', 'v');
    await store.delete('k');
    const put = fake.mock.commandCalls(PutObjectCommand)[0].args[0].input;
    const del = fake.mock.commandCalls(DeleteObjectCommand)[0].args[0].input;
    expect(put).not.toHaveProperty('IfMatch');
    expect(put).not.toHaveProperty('IfNoneMatch');
    expect(del).not.toHaveProperty('IfMatch');
  });

  it('retries a 409 ConditionalRequestConflict (nothing was written) on every conditional write, never calls it a lost race', async () => {
    fake.injectConflict('tenant-a/k');
    const { etag } = await store.putIfAbsent('k', 'v1');

    fake.injectConflict('tenant-a/k');
    const second = await store.putIfMatch('k', 'v2', etag);
    expect((await store.get('k'))?.body.toString()).toBe('v2');

    fake.injectConflict('tenant-a/k');
    await store.deleteIfMatch('k', second.etag);
    expect(await store.head('k')).toBeUndefined();
    // Each write: the 409, then the retry that landed.
    expect(fake.requests().filter((r) => r.conditional).map((r) => `${r.op}:${r.failed}`)).toEqual([
      'PUT:true',
      'PUT:false',
      'PUT:true',
      'PUT:false',
      'DELETE:true',
      'DELETE:false',
    ]);
  });

  it('passes errors that are not the storage failing through unchanged, and answers those that are as StorageUnavailableError', async () => {
    const denied = s3Error('AccessDenied', 403, 'Access Denied');
    fake.injectFailure('tenant-a/k', denied);
    await expect(store.putIfAbsent('k', 'v')).rejects.toBe(denied);
    const unavailable = s3Error('ServiceUnavailable', 503, 'Please reduce your request rate.');
    fake.injectFailure('tenant-a/k', unavailable);
    const error = await store.putIfMatch('k', 'v', '"x"').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as Error).cause).toBe(unavailable);
    expect((error as Error).message).not.toContain('tenant-a');
    // 501: S3 does not implement what we sent; no retry helps, so it stays our bug (500 / 18).
    const unsupported = s3Error('NotImplemented', 501, 'A header you provided implies functionality that is not implemented');
    fake.injectFailure('tenant-a/k', unsupported);
    await expect(store.put('k', 'v')).rejects.toBe(unsupported);
  });

  it('pages through more than 1000 keys with continuation tokens, capping MaxKeys at 1000', async () => {
    const keys = Array.from({ length: 2100 }, (_, i) => `many/${String(i).padStart(5, '0')}`);
    await Promise.all(keys.map((key) => store.put(key, 'x')));

    const all = await store.list({ prefix: 'many/' });
    expect(all.objects.map((o) => o.key)).toEqual(keys);
    expect(all.truncated).toBe(false);
    expect(fake.mock).toHaveReceivedCommandTimes(ListObjectsV2Command, 3);

    fake.mock.resetHistory();
    const some = await store.list({ prefix: 'many/', startAfter: 'many/00099', limit: 1500 });
    expect(some.objects.map((o) => o.key)).toEqual(keys.slice(100, 1600));
    expect(some.truncated).toBe(true);
    expect(fake.mock).toHaveReceivedCommandTimes(ListObjectsV2Command, 2);
    expect(fake.mock).toHaveReceivedNthCommandWith(ListObjectsV2Command, 1, {
      Prefix: 'tenant-a/many/',
      StartAfter: 'tenant-a/many/00099',
      MaxKeys: 1000,
    });
    const second = fake.mock.commandCalls(ListObjectsV2Command)[1].args[0].input;
    expect(second).toMatchObject({ MaxKeys: 500, StartAfter: undefined });
    expect(second.ContinuationToken).toEqual(expect.any(String));
  });
});

describe('S3 fake', () => {
  let fake: S3Fake;
  beforeEach(() => {
    fake = createS3Fake();
  });
  afterEach(() => fake.mock.restore());

  it('keeps buckets apart and resets them', async () => {
    await fake.client.send(new PutObjectCommand({ Bucket: 'one', Key: 'k', Body: '1' }));
    await fake.client.send(new PutObjectCommand({ Bucket: 'two', Key: 'k', Body: '2' }));
    expect(fake.bucketContents('one').get('k')?.toString()).toBe('1');
    expect(fake.bucketContents('two').get('k')?.toString()).toBe('2');
    fake.reset();
    expect(fake.bucketContents('one').size).toBe(0);
    expect(fake.mock.commandCalls(PutObjectCommand)).toHaveLength(0);
  });

  it('fails GetObject of a missing key with NoSuchKey (404)', async () => {
    const error = await fake.client.send(new GetObjectCommand({ Bucket: 'b', Key: 'missing' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoSuchKey);
    expect(error).toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });

  it('copies objects across buckets, honouring If-None-Match on the destination', async () => {
    await fake.client.send(new PutObjectCommand({ Bucket: 'src', Key: 'a b/é.json', Body: '{"v":1}' }));
    const copy = () =>
      fake.client.send(
        new CopyObjectCommand({ Bucket: 'dst', Key: 'copy.json', CopySource: `src/${encodeURIComponent('a b/é.json')}`, IfNoneMatch: '*' }),
      );
    await copy();
    expect(fake.bucketContents('dst').get('copy.json')?.toString()).toBe('{"v":1}');
    await expect(copy()).rejects.toMatchObject({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
  });

  it('rejects commands it does not fake instead of resolving to undefined', async () => {
    const { HeadBucketCommand } = await import('@aws-sdk/client-s3');
    await expect(fake.client.send(new HeadBucketCommand({ Bucket: 'b' }))).rejects.toThrow(/not supported/);
  });
});

describe('FsObjectStore', () => {
  let root: string;
  let store: FsObjectStore;

  beforeEach(async () => {
    root = await tempRoot();
    store = new FsObjectStore(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('keeps each object as a real file at root/<key>', async () => {
    await store.put('ds/data/part 0.lance', Buffer.from([1, 2, 3]));
    expect(await readFile(path.join(root, 'ds', 'data', 'part 0.lance'))).toEqual(Buffer.from([1, 2, 3]));
    expect(store.url).toBe(`file://${root}`);
  });

  it('requires an absolute root', () => {
    expect(() => new FsObjectStore('relative/dir')).toThrow(/absolute/);
  });

  it.each(['../escape', 'a/../../b', '/abs', 'a//b', 'a/', '', './a', 'a/./b', '.tmp/x', '.locks/y'])(
    'refuses the key %j with a plain error',
    async (key) => {
      for (const attempt of [() => store.put(key, 'v'), () => store.putIfAbsent(key, 'v'), () => store.get(key)]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        expect(error).not.toBeInstanceOf(ConditionFailedError);
      }
    },
  );

  it('refuses a key that would be both an object and a directory', async () => {
    await store.put('a', 'file');
    const under = await store.put('a/b', 'v').catch((e: unknown) => e);
    expect(under).toBeInstanceOf(Error);
    expect(under).not.toBeInstanceOf(ConditionFailedError);
    await store.put('c/d', 'v');
    const over = await store.putIfAbsent('c', 'v').catch((e: unknown) => e);
    expect(over).toBeInstanceOf(Error);
    expect(over).not.toBeInstanceOf(ConditionFailedError);
  });

  it('treats a directory as a missing key', async () => {
    await store.put('dir/k', 'v');
    expect(await store.get('dir')).toBeUndefined();
    expect(await store.head('dir')).toBeUndefined();
    expect(await lostRace(store.putIfMatch('dir', 'v', '"x"'))).toBe('missing');
  });

  it('never lists its reserved temp and lock areas', async () => {
    const { etag } = await store.putIfAbsent('k', 'v1');
    await store.putIfMatch('k', 'v2', etag);
    await writeFile(path.join(root, '.tmp', 'leftover-from-a-crash'), 'junk');
    await writeFile(path.join(root, '.locks', 'stray.lock'), '');
    expect((await store.list({})).objects.map((o) => o.key)).toEqual(['k']);
    expect(await store.list({ delimiter: '/' })).toMatchObject({ commonPrefixes: [] });
    expect((await store.list({ prefix: '.' })).objects).toEqual([]);
    expect((await store.list({ prefix: '.tmp/' })).objects).toEqual([]);
  });

  it('lists no common prefix for empty directories and prunes directories emptied by deletes', async () => {
    await mkdir(path.join(root, 'empty', 'deeper'), { recursive: true });
    await store.put('p/q/r', 'v');
    expect((await store.list({ delimiter: '/' })).commonPrefixes).toEqual(['p/']);
    await store.delete('p/q/r');
    await expect(stat(path.join(root, 'p'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(root)).isDirectory()).toBe(true);
    expect(await store.list({ delimiter: '/' })).toEqual({ objects: [], commonPrefixes: [], truncated: false });
  });

  it('breaks a lock left behind by a crashed process', async () => {
    const { etag } = await store.putIfAbsent('k', 'v1');
    const lock = store.lockPath('k');
    await mkdir(path.dirname(lock), { recursive: true });
    await writeFile(lock, '');
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lock, longAgo, longAgo);
    const started = Date.now();
    await store.putIfMatch('k', 'v2', etag);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await store.get('k'))?.body.toString()).toBe('v2');
  });

  it('waits while another process holds the lock', async () => {
    const { etag } = await store.putIfAbsent('k', 'v1');
    const lock = store.lockPath('k');
    await mkdir(path.dirname(lock), { recursive: true });
    await writeFile(lock, '');
    let done = false;
    const write = store.putIfMatch('k', 'v2', etag).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);
    expect((await store.get('k'))?.body.toString()).toBe('v1');
    await rm(lock);
    await write;
    expect((await store.get('k'))?.body.toString()).toBe('v2');
  });

  it('converges 8 separate processes each doing one CAS increment to exactly 8', async () => {
    const workers = Array.from({ length: 8 }, () => startCasWorker(root, 'counters/shared'));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.go();
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect((await store.get('counters/shared'))?.body.toString()).toBe('8');
    const attempts = results.map((r) => (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { attempts: number }).attempts);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
  });
});

/** A worker process that has loaded and waits for `go()` before racing, so all 8 start together. */
function startCasWorker(root: string, key: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', CAS_WORKER, root, key], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.startsWith('ready\n')) resolve();
    });
    void done.then((r) => reject(new Error(`CAS worker exited (${r.code}) before it was ready: ${r.stderr}`)), reject);
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}
