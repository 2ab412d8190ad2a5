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
 * state at T causally closed (lib/ports/registry-history.ts): truncation is monotonic. The order
 * of one key's versions is S3's listing order, never a guess from equal timestamps (inPageOrder).
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
        const entries = await inPageOrder(
          (page.Versions ?? []).map((v) => version(v.Key!, v.VersionId!, v.LastModified!, false, v.IsLatest === true, v.ETag)),
          (page.DeleteMarkers ?? []).map((m) => version(m.Key!, m.VersionId!, m.LastModified!, true, m.IsLatest === true)),
          onRequest,
        );
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

  /**
   * One page's versions and delete markers merged into S3's own order (per key, newest first).
   * The SDK hands them over as two lists, each in that order, so a merge by LastModified is
   * right except where a version and a delete marker of one key share a second (the listing has
   * whole seconds): a delete and a re-create within one second. S3 marks the latest, which wins;
   * any other such tie is settled by asking S3 for the versions older than the marker
   * (VersionIdMarker = the marker: S3 lists what follows it in the key's order), one LIST per
   * tied marker, so the count stays O(keys in scope) (a tie needs two writes of the key in one
   * second) and the order is S3's, not a guess.
   */
  async function inPageOrder(objects: KeyVersion[], markers: KeyVersion[], onRequest?: () => void): Promise<KeyVersion[]> {
    const out: KeyVersion[] = [];
    let i = 0;
    let j = 0;
    const olderThan = new Map<string, Set<string>>();
    while (i < objects.length || j < markers.length) {
      const o = objects[i];
      const m = markers[j];
      const next = o === undefined || m === undefined ? (o ?? m)! : o.key !== m.key ? (o.key < m.key ? o : m) : (await objectFirst(o, m)) ? o : m;
      if (next === o) i++;
      else j++;
      out.push(next);
    }
    return out;

    async function objectFirst(o: KeyVersion, m: KeyVersion): Promise<boolean> {
      if (o.current !== m.current) return o.current;
      const t = m.time.getTime() - o.time.getTime();
      if (t !== 0) return t < 0;
      let older = olderThan.get(m.ref);
      if (older === undefined) olderThan.set(m.ref, (older = await listedAfter(m, onRequest)));
      return !older.has(o.ref);
    }
  }

  /** The refs S3 lists after `m` among its key's versions in the same second as `m`. */
  async function listedAfter(m: KeyVersion, onRequest?: () => void): Promise<Set<string>> {
    const refs = new Set<string>();
    let keyMarker = base + m.key;
    let versionMarker = m.ref;
    for (;;) {
      onRequest?.();
      const page: ListObjectVersionsCommandOutput = await failing(() =>
        options.client.send(
          new ListObjectVersionsCommand({ Bucket: options.bucket, Prefix: base + m.key, KeyMarker: keyMarker, VersionIdMarker: versionMarker, MaxKeys: PAGE }),
        ),
      );
      const same = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter((v) => v.Key === base + m.key);
      for (const v of same) refs.add(v.VersionId!);
      // Versions older than m's second cannot tie with it; stop once the page reaches them.
      const reachedOlder = same.some((v) => v.LastModified!.getTime() < m.time.getTime());
      if (!page.IsTruncated || reachedOlder || page.NextKeyMarker !== base + m.key) return refs;
      keyMarker = page.NextKeyMarker;
      versionMarker = page.NextVersionIdMarker!;
    }
  }

  function version(key: string, ref: string, time: Date, deleted: boolean, current: boolean, etag?: string): KeyVersion {
    return { key: key.slice(base.length), ref, time: new Date(time), deleted, current, ...(etag ? { etag } : {}) };
  }
}

async function failing<T>(io: () => Promise<T>): Promise<T> {
  try {
    return await io();
  } catch (error) {
    throw storageFailure(error);
  }
}
