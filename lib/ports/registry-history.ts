/**
 * The registry-history port: the past contents of registry keys, for inspection (`--history`),
 * consistent exports and point-in-time restores (docs/operations.md, "Registry backup and
 * restore"). On S3 it is the bucket's object versions; locally a journal that the registry's
 * store appends to on every write, with a baseline snapshot and a retention
 * (lib/adapters/local/registry-journal.ts).
 *
 * Time: a version's `time` orders it against every other key's versions so that the state "every
 * version with time ≤ T" is causally closed: a write that read another's result has a later (or
 * equal) time. S3's LastModified (the time S3 received the write) and the journal's issue time
 * both have that property, so the state at T is one a crash at T could have left.
 */
export interface KeyVersion {
  readonly key: string;
  /** When the write was made (see above); versions of one key are newest first. */
  readonly time: Date;
  /** The write deleted the key (an S3 delete marker, a journaled delete). */
  readonly deleted: boolean;
  /** The version is the key's current content (or current deletion). */
  readonly current: boolean;
  /** The etag the key had after this write (absent for a deletion). */
  readonly etag?: string;
  /** Opaque: what `body` needs to read this version (an S3 VersionId, a journal position). */
  readonly ref: string;
}

export interface RegistryHistory {
  /** Where the history lives (`s3://b/p (object versions)`, `file:///…/registry-journal`). */
  readonly url: string;
  /**
   * The earliest instant whose state the history still holds for every key: a restore or export
   * at an earlier time is refused (HistoryUnavailableError).
   */
  retainedFrom(): Promise<Date>;
  /**
   * Every retained version of every key under `prefix`, one array per key (keys in byte order,
   * each array newest first). `onRequest` is told of each request the history makes, so long
   * runs can show progress.
   */
  versions(prefix: string, options?: { onRequest?: () => void }): AsyncIterable<readonly KeyVersion[]>;
  /** The bytes of one (not deleted) version. */
  body(version: KeyVersion): Promise<Buffer>;
}

/** A point older than the retained history, or a registry that keeps none. */
export class HistoryUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistoryUnavailableError';
  }
}
