/**
 * A stateful S3 stand-in for tests: aws-sdk-client-mock intercepts `send`, and the handlers below
 * keep real buckets in memory and enforce what S3 enforces (conditional writes, byte-order
 * listing, pagination). Stubs that only return canned responses cannot show that a CAS loop
 * converges or that pagination has no gaps; this can.
 *
 * Each handler does its condition check and its write with no `await` in between, so concurrent
 * requests behave like S3's "first to finish wins".
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  ListObjectsV2Command,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type CopyObjectCommandInput,
  type DeleteObjectCommandInput,
  type GetObjectCommandInput,
  type HeadObjectCommandInput,
  type ListObjectVersionsCommandInput,
  type ListObjectsV2CommandInput,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { sdkStreamMixin } from '@smithy/util-stream';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';

interface FakeObject {
  readonly body: Buffer;
  readonly etag: string;
  readonly lastModified: Date;
}

/** One version of a key in a versioned bucket (every bucket of the fake is versioned). */
interface FakeVersion {
  readonly versionId: string;
  readonly lastModified: Date;
  /** Absent: a delete marker. */
  readonly object?: FakeObject;
}

export interface S3Fake {
  /** Hand this to the code under test. */
  readonly client: S3Client;
  /** The underlying stub, for call assertions (`expect(fake.mock).toHaveReceivedCommandWith(…)`). */
  readonly mock: AwsClientStub<S3Client>;
  /** A snapshot of one bucket, keys in S3 listing order. */
  bucketContents(bucket: string): Map<string, Buffer>;
  /** The next write (Put/Delete/Copy destination) to `key` fails with 409 ConditionalRequestConflict. */
  injectConflict(key: string, bucket?: string): void;
  /** The next write to `key` fails with `error` (any bucket unless one is given). */
  injectFailure(key: string, error: Error, bucket?: string): void;
  /**
   * What a lifecycle rule's NoncurrentVersionExpiration does: forgets every noncurrent version
   * (and delete marker) of `bucket` that became noncurrent before `before`.
   */
  expireNoncurrent(bucket: string, before: Date): void;
  /** Empties every bucket, drops pending injected failures and forgets recorded calls. */
  reset(): void;
  /**
   * Every object write that succeeded (PUT, copy), in order, with its version id and a sequencer:
   * what S3 Event Notifications would report as "Object Created" (reset clears it).
   */
  created(): readonly ObjectCreatedRecord[];
  /**
   * Every request handled since the last `clearRequests()`, in the order they started, each with
   * the logical instants (a counter, not a clock) at which it started and finished.
   */
  requests(): readonly S3Request[];
  clearRequests(): void;
  /** Replaces the latency option (undefined: none), e.g. to seed fast and measure slow. */
  setLatency(latency: ((op: S3Op) => number) | undefined): void;
  /**
   * Serves one command by name (`PutObjectCommand`, …) as the stub would: for clients whose own
   * middleware stack (retries, fault injection) must run, see test/support/s3-faults.ts.
   */
  serve(commandName: string, input: object): Promise<{ $metadata: object }>;
}

export interface ObjectCreatedRecord {
  readonly bucket: string;
  readonly key: string;
  readonly versionId: string;
  readonly sequencer: string;
  readonly time: Date;
}

/** The S3 request kinds the fake serves, named as S3's pricing names them. */
export type S3Op = 'GET' | 'HEAD' | 'PUT' | 'COPY' | 'DELETE' | 'LIST';

export interface S3Request {
  readonly op: S3Op;
  readonly bucket: string;
  readonly key: string;
  /** If-None-Match / If-Match / CopySourceIfMatch was sent. */
  readonly conditional: boolean;
  /** LIST only: the MaxKeys asked for. */
  readonly maxKeys?: number;
  /** The request failed (412, 404, 409, …). */
  failed: boolean;
  /** Logical instants: every start and every end takes the next number. */
  readonly start: number;
  end: number;
}

export interface S3FakeOptions {
  /**
   * What to intercept: by default a fresh client of our own, so fakes in different tests cannot
   * see each other. Pass the S3Client class to intercept clients the code under test constructs.
   */
  readonly target?: S3Client | typeof S3Client;
  /**
   * Milliseconds each request waits before it is served (e.g. 15 for GET/HEAD, 30 for writes),
   * so that requests sent together overlap and requests sent one after another do not, as on S3.
   */
  readonly latency?: (op: S3Op) => number;
}

export function createS3Fake(options: S3FakeOptions = {}): S3Fake {
  const client = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' } });
  const mock = mockClient(options.target ?? client);
  const buckets = new Map<string, Map<string, FakeObject>>();
  /** Every bucket's versions by key, oldest first. */
  const versions = new Map<string, Map<string, FakeVersion[]>>();
  let versionSeq = 0;
  const versionsOf = (name: string, key: string) => {
    let byKey = versions.get(name);
    if (byKey === undefined) versions.set(name, (byKey = new Map()));
    let list = byKey.get(key);
    if (list === undefined) byKey.set(key, (list = []));
    return list;
  };
  const newVersion = (name: string, key: string, object: FakeObject | undefined) => {
    const versionId = `v${String(++versionSeq).padStart(10, '0')}`;
    versionsOf(name, key).push({ versionId, lastModified: object?.lastModified ?? new Date(), ...(object ? { object } : {}) });
    return versionId;
  };
  const createdLog: ObjectCreatedRecord[] = [];
  const failures: { bucket?: string; key: string; error: Error }[] = [];
  const log: S3Request[] = [];
  let latency = options.latency;
  let instant = 0;
  /** Serves one request: records when it starts and ends, after the configured latency. */
  const traced =
    <I extends { Bucket?: string; Key?: string; Prefix?: string }, O>(op: S3Op, handler: (input: I) => Promise<O>) =>
    async (input: I): Promise<O> => {
      const cond = input as { IfNoneMatch?: string; IfMatch?: string; CopySourceIfMatch?: string };
      const entry: S3Request = {
        op,
        bucket: input.Bucket ?? '',
        key: input.Key ?? input.Prefix ?? '',
        conditional: cond.IfNoneMatch !== undefined || cond.IfMatch !== undefined || cond.CopySourceIfMatch !== undefined,
        maxKeys: (input as { MaxKeys?: number }).MaxKeys,
        failed: false,
        start: ++instant,
        end: 0,
      };
      log.push(entry);
      const ms = latency?.(op) ?? 0;
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
      try {
        return await handler(input);
      } catch (err) {
        entry.failed = true;
        throw err;
      } finally {
        entry.end = ++instant;
      }
    };

  const bucket = (name: string | undefined) => {
    if (!name) throw s3Error('InvalidBucketName', 400, 'Bucket is required');
    let objects = buckets.get(name);
    if (objects === undefined) buckets.set(name, (objects = new Map()));
    return objects;
  };
  const requireKey = (key: string | undefined) => {
    if (!key) throw s3Error('InvalidArgument', 400, 'Key is required');
    return key;
  };
  const takeFailure = (bucketName: string, key: string) => {
    const i = failures.findIndex((f) => f.key === key && (f.bucket === undefined || f.bucket === bucketName));
    if (i >= 0) throw failures.splice(i, 1)[0].error;
  };
  const store = (objects: Map<string, FakeObject>, key: string, body: Buffer) => {
    const object = { body, etag: `"${createHash('md5').update(body).digest('hex')}"`, lastModified: new Date() };
    objects.set(key, object);
    const name = [...buckets].find(([, o]) => o === objects)![0];
    const versionId = newVersion(name, key, object);
    // The versioning counter grows with every write, so it serves as S3's per-key sequencer too.
    createdLog.push({ bucket: name, key, versionId, sequencer: versionId.slice(1).padStart(16, '0'), time: object.lastModified });
    return object;
  };

  // Anything not faked below fails loudly instead of resolving to undefined.
  mock.onAnyCommand().callsFake(async (input) => {
    throw new Error(`S3 fake: command not supported (input ${JSON.stringify(input)})`);
  });
  /** Each handler, by command name, for `serve` (clients whose send is not stubbed). */
  const served = new Map<string, (input: never) => Promise<{ $metadata: object }>>();
  const on = <I extends object>(command: { name: string }, handler: (input: I) => Promise<{ $metadata: object }>) => {
    served.set(command.name, handler as (input: never) => Promise<{ $metadata: object }>);
    mock.on(command as Parameters<typeof mock.on>[0]).callsFake(handler as never);
  };

  on(PutObjectCommand, traced('PUT', async (input: PutObjectCommandInput) => {
    const body = await toBuffer(input.Body);
    const objects = bucket(input.Bucket);
    const key = requireKey(input.Key);
    takeFailure(input.Bucket!, key);
    checkWriteConditions(objects.get(key), input);
    const object = store(objects, key, body);
    return { ETag: object.etag, $metadata: { httpStatusCode: 200 } };
  }));

  on(CopyObjectCommand, traced('COPY', async (input: CopyObjectCommandInput) => {
    const objects = bucket(input.Bucket);
    const key = requireKey(input.Key);
    const source = parseCopySource(input.CopySource);
    const original = bucket(source.bucket).get(source.key);
    if (original === undefined) throw noSuchKey();
    if (input.CopySourceIfMatch !== undefined && input.CopySourceIfMatch !== original.etag) throw preconditionFailed();
    takeFailure(input.Bucket!, key);
    checkWriteConditions(objects.get(key), input);
    const object = store(objects, key, original.body);
    return { CopyObjectResult: { ETag: object.etag, LastModified: object.lastModified }, $metadata: { httpStatusCode: 200 } };
  }));

  on(GetObjectCommand, traced('GET', async (input: GetObjectCommandInput) => {
    const current = bucket(input.Bucket).get(requireKey(input.Key));
    const object =
      input.VersionId === undefined ? current : versionsOf(input.Bucket!, input.Key!).find((v) => v.versionId === input.VersionId)?.object;
    if (object === undefined) throw noSuchKey();
    return {
      Body: sdkStreamMixin(Readable.from([Buffer.from(object.body)])),
      ETag: object.etag,
      ContentLength: object.body.length,
      LastModified: object.lastModified,
      $metadata: { httpStatusCode: 200 },
    };
  }));

  on(HeadObjectCommand, traced('HEAD', async (input: HeadObjectCommandInput) => {
    const object = bucket(input.Bucket).get(requireKey(input.Key));
    // A HEAD response has no body, so S3 cannot name the error; the SDK reports "NotFound".
    if (object === undefined) throw new NotFound({ $metadata: { httpStatusCode: 404 }, message: 'UnknownError' });
    return { ETag: object.etag, ContentLength: object.body.length, LastModified: object.lastModified, $metadata: { httpStatusCode: 200 } };
  }));

  on(DeleteObjectCommand, traced('DELETE', async (input: DeleteObjectCommandInput) => {
    const objects = bucket(input.Bucket);
    const key = requireKey(input.Key);
    takeFailure(input.Bucket!, key);
    if (input.IfMatch !== undefined) {
      const current = objects.get(key);
      if (current === undefined) throw noSuchKey();
      if (input.IfMatch !== '*' && input.IfMatch !== current.etag) throw preconditionFailed();
    }
    if (objects.delete(key)) newVersion(input.Bucket!, key, undefined);
    return { $metadata: { httpStatusCode: 204 } };
  }));

  on(ListObjectsV2Command, traced('LIST', async (input: ListObjectsV2CommandInput) => {
    const objects = bucket(input.Bucket);
    const prefix = input.Prefix ?? '';
    const maxKeys = Math.min(input.MaxKeys ?? 1000, 1000);
    // The token is the last entry returned; decoded, it is just an exclusive start like StartAfter.
    const start = input.ContinuationToken !== undefined ? Buffer.from(input.ContinuationToken, 'base64url').toString() : input.StartAfter;
    const after = (s: string) => start === undefined || byteCompare(s, start) > 0;

    const contents: { Key: string; ETag: string; Size: number; LastModified: Date }[] = [];
    const commonPrefixes: string[] = [];
    let last: string | undefined;
    let truncated = false;
    for (const key of [...objects.keys()].sort(byteCompare)) {
      if (!key.startsWith(prefix) || !after(key)) continue;
      const cut = input.Delimiter ? key.indexOf(input.Delimiter, prefix.length) : -1;
      const common = cut >= 0 ? key.slice(0, cut + input.Delimiter!.length) : undefined;
      if (common !== undefined && (common === commonPrefixes.at(-1) || !after(common))) continue;
      if (contents.length + commonPrefixes.length >= maxKeys) {
        truncated = true;
        break;
      }
      if (common !== undefined) {
        commonPrefixes.push(common);
        last = common;
      } else {
        const object = objects.get(key)!;
        contents.push({ Key: key, ETag: object.etag, Size: object.body.length, LastModified: object.lastModified });
        last = key;
      }
    }
    // Like S3's XML, empty lists are absent rather than [] — callers must cope with undefined.
    return {
      Name: input.Bucket,
      Prefix: input.Prefix,
      Delimiter: input.Delimiter,
      StartAfter: input.StartAfter,
      MaxKeys: maxKeys,
      KeyCount: contents.length + commonPrefixes.length,
      IsTruncated: truncated,
      ContinuationToken: input.ContinuationToken,
      NextContinuationToken: truncated && last !== undefined ? Buffer.from(last).toString('base64url') : undefined,
      Contents: contents.length > 0 ? contents : undefined,
      CommonPrefixes: commonPrefixes.length > 0 ? commonPrefixes.map((Prefix) => ({ Prefix })) : undefined,
      $metadata: { httpStatusCode: 200 },
    };
  }));

  on(ListObjectVersionsCommand, traced('LIST', async (input: ListObjectVersionsCommandInput) => {
    bucket(input.Bucket);
    const prefix = input.Prefix ?? '';
    const maxKeys = Math.min(input.MaxKeys ?? 1000, 1000);
    const byKey = versions.get(input.Bucket!) ?? new Map<string, FakeVersion[]>();
    const out: { key: string; v: FakeVersion; latest: boolean }[] = [];
    let truncated = false;
    for (const key of [...byKey.keys()].sort(byteCompare)) {
      if (!key.startsWith(prefix)) continue;
      if (input.KeyMarker !== undefined && byteCompare(key, input.KeyMarker) < 0) continue;
      const list = [...byKey.get(key)!].reverse();
      let from = 0;
      if (input.KeyMarker !== undefined && key === input.KeyMarker) {
        if (input.VersionIdMarker === undefined) continue;
        from = list.findIndex((v) => v.versionId === input.VersionIdMarker) + 1;
      }
      for (let i = from; i < list.length; i++) {
        if (out.length >= maxKeys) {
          truncated = true;
          break;
        }
        out.push({ key, v: list[i]!, latest: i === 0 });
      }
      if (truncated) break;
    }
    const last = out.at(-1);
    const objects = out.filter((o) => o.v.object);
    const markers = out.filter((o) => !o.v.object);
    return {
      Name: input.Bucket,
      Prefix: input.Prefix,
      MaxKeys: maxKeys,
      IsTruncated: truncated,
      NextKeyMarker: truncated ? last?.key : undefined,
      NextVersionIdMarker: truncated ? last?.v.versionId : undefined,
      // S3 lists LastModified to the second; so does the fake, so code that orders by it copes.
      Versions: objects.length > 0
        ? objects.map((o) => ({ Key: o.key, VersionId: o.v.versionId, IsLatest: o.latest, LastModified: wholeSecond(o.v.lastModified), ETag: o.v.object!.etag, Size: o.v.object!.body.length }))
        : undefined,
      DeleteMarkers: markers.length > 0 ? markers.map((o) => ({ Key: o.key, VersionId: o.v.versionId, IsLatest: o.latest, LastModified: wholeSecond(o.v.lastModified) })) : undefined,
      $metadata: { httpStatusCode: 200 },
    };
  }));

  return {
    client,
    mock,
    expireNoncurrent(name, before) {
      for (const list of versions.get(name)?.values() ?? []) {
        // A version became noncurrent when the next one was written.
        for (let i = list.length - 2; i >= 0; i--) if (list[i + 1]!.lastModified < before) list.splice(i, 1);
      }
    },
    bucketContents(name) {
      const objects = buckets.get(name) ?? new Map<string, FakeObject>();
      return new Map([...objects.keys()].sort(byteCompare).map((key) => [key, Buffer.from(objects.get(key)!.body)]));
    },
    injectConflict(key, bucketName) {
      failures.push({ key, bucket: bucketName, error: s3Error('ConditionalRequestConflict', 409, 'A conflicting operation occurred. Retry the request.') });
    },
    injectFailure(key, error, bucketName) {
      failures.push({ key, bucket: bucketName, error });
    },
    reset() {
      buckets.clear();
      versions.clear();
      createdLog.length = 0;
      failures.length = 0;
      log.length = 0;
      mock.resetHistory();
    },
    requests: () => [...log],
    created: () => [...createdLog],
    clearRequests() {
      log.length = 0;
    },
    setLatency(next) {
      latency = next;
    },
    serve(commandName, input) {
      const handler = served.get(commandName);
      if (handler === undefined) throw new Error(`S3 fake: command not supported: ${commandName}`);
      return handler(input as never);
    },
  };
}

/** Shaped like what SDK v3 throws for real S3 error responses: classify by `$metadata.httpStatusCode`. */
export function s3Error(name: string, status: number, message: string): S3ServiceException {
  return new S3ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message });
}

function preconditionFailed(): S3ServiceException {
  return s3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold');
}

function noSuchKey(): NoSuchKey {
  return new NoSuchKey({ $metadata: { httpStatusCode: 404 }, message: 'The specified key does not exist.' });
}

function checkWriteConditions(current: FakeObject | undefined, input: { IfNoneMatch?: string; IfMatch?: string }): void {
  if (input.IfNoneMatch !== undefined) {
    if (input.IfNoneMatch !== '*') throw s3Error('NotImplemented', 501, 'If-None-Match only accepts *');
    if (current !== undefined) throw preconditionFailed();
  }
  if (input.IfMatch !== undefined) {
    if (current === undefined) throw noSuchKey();
    if (input.IfMatch !== '*' && input.IfMatch !== current.etag) throw preconditionFailed();
  }
}

/** `CopySource` is `bucket/key` with the key URL-encoded, optionally with a leading slash. */
function parseCopySource(source: string | undefined): { bucket: string; key: string } {
  const match = /^\/?([^/]+)\/(.+)$/.exec(source ?? '');
  if (match === null || match[2].includes('?versionId=')) throw s3Error('InvalidArgument', 400, `unsupported CopySource ${source}`);
  return { bucket: match[1], key: decodeURIComponent(match[2]) };
}

async function toBuffer(body: PutObjectCommandInput['Body']): Promise<Buffer> {
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string' || body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  }
  throw new Error(`S3 fake: unsupported Body type ${Object.prototype.toString.call(body)}`);
}

function wholeSecond(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

/** S3 lists in UTF-8 byte order; JS `<` would compare UTF-16 code units. */
function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
