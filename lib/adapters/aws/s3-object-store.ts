import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type CopyObjectCommandOutput,
  type GetObjectCommandOutput,
  type HeadObjectCommandOutput,
  type ListObjectsV2CommandOutput,
  type PutObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { remainingMs } from '../../deadline.js';
import { StorageUnavailableError } from '../../errors.js';
import {
  ConditionFailedError,
  type CopiedObject,
  type ListOptions,
  type ListResult,
  type ObjectInfo,
  type ObjectStore,
  type StoredObject,
} from '../../ports/object-store.js';
import { checkLimit } from '../memory/object-store.js';
import { isConditionalConflict, isTransient, outcomeUnknown, statusOf, storageFailure } from './s3-errors.js';

export interface S3ObjectStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Every key is stored under this prefix; a missing trailing `/` is added. */
  readonly prefix?: string;
  /** Tries of a conditional write that S3 answers 409 (RASK_S3_CONFLICT_ATTEMPTS); default 4. */
  readonly conflictAttempts?: number;
  /** Base of the jittered backoff between those tries, in ms (doubling each time); default 50. */
  readonly conflictBackoffMs?: number;
}

/** ListObjectsV2 returns at most this many entries per call. */
const MAX_PAGE = 1000;

/** Copies up to this size are compared byte for byte when their etags cannot tell (SSE-KMS etags are not MD5s). */
const COMPARE_COPY_BYTES = 1024 * 1024;

/**
 * Objects in an S3 general-purpose bucket, with the conditional writes S3 has supported since
 * 2024 (If-None-Match on create, If-Match on replace and delete). Lost races are recognised by
 * HTTP status rather than error name, because the SDK has no modeled class for 412/409 and a
 * HEAD response has no body to name the error at all.
 *
 * How S3's failures reach the port (issue #35; docs/protocols.md, "When S3 fails"):
 * - throttling, 5xx, timeouts, resets (after the SDK's own retries), and no answer within the
 *   request's deadline throw StorageUnavailableError (503 / code 17), never a raw SDK error;
 * - 409 ConditionalRequestConflict is not a lost race: nothing was written, and the write is
 *   retried here with a bounded, jittered backoff; only 412 (and 404 for If-Match) is a lost race;
 * - a conditional write whose earlier attempt's outcome is unknown (a 500, a timeout, a reset)
 *   and whose retry meets 412 / 404 reads the key back: if it holds what this write sent (or,
 *   for a delete, nothing), the earlier attempt applied and the write succeeded.
 *
 * To know that an earlier attempt's outcome was unknown, each conditional write records the
 * error of every attempt from a middleware inside the SDK's retry loop (added to that one
 * command's stack). The SDK keeps its retries, backoff and retry quota for every command; the
 * alternative, a retry loop of our own with the SDK's set to one attempt for conditional
 * writes, would need a second client (retries are a client setting) and duplicate the SDK's
 * backoff. The read-back costs a request only when some attempt's outcome was unknown.
 */
export class S3ObjectStore implements ObjectStore {
  readonly url: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #base: string;
  readonly #conflictAttempts: number;
  readonly #conflictBackoffMs: number;

  constructor({ client, bucket, prefix = '', conflictAttempts = 4, conflictBackoffMs = 50 }: S3ObjectStoreOptions) {
    this.#client = client;
    this.#bucket = bucket;
    this.#base = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.url = `s3://${bucket}/${this.#base}`;
    this.#conflictAttempts = conflictAttempts;
    this.#conflictBackoffMs = conflictBackoffMs;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    return failing(() => this.#get(key));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    return failing(() => this.#head(key));
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<{ etag: string }> {
    const bytes = Buffer.from(body);
    return this.#conditional(
      key,
      'exists',
      (attempts) => this.#put(key, bytes, { IfNoneMatch: '*' }, attempts),
      () => this.#holds(key, bytes),
    );
  }

  async copyIfAbsent(source: string, key: string, options: { sourceEtag?: string } = {}): Promise<CopiedObject | undefined> {
    try {
      return await this.#conditional(
        key,
        'exists',
        async (attempts): Promise<CopiedObject> => {
          const res = await this.#send<CopyObjectCommandOutput>(
            new CopyObjectCommand({
              Bucket: this.#bucket,
              Key: this.#base + key,
              CopySource: `${this.#bucket}/${encodeURIComponent(this.#base + source).replace(/%2F/g, '/')}`,
              IfNoneMatch: '*',
              CopySourceIfMatch: options.sourceEtag,
            }),
            attempts,
          );
          return {
            etag: requireEtag(res.CopyObjectResult?.ETag, key),
            lastModified: res.CopyObjectResult?.LastModified ?? new Date(0),
          };
        },
        () => this.#copied(source, key, options.sourceEtag),
      );
    } catch (error) {
      // 404 here is the source (the destination of a copy is never required to exist).
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<{ etag: string }> {
    const bytes = Buffer.from(body);
    return this.#conditional(
      key,
      'etag-mismatch',
      (attempts) => this.#put(key, bytes, { IfMatch: etag }, attempts),
      () => this.#holds(key, bytes),
    );
  }

  async put(key: string, body: Buffer | string): Promise<{ etag: string }> {
    return failing(() => this.#put(key, Buffer.from(body), {}));
  }

  async deleteIfMatch(key: string, etag: string): Promise<void> {
    await this.#conditional(
      key,
      'etag-mismatch',
      async (attempts) => {
        await this.#send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#base + key, IfMatch: etag }), attempts);
        return true as const;
      },
      // Absent: our delete applied (nothing else is left to decide; the key is gone either way).
      async () => ((await this.#head(key)) === undefined ? (true as const) : undefined),
    );
  }

  async delete(key: string): Promise<void> {
    await failing(() => this.#send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#base + key })));
  }

  async list(options: ListOptions): Promise<ListResult> {
    checkLimit(options.limit);
    return failing(() => this.#list(options));
  }

  async #list(options: ListOptions): Promise<ListResult> {
    const limit = options.limit ?? Infinity;
    const objects: ObjectInfo[] = [];
    const commonPrefixes: string[] = [];
    let token: string | undefined;
    for (;;) {
      const res = await this.#send<ListObjectsV2CommandOutput>(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: this.#base + (options.prefix ?? ''),
          Delimiter: options.delimiter || undefined,
          // Only the first call positions by StartAfter; later ones continue from the token.
          StartAfter: token === undefined && options.startAfter !== undefined ? this.#base + options.startAfter : undefined,
          ContinuationToken: token,
          MaxKeys: Math.min(MAX_PAGE, limit - objects.length - commonPrefixes.length),
        }),
      );
      for (const o of res.Contents ?? []) {
        objects.push({
          key: o.Key!.slice(this.#base.length),
          etag: requireEtag(o.ETag, o.Key!),
          size: o.Size ?? 0,
          lastModified: o.LastModified ?? new Date(0),
        });
      }
      for (const p of res.CommonPrefixes ?? []) commonPrefixes.push(p.Prefix!.slice(this.#base.length));
      const truncated = res.IsTruncated === true;
      if (!truncated || objects.length + commonPrefixes.length >= limit) return { objects, commonPrefixes, truncated };
      token = res.NextContinuationToken;
      if (token === undefined) throw new Error('ListObjectsV2 reported a truncated page without a continuation token');
    }
  }

  async #get(key: string): Promise<StoredObject | undefined> {
    try {
      const res = await this.#send<GetObjectCommandOutput>(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#base + key }));
      const body = Buffer.from((await res.Body?.transformToByteArray()) ?? []);
      return { body, etag: requireEtag(res.ETag, key), size: body.length, lastModified: res.LastModified ?? new Date(0) };
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async #head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const res = await this.#send<HeadObjectCommandOutput>(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#base + key }));
      return { key, etag: requireEtag(res.ETag, key), size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async #put(key: string, body: Buffer, condition: { IfNoneMatch?: string; IfMatch?: string }, attempts?: unknown[]) {
    const res = await this.#send<PutObjectCommandOutput>(
      new PutObjectCommand({ Bucket: this.#bucket, Key: this.#base + key, Body: body, ...condition }),
      attempts,
    );
    return { etag: requireEtag(res.ETag, key) };
  }

  /** The key's etag when it holds exactly `body` (our write applied), else undefined. */
  async #holds(key: string, body: Buffer): Promise<{ etag: string } | undefined> {
    const now = await this.#get(key);
    return now?.body.equals(body) ? { etag: now.etag } : undefined;
  }

  /** The copy at `key` when it is a copy of `source` (our copy applied), else undefined. */
  async #copied(source: string, key: string, sourceEtag: string | undefined): Promise<CopiedObject | undefined> {
    const [dest, src] = await Promise.all([this.#head(key), this.#head(source)]);
    if (dest === undefined) return undefined;
    const mine = { etag: dest.etag, lastModified: dest.lastModified, size: dest.size };
    // A single-part copy keeps the source's etag (unless the bucket encrypts with KMS); with
    // `sourceEtag`, that version of the source even if it has been replaced since.
    if (dest.etag === (sourceEtag ?? src?.etag)) return mine;
    if (src === undefined || (sourceEtag !== undefined && src.etag !== sourceEtag)) return undefined;
    if (src.size !== dest.size || dest.size > COMPARE_COPY_BYTES) return undefined;
    const [a, b] = await Promise.all([this.#get(key), this.#get(source)]);
    return a !== undefined && b !== undefined && a.body.equals(b.body) ? mine : undefined;
  }

  /**
   * One conditional write, by the port's rules (see the class comment): 409 is retried here,
   * 412 (and, for If-Match, 404) is a lost race unless an earlier attempt of this very write
   * may have applied and `ours` finds it did; S3 failures become StorageUnavailableError.
   */
  async #conditional<T>(
    key: string,
    onPreconditionFailed: 'exists' | 'etag-mismatch',
    send: (attempts: unknown[]) => Promise<T>,
    ours: () => Promise<T | undefined>,
  ): Promise<T> {
    let unknown = false;
    for (let round = 1; ; round++) {
      const attempts: unknown[] = [];
      try {
        return await send(attempts);
      } catch (error) {
        unknown ||= outcomeUnknown(error) || attempts.some(outcomeUnknown);
        if (isConditionalConflict(error) && round < this.#conflictAttempts) {
          // Nothing was written: a concurrent conditional write on the key was in flight.
          const delay = conflictDelay(this.#conflictBackoffMs, round);
          if (remainingMs() > delay) {
            await sleep(delay);
            continue;
          }
        }
        const status = statusOf(error);
        const lost = status === 412 || (onPreconditionFailed === 'etag-mismatch' && isMissingKey(error));
        if (unknown && (lost || isTransient(error) || isConditionalConflict(error))) {
          let mine: T | undefined;
          try {
            mine = await ours();
          } catch (readError) {
            // Unread, a lost race cannot be told from our own write: say "retry", not "lost".
            throw storageFailure(lost ? readError : error);
          }
          if (mine !== undefined) return mine;
        }
        if (lost) throw new ConditionFailedError(key, status === 412 ? onPreconditionFailed : 'missing', { mayHaveApplied: unknown });
        throw storageFailure(error);
      }
    }
  }

  /**
   * Sends one command, bounded by the request's deadline (lib/deadline.ts): none starts after
   * it, and the SDK's retries (and the attempt in flight) stop at it. With `attempts`, the error
   * of every attempt the SDK makes is pushed there.
   */
  async #send<O>(command: { middlewareStack: { add: (mw: never, options: object) => void } }, attempts?: unknown[]): Promise<O> {
    const left = remainingMs();
    if (left <= 0) throw new StorageUnavailableError('the request deadline passed before the object store could be asked; retry');
    if (attempts) command.middlewareStack.add(recordAttempts(attempts) as never, RECORD_ATTEMPTS);
    const options = Number.isFinite(left) ? { abortSignal: AbortSignal.timeout(Math.ceil(left)) } : undefined;
    return (await this.#client.send(command as never, options)) as O;
  }
}

/** Inside the SDK's retry loop (finalizeRequest, high), outside the transport and deserializer. */
const RECORD_ATTEMPTS = { step: 'finalizeRequest', priority: 'low', name: 'raskRecordAttempts' } as const;

const recordAttempts =
  (attempts: unknown[]) =>
  (next: (args: unknown) => Promise<unknown>) =>
  async (args: unknown): Promise<unknown> => {
    try {
      return await next(args);
    } catch (error) {
      attempts.push(error);
      throw error;
    }
  };

/** Runs `io`, turning S3's failures into what the catalog answers (lib/adapters/aws/s3-errors.ts). */
async function failing<T>(io: () => Promise<T>): Promise<T> {
  try {
    return await io();
  } catch (error) {
    throw storageFailure(error);
  }
}

/** Equal jitter: between half and all of base·2^(round−1). */
function conflictDelay(base: number, round: number): number {
  const cap = base * 2 ** (round - 1);
  return cap / 2 + Math.random() * (cap / 2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A missing bucket is a misconfiguration, not a missing object, so it is not swallowed. */
function isMissingKey(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'NoSuchBucket') return false;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(error) === 404;
}

/** Conditional writes need the etag; an S3-compatible store that omits it cannot be used safely. */
function requireEtag(etag: string | undefined, key: string): string {
  if (etag === undefined) throw new Error(`S3 returned no ETag for ${JSON.stringify(key)}`);
  return etag;
}
