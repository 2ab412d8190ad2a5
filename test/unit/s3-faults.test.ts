/**
 * The fault injector itself (test/support/s3-faults.ts): it must run inside the SDK's retry
 * loop (each SDK retry is a new attempt it sees), "after apply" faults must leave the write in
 * the fake, and the same seed must give the same faults.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { describe, expect, it } from 'vitest';
import { createS3Fake } from '../support/s3-fake.js';
import { createS3Faults, faultyS3Client, interceptS3Clients, type Fault } from '../support/s3-faults.js';

/** Three attempts without backoff, so these tests take no time. */
const quickRetries = { retryStrategy: new ConfiguredRetryStrategy(3, 0) };

const put = (key: string, extra: object = {}) =>
  new PutObjectCommand({ Bucket: 'b', Key: key, Body: Buffer.from(`body of ${key}`), ...extra });

describe('S3 fault injection over the S3 fake', () => {
  it('serves commands from the fake through the client stack (no stub)', async () => {
    const fake = createS3Fake();
    const client = faultyS3Client(fake, undefined, quickRetries);
    const res = await client.send(put('k'));
    expect(res.ETag).toMatch(/^"[0-9a-f]{32}"$/);
    const got = await client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).toString()).toBe('body of k');
    expect(fake.mock.calls()).toHaveLength(0); // the stub's send was never involved
  });

  it.each<[string, Fault]>([
    ['503 SlowDown', { kind: 'slowdown' }],
    ['500 InternalError', { kind: 'internal' }],
    ['a timeout', { kind: 'timeout' }],
    ['a reset', { kind: 'reset' }],
  ])('lets the SDK retry over %s, one attempt per retry', async (_name, fault) => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 1 });
    faults.place((r) => r.op === 'PUT', fault, 2);
    const client = faultyS3Client(fake, faults, quickRetries);
    const res = await client.send(put('k'));
    expect(res.$metadata.attempts).toBe(3);
    expect(faults.attempts().map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(fake.requests()).toHaveLength(1); // the two faulted attempts never reached the fake
  });

  it('gives up after the SDK`s attempts with the last fault, nothing written', async () => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 1 });
    faults.place(() => true, { kind: 'slowdown' }, 3);
    const client = faultyS3Client(fake, faults, quickRetries);
    await expect(client.send(put('k'))).rejects.toMatchObject({ name: 'SlowDown', $metadata: { httpStatusCode: 503, attempts: 3 } });
    expect(fake.bucketContents('b').size).toBe(0);
  });

  it('does not retry a 409 ConditionalRequestConflict (the SDK calls it a client error)', async () => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 1 });
    faults.place((r) => r.conditional, { kind: 'conflict' });
    const client = faultyS3Client(fake, faults, quickRetries);
    await expect(client.send(put('k', { IfNoneMatch: '*' }))).rejects.toMatchObject({
      name: 'ConditionalRequestConflict',
      $metadata: { httpStatusCode: 409, attempts: 1 },
    });
    expect(fake.bucketContents('b').size).toBe(0);
  });

  it('applies the write, then loses the answer: the SDK`s retry of a put-if-absent meets 412 from its own first attempt', async () => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 1 });
    faults.place((r) => r.key === 'k', { kind: 'timeout', afterApply: true });
    const client = faultyS3Client(fake, faults, quickRetries);
    await expect(client.send(put('k', { IfNoneMatch: '*' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 412, attempts: 2 } });
    expect(fake.bucketContents('b').get('k')?.toString()).toBe('body of k');
  });

  it('places a fault only on the request its predicate picks', async () => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 1 });
    faults.place((r) => r.key === 'second', { kind: 'internal' });
    const client = faultyS3Client(fake, faults, { maxAttempts: 1 });
    await client.send(put('first'));
    await expect(client.send(put('second'))).rejects.toMatchObject({ name: 'InternalError' });
    expect(faults.injected().map((f) => f.request.key)).toEqual(['second']);
    expect(faults.pending()).toBe(0);
  });

  it('draws the same faults from the same seed, at about the asked probability', async () => {
    const run = async (seed: number) => {
      const fake = createS3Fake();
      const faults = createS3Faults({ seed, p: 0.2 });
      const client = faultyS3Client(fake, faults, { maxAttempts: 1 });
      for (let i = 0; i < 200; i++) await client.send(put(`k${i}`, i % 2 ? { IfNoneMatch: '*' } : {})).catch(() => undefined);
      return faults.injected().map((f) => `${f.request.key}:${f.fault.kind}:${f.fault.afterApply === true}`);
    };
    const a = await run(7);
    expect(await run(7)).toEqual(a);
    expect(await run(8)).not.toEqual(a);
    expect(a.length).toBeGreaterThan(20);
    expect(a.length).toBeLessThan(65);
    // 409 only where S3 can answer it: on conditional writes (odd keys here).
    for (const f of a.filter((x) => x.includes(':conflict:'))) expect(Number(f.split(':')[0].slice(1)) % 2).toBe(1);
  });

  it('reaches clients the code under test builds itself, until uninstalled', async () => {
    const fake = createS3Fake();
    const faults = createS3Faults({ seed: 1 });
    faults.place(() => true, { kind: 'internal' });
    const uninstall = interceptS3Clients(fake, faults);
    try {
      const own = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, retryStrategy: quickRetries.retryStrategy });
      const res = await own.send(put('k'));
      expect(res.$metadata.attempts).toBe(2);
      expect(fake.bucketContents('b').has('k')).toBe(true);
    } finally {
      uninstall();
    }
    expect(Object.hasOwn(S3Client.prototype, 'send')).toBe(false);
  });
});
