import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compareKeys, type ObjectStore } from '../../ports/object-store.js';
import type { KeyVersion, RegistryHistory } from '../../ports/registry-history.js';
import { fsStorageFailure } from './fs-errors.js';

/**
 * The local registry's history (docs/operations.md, "Registry backup and restore"): what S3's
 * object versions are to the S3 registry. Every write the registry's store makes is appended, as
 * one JSON line, to a journal segment; a baseline holds every key's content at the instant the
 * history begins. The state at T is the baseline plus every entry with time ≤ T.
 *
 * - **Time** of an entry is when the write was issued, so the state at T is causally closed
 *   (lib/ports/registry-history.ts): a write that read another's result was issued after that
 *   one applied.
 * - **Cost on the write path**: one `write(2)` of one line to an open file, in the caller's turn,
 *   after the store's own write succeeded; no fsync (the store's fsync already waits for the
 *   disk), no extra read (docs/benchmarks.md, "Registry journal").
 * - **Retention**: segments roll every `rollMs`; a segment that began more than the retention
 *   (plus two rolls, so no process still appends to it) ago is folded into the baseline, whose
 *   time moves up to the oldest segment left. Folding runs at open and at each roll.
 * - A write the store applied but reported as failed (an unknown outcome) is not journaled; a
 *   restore then meets an etag it did not expect and reports the key instead of writing it.
 */
export interface JournalEntry {
  /** Issue time, ms since the epoch. */
  readonly t: number;
  readonly k: string;
  /** The body written (UTF-8); absent for a deletion. */
  readonly b?: string;
  /** The body, base64, when it is not valid UTF-8 (never for registry records). */
  readonly x?: string;
  /** The etag after the write. */
  readonly e?: string;
}

interface Loaded {
  readonly baselineTime: number;
  readonly baseline: ReadonlyMap<string, { readonly body: Buffer; readonly etag?: string }>;
  readonly entries: readonly JournalEntry[];
}

export interface JournalOptions {
  /** `registry-journal/` inside the data directory; absent: kept in memory (tests, the memory registry). */
  readonly dir?: string;
  /** How long history is kept (RASK_REGISTRY_HISTORY_DAYS). */
  readonly retentionMs: number;
  /** Segment length; default one hour. */
  readonly rollMs?: number;
  readonly now?: () => number;
}

const HOUR_MS = 3_600_000;
const BASELINE = 'baseline.ndjson';
const SEGMENT = /^segment-(\d{13})-[0-9a-z]+\.ndjson$/;

export class RegistryJournal implements RegistryHistory {
  readonly url: string;
  private readonly now: () => number;
  private readonly rollMs: number;
  /** Memory backend. */
  private memory?: { baselineTime: number; baseline: Map<string, { body: Buffer; etag?: string }>; entries: JournalEntry[] };
  /** File backend: the segment this process appends to. */
  private segment?: { fd: number; start: number };
  private loaded?: Loaded;

  private constructor(private readonly options: JournalOptions) {
    this.now = options.now ?? Date.now;
    this.rollMs = options.rollMs ?? HOUR_MS;
    this.url = options.dir ? `file://${options.dir} (registry journal)` : 'memory: (registry journal)';
  }

  /**
   * Opens the journal of `store`, taking the baseline from the store when the history has none
   * yet (the first start with history on: that instant is where the history begins).
   */
  static async open(store: ObjectStore, options: JournalOptions): Promise<RegistryJournal> {
    const journal = new RegistryJournal(options);
    const dir = options.dir;
    const hasBaseline = dir ? onDisk(() => readdirSync(mkdirp(dir)).includes(BASELINE)) : false;
    if (!hasBaseline) {
      const time = journal.now();
      const baseline = await snapshot(store);
      if (dir) writeBaseline(dir, time, baseline);
      else journal.memory = { baselineTime: time, baseline, entries: [] };
    }
    journal.compact();
    return journal;
  }

  /** Appends one write (called by `journaled` after the store's write succeeded). */
  record(t: number, key: string, body: Buffer | string | undefined, etag?: string): void {
    const entry: JournalEntry = { t, k: key, ...encodeBody(body), ...(etag ? { e: etag } : {}) };
    this.loaded = undefined;
    if (this.memory) {
      this.memory.entries.push(entry);
      return;
    }
    const dir = this.options.dir!;
    const now = this.now();
    if (this.segment && now - this.segment.start >= this.rollMs) {
      closeSync(this.segment.fd);
      this.segment = undefined;
      this.compact();
    }
    if (!this.segment) {
      const name = `segment-${String(now).padStart(13, '0')}-${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}.ndjson`;
      this.segment = { fd: onDisk(() => openSync(path.join(dir, name), 'a')), start: now };
    }
    const fd = this.segment.fd;
    // One write of one whole line to an O_APPEND file: lines of concurrent processes never interleave.
    onDisk(() => writeSync(fd, `${JSON.stringify(entry)}\n`));
  }

  /** Folds what is older than the retention into the baseline (see the class comment). */
  compact(): void {
    const cutoff = this.now() - this.options.retentionMs;
    if (this.memory) {
      const m = this.memory;
      const old = m.entries.filter((e) => e.t < cutoff);
      if (old.length === 0) return;
      for (const e of old) apply(m.baseline, e);
      m.entries = m.entries.filter((e) => e.t >= cutoff);
      m.baselineTime = Math.max(m.baselineTime, cutoff);
      this.loaded = undefined;
      return;
    }
    const dir = this.options.dir!;
    const segments = listSegments(dir);
    const foldable = segments.filter((s) => s.start < cutoff - 2 * this.rollMs && s.name !== this.currentName());
    if (foldable.length === 0) return;
    const current = this.load();
    const state = new Map(current.baseline);
    const folded = new Set(foldable.map((s) => s.name));
    for (const e of readSegments(dir, foldable)) apply(state, e);
    const rest = segments.filter((s) => !folded.has(s.name));
    // The baseline now stands for the oldest instant every remaining entry is after.
    const time = Math.max(current.baselineTime, Math.min(cutoff, ...rest.map((s) => s.start - 60_000)));
    writeBaseline(dir, time, state);
    for (const s of foldable) onDisk(() => rmSync(path.join(dir, s.name), { force: true }));
    this.loaded = undefined;
  }

  async retainedFrom(): Promise<Date> {
    return new Date(this.load().baselineTime);
  }

  async *versions(prefix: string, options: { onRequest?: () => void } = {}): AsyncIterable<readonly KeyVersion[]> {
    options.onRequest?.();
    const loaded = this.load();
    const byKey = new Map<string, KeyVersion[]>();
    const add = (key: string, v: Omit<KeyVersion, 'key' | 'current'>) => {
      let list = byKey.get(key);
      if (!list) byKey.set(key, (list = []));
      list.push({ key, current: false, ...v });
    };
    for (const [key, { etag }] of loaded.baseline) {
      if (key.startsWith(prefix)) add(key, { time: new Date(loaded.baselineTime), deleted: false, ...(etag ? { etag } : {}), ref: `b:${key}` });
    }
    loaded.entries.forEach((e, i) => {
      if (e.k.startsWith(prefix)) add(e.k, { time: new Date(e.t), deleted: e.b === undefined && e.x === undefined, ...(e.e ? { etag: e.e } : {}), ref: `j:${i}` });
    });
    for (const key of [...byKey.keys()].sort(compareKeys)) {
      // Entries are in append order, which is issue order except where two writes overlapped;
      // a stable sort by time keeps append order among equal times.
      const list = byKey.get(key)!.sort((a, b) => a.time.getTime() - b.time.getTime());
      list[list.length - 1] = { ...list[list.length - 1]!, current: true };
      yield list.reverse();
    }
  }

  async body(version: KeyVersion): Promise<Buffer> {
    const loaded = this.load();
    if (version.ref.startsWith('b:')) {
      const found = loaded.baseline.get(version.ref.slice(2));
      if (found) return found.body;
    } else {
      const e = loaded.entries[Number(version.ref.slice(2))];
      if (e && e.k === version.key) {
        const body = decodeBody(e);
        if (body) return body;
      }
    }
    throw new Error(`the journal holds no body for ${version.key} at ${version.ref} (it was compacted meanwhile; run again)`);
  }

  /** Stops appending (closes this process's segment). */
  close(): void {
    if (this.segment) closeSync(this.segment.fd);
    this.segment = undefined;
  }

  private currentName(): string | undefined {
    return undefined;
  }

  private load(): Loaded {
    if (this.loaded) return this.loaded;
    if (this.memory) {
      this.loaded = { baselineTime: this.memory.baselineTime, baseline: new Map(this.memory.baseline), entries: [...this.memory.entries] };
      return this.loaded;
    }
    const dir = this.options.dir!;
    const lines = readLines(path.join(dir, BASELINE));
    const head = lines.shift() as { t?: number } | undefined;
    if (typeof head?.t !== 'number') throw new Error(`${path.join(dir, BASELINE)} has no header; the registry journal is damaged`);
    const baseline = new Map<string, { body: Buffer; etag?: string }>();
    for (const line of lines as JournalEntry[]) {
      const body = decodeBody(line);
      if (body) baseline.set(line.k, { body, ...(line.e ? { etag: line.e } : {}) });
    }
    this.loaded = { baselineTime: head.t, baseline, entries: readSegments(dir, listSegments(dir)) };
    return this.loaded;
  }
}

/**
 * The registry's store with every write journaled: the same port, so nothing above it knows.
 * Reads pass straight through.
 */
export function journaled(store: ObjectStore, journal: RegistryJournal, now: () => number = Date.now): ObjectStore {
  const after = async <R extends { etag: string }>(key: string, body: Buffer | string, write: () => Promise<R>): Promise<R> => {
    const t = now();
    const result = await write();
    journal.record(t, key, body, result.etag);
    return result;
  };
  const deleted = async (key: string, write: () => Promise<void>): Promise<void> => {
    const t = now();
    await write();
    journal.record(t, key, undefined);
  };
  return {
    url: store.url,
    get: (key) => store.get(key),
    head: (key) => store.head(key),
    list: (options) => store.list(options),
    ...(store.listKeys ? { listKeys: (options: Parameters<NonNullable<ObjectStore['listKeys']>>[0]) => store.listKeys!(options) } : {}),
    ...(store.checkPath ? { checkPath: (p: string) => store.checkPath!(p) } : {}),
    putIfAbsent: (key, body) => after(key, body, () => store.putIfAbsent(key, body)),
    putIfMatch: (key, body, etag) => after(key, body, () => store.putIfMatch(key, body, etag)),
    put: (key, body) => after(key, body, () => store.put(key, body)),
    deleteIfMatch: (key, etag) => deleted(key, () => store.deleteIfMatch(key, etag)),
    delete: (key) => deleted(key, () => store.delete(key)),
    async copyIfAbsent(source, key, options) {
      const t = now();
      const copied = await store.copyIfAbsent(source, key, options);
      // The registry copies rarely (never on a door's hot path): the body is read back for the journal.
      if (copied) journal.record(t, key, (await store.get(key))?.body ?? Buffer.alloc(0), copied.etag);
      return copied;
    },
  };
}

function encodeBody(body: Buffer | string | undefined): Pick<JournalEntry, 'b' | 'x'> {
  if (body === undefined) return {};
  if (typeof body === 'string') return { b: body };
  const text = body.toString('utf8');
  return Buffer.from(text, 'utf8').equals(body) ? { b: text } : { x: body.toString('base64') };
}

function decodeBody(e: JournalEntry): Buffer | undefined {
  if (e.b !== undefined) return Buffer.from(e.b, 'utf8');
  if (e.x !== undefined) return Buffer.from(e.x, 'base64');
  return undefined;
}

function apply(state: Map<string, { body: Buffer; etag?: string }>, e: JournalEntry): void {
  const body = decodeBody(e);
  if (body) state.set(e.k, { body, ...(e.e ? { etag: e.e } : {}) });
  else state.delete(e.k);
}

/** Every key's content, read page by page (the baseline of a history that begins now). */
async function snapshot(store: ObjectStore): Promise<Map<string, { body: Buffer; etag?: string }>> {
  const out = new Map<string, { body: Buffer; etag?: string }>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ startAfter, limit: 1000 });
    for (const o of page.objects) {
      const got = await store.get(o.key);
      if (got) out.set(o.key, { body: got.body, etag: got.etag });
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return out;
    startAfter = last.key;
  }
}

/** A synchronous file call; a failing disk answers as the fs store does (503 / 17). */
function onDisk<T>(io: () => T): T {
  try {
    return io();
  } catch (err) {
    throw fsStorageFailure(err);
  }
}

function mkdirp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

function writeBaseline(dir: string, time: number, state: ReadonlyMap<string, { body: Buffer; etag?: string }>): void {
  const lines = [JSON.stringify({ t: time })];
  for (const [k, { body, etag }] of state) lines.push(JSON.stringify({ t: time, k, ...encodeBody(body), ...(etag ? { e: etag } : {}) }));
  const tmp = path.join(dir, `.${BASELINE}.${process.pid}.tmp`);
  onDisk(() => {
    writeFileSync(tmp, `${lines.join('\n')}\n`);
    renameSync(tmp, path.join(dir, BASELINE));
  });
}

function listSegments(dir: string): { name: string; start: number }[] {
  return onDisk(() => readdirSync(dir))
    .map((name) => ({ name, m: SEGMENT.exec(name) }))
    .filter((x) => x.m)
    .map(({ name, m }) => ({ name, start: Number(m![1]) }))
    .sort((a, b) => a.start - b.start || (a.name < b.name ? -1 : 1));
}

function readSegments(dir: string, segments: readonly { name: string }[]): JournalEntry[] {
  return segments.flatMap((s) => readLines(path.join(dir, s.name)) as JournalEntry[]);
}

/** The file's JSON lines; a torn last line (a process killed mid-write) is skipped. */
function readLines(file: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // a torn line: its write never completed, so its store write is not known to have applied either
    }
  }
  return out;
}
