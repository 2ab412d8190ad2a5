import { GetObjectCommand, ListObjectVersionsCommand, type ListObjectVersionsCommandOutput, type S3Client } from '@aws-sdk/client-s3';
import type { KeyVersion, RegistryHistory } from '../../ports/registry-history.js';
import { storageFailure } from './s3-errors.js';

export interface S3RegistryHistoryOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** The registry's key prefix (as S3ObjectStore's). */
  readonly prefix?: string;
  /**
   * Days the bucket keeps noncurrent versions (the stack's `registryNoncurrentDays`, 30 by
   * default): the version current at T became noncurrent after T, so it is kept at least until
   * T plus this; any T within it is restorable, an older one is refused.
   */
  readonly retainedDays: number;
  readonly now?: () => Date;
}

/** ListObjectVersions answers at most this many versions and delete markers per request. */
const PAGE = 1000;

/**
 * The S3 registry's history: the bucket's object versions (the registry bucket is versioned;
 * docs/deploy.md). One ListObjectVersions request per 1,000 versions of the keys in scope, and
 * one GET (by VersionId) per version whose bytes are asked for: O(keys in scope) requests,
 * whatever the rest of the bucket holds (test/unit/registry-restore.test.ts counts them).
 * LastModified is the time S3 received the write (whole seconds in the listing), which keeps the
 * state at T causally closed (lib/ports/registry-history.ts): truncation is monotonic.
 */
export function s3RegistryHistory(options: S3RegistryHistoryOptions): RegistryHistory {
  const base = !options.prefix || options.prefix.endsWith('/') ? (options.prefix ?? '') : `${options.prefix}/`;
  const now = options.now ?? (() => new Date());
  return {
    url: `s3://${options.bucket}/${base} (object versions)`,
    async retainedFrom() {
      return new Date(now().getTime() - options.retainedDays * 86_400_000);
    },
    async *versions(prefix, { onRequest } = {}) {
      let keyMarker: string | undefined;
      let versionMarker: string | undefined;
      let pending: KeyVersion[] = [];
      for (;;) {
        onRequest?.();
        const page: ListObjectVersionsCommandOutput = await failing(() =>
          options.client.send(
            new ListObjectVersionsCommand({ Bucket: options.bucket, Prefix: base + prefix, KeyMarker: keyMarker, VersionIdMarker: versionMarker, MaxKeys: PAGE }),
          ),
        );
        const entries: KeyVersion[] = [
          ...(page.Versions ?? []).map((v) => version(v.Key!, v.VersionId!, v.LastModified!, false, v.IsLatest === true, v.ETag)),
          ...(page.DeleteMarkers ?? []).map((m) => version(m.Key!, m.VersionId!, m.LastModified!, true, m.IsLatest === true)),
        ].sort((a, b) => (a.key === b.key ? byNewest(a, b) : a.key < b.key ? -1 : 1));
        for (const v of entries) {
          if (pending.length > 0 && pending[0]!.key !== v.key) {
            yield pending;
            pending = [];
          }
          pending.push(v);
        }
        if (!page.IsTruncated) break;
        keyMarker = page.NextKeyMarker;
        versionMarker = page.NextVersionIdMarker;
      }
      if (pending.length > 0) yield pending;
    },
    async body(v) {
      const got = await failing(() => options.client.send(new GetObjectCommand({ Bucket: options.bucket, Key: base + v.key, VersionId: v.ref })));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
  };

  function version(key: string, ref: string, time: Date, deleted: boolean, current: boolean, etag?: string): KeyVersion {
    return { key: key.slice(base.length), ref, time: new Date(time), deleted, current, ...(etag ? { etag } : {}) };
  }
}

/**
 * Newest first. The listing's LastModified has whole seconds, and the SDK hands object versions
 * and delete markers over as two lists (each newest first), so within one second it cannot say
 * whether a deletion came before or after a write of the same key. S3 marks the latest, which
 * wins; otherwise the deletion is taken as the later: the registry's doors delete a key at the
 * end of its life (a rename's source, a mark, a claim), and re-create one within the same second
 * only rarely (docs/operations.md, "Registry backup and restore", names this limit).
 */
function byNewest(a: KeyVersion, b: KeyVersion): number {
  if (a.current !== b.current) return a.current ? -1 : 1;
  const t = b.time.getTime() - a.time.getTime();
  if (t !== 0) return t;
  return a.deleted === b.deleted ? 0 : a.deleted ? -1 : 1;
}

async function failing<T>(io: () => Promise<T>): Promise<T> {
  try {
    return await io();
  } catch (error) {
    throw storageFailure(error);
  }
}
