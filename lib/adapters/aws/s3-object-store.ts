import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
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

export interface S3ObjectStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Every key is stored under this prefix; a missing trailing `/` is added. */
  readonly prefix?: string;
}

/** ListObjectsV2 returns at most this many entries per call. */
const MAX_PAGE = 1000;

/**
 * Objects in an S3 general-purpose bucket, with the conditional writes S3 has supported since
 * 2024 (If-None-Match on create, If-Match on replace and delete). Lost races are recognised by
 * HTTP status rather than error name, because the SDK has no modeled class for 412/409 and a
 * HEAD response has no body to name the error at all.
 */
export class S3ObjectStore implements ObjectStore {
  readonly url: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #base: string;

  constructor({ client, bucket, prefix = '' }: S3ObjectStoreOptions) {
    this.#client = client;
    this.#bucket = bucket;
    this.#base = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.url = `s3://${bucket}/${this.#base}`;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    try {
      const res = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#base + key }));
      const body = Buffer.from((await res.Body?.transformToByteArray()) ?? []);
      return { body, etag: requireEtag(res.ETag, key), size: body.length, lastModified: res.LastModified ?? new Date(0) };
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const res = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#base + key }));
      return { key, etag: requireEtag(res.ETag, key), size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async putIfAbsent(key: string, body: Buffer | string): Promise<{ etag: string }> {
    return conditional(key, 'exists', () => this.#put(key, body, { IfNoneMatch: '*' }));
  }

  async copyIfAbsent(source: string, key: string, options: { sourceEtag?: string } = {}): Promise<CopiedObject | undefined> {
    try {
      const res = await conditional(key, 'exists', () =>
        this.#client.send(
          new CopyObjectCommand({
            Bucket: this.#bucket,
            Key: this.#base + key,
            CopySource: `${this.#bucket}/${encodeURIComponent(this.#base + source).replace(/%2F/g, '/')}`,
            IfNoneMatch: '*',
            CopySourceIfMatch: options.sourceEtag,
          }),
        ),
      );
      return {
        etag: requireEtag(res.CopyObjectResult?.ETag, key),
        lastModified: res.CopyObjectResult?.LastModified ?? new Date(0),
      };
    } catch (error) {
      // 404 here is the source (the destination of a copy is never required to exist).
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async putIfMatch(key: string, body: Buffer | string, etag: string): Promise<{ etag: string }> {
    return conditional(key, 'etag-mismatch', () => this.#put(key, body, { IfMatch: etag }));
  }

  async put(key: string, body: Buffer | string): Promise<{ etag: string }> {
    return this.#put(key, body, {});
  }

  async deleteIfMatch(key: string, etag: string): Promise<void> {
    await conditional(key, 'etag-mismatch', () =>
      this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#base + key, IfMatch: etag })),
    );
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#base + key }));
  }

  async list(options: ListOptions): Promise<ListResult> {
    checkLimit(options.limit);
    const limit = options.limit ?? Infinity;
    const objects: ObjectInfo[] = [];
    const commonPrefixes: string[] = [];
    let token: string | undefined;
    for (;;) {
      const res = await this.#client.send(
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

  async #put(key: string, body: Buffer | string, condition: { IfNoneMatch?: string; IfMatch?: string }) {
    const res = await this.#client.send(
      new PutObjectCommand({ Bucket: this.#bucket, Key: this.#base + key, Body: Buffer.from(body), ...condition }),
    );
    return { etag: requireEtag(res.ETag, key) };
  }
}

/**
 * Turns S3's ways of saying "the condition did not hold" into ConditionFailedError: 412 (etag
 * differs / key exists), 409 (a concurrent conditional write on the key finished first; S3 asks
 * for a retry) and, for If-Match, 404 (the object conditioned on is gone).
 */
async function conditional<T>(key: string, onPreconditionFailed: 'exists' | 'etag-mismatch', send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    const status = statusOf(error);
    if (status === 412) throw new ConditionFailedError(key, onPreconditionFailed);
    if (status === 409) throw new ConditionFailedError(key, 'conflict');
    if (onPreconditionFailed === 'etag-mismatch' && isMissingKey(error)) throw new ConditionFailedError(key, 'missing');
    throw error;
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

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
