import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../errors.js';
import { compareKeys, ConditionFailedError, type ObjectStore } from '../../ports/object-store.js';
import type { RegistryHistory } from '../../ports/registry-history.js';
import type { StorageRoot } from '../../ports/storage-root.js';
import { LAYOUT_VERSION } from '../../registry/layout.js';
import type { StorageClaimsRecord, WarehouseRecord } from '../../registry/records.js';
import { checkInstant, keysAt, scopeRanges, type Scope } from './state-at.js';

/**
 * The portable export (`rask registry export`): one NDJSON file, the same whatever registry it
 * came from or goes to.
 *
 *   {"format":"rask-registry-export","version":1,"layout":1,"scope":{…},"at":"…","source":"…"}
 *   {"k":"<key>","b":"<the record's bytes, as UTF-8>"}          one line per key, in key order
 *   {"end":true,"keys":N,"sha256":"<hex of every record line, each with its newline>"}
 *
 * Records keep their keys and their exact bytes (write id, lineage and change stamp included), so
 * an import stores what the export read, byte for byte. No table data: each Lance table keeps its
 * own files and versions where its warehouse is.
 *
 * **Consistent** means: the file is the registry's state at one instant `at` (the export's start
 * unless `--at` says otherwise), read from the registry's history, not a walk of the live keys,
 * so writes made while the export runs do not tear it. It is a state a crash at `at` could have
 * left; after an import, the first read of each object finishes or undoes what was in flight
 * then, as after a restart (lib/maintenance/registry/state-at.ts).
 */
export const EXPORT_FORMAT = 'rask-registry-export';
const EXPORT_VERSION = 1;

export interface ExportHeader {
  readonly format: typeof EXPORT_FORMAT;
  readonly version: number;
  readonly layout: number;
  readonly scope: Scope;
  readonly at: string;
  readonly source: string;
}

export interface ExportSummary {
  readonly at: string;
  readonly scope: Scope;
  readonly keys: number;
  readonly bytes: number;
  readonly sha256: string;
}

/** Writes the state of `scope` at `at` as the export's lines, through `write` (one call per line). */
export async function exportRegistry(
  history: RegistryHistory,
  scope: Scope,
  at: Date,
  write: (line: string) => Promise<void> | void,
  options: { onProgress?: (keys: number) => void } = {},
): Promise<ExportSummary> {
  await checkInstant(history, at);
  const header: ExportHeader = { format: EXPORT_FORMAT, version: EXPORT_VERSION, layout: LAYOUT_VERSION, scope, at: at.toISOString(), source: history.url };
  await write(`${JSON.stringify(header)}\n`);
  const hash = createHash('sha256');
  let count = 0;
  let bytes = 0;
  for await (const k of keysAt(history, scope, at)) {
    if (!k.at) continue;
    const body = await history.body(k.at);
    const line = `${JSON.stringify({ k: k.key, ...encode(body) })}\n`;
    hash.update(line);
    await write(line);
    count++;
    bytes += body.length;
    options.onProgress?.(count);
  }
  const sha256 = hash.digest('hex');
  await write(`${JSON.stringify({ end: true, keys: count, sha256 })}\n`);
  return { at: header.at, scope, keys: count, bytes, sha256 };
}

function encode(body: Buffer): { b: string } | { x: string } {
  const text = body.toString('utf8');
  return Buffer.from(text, 'utf8').equals(body) ? { b: text } : { x: body.toString('base64') };
}

export interface ExportedRecord {
  readonly key: string;
  readonly body: Buffer;
}

/** Parses and verifies a whole export (header, every line, the trailer's count and digest). */
export function readExport(text: string): { header: ExportHeader; records: ExportedRecord[] } {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const bad = (why: string): never => {
    throw new InvalidInputError(`not a complete rask registry export: ${why}; nothing was imported`);
  };
  const parse = (line: string | undefined, n: number) => {
    try {
      return JSON.parse(line ?? '') as Record<string, unknown>;
    } catch {
      return bad(`line ${n + 1} is not JSON`);
    }
  };
  const header = parse(lines[0], 0) as unknown as ExportHeader;
  if (header.format !== EXPORT_FORMAT) bad('the first line is not its header');
  if (header.version !== EXPORT_VERSION) bad(`export version ${header.version} (this build reads ${EXPORT_VERSION})`);
  if (header.layout !== LAYOUT_VERSION) bad(`registry layout ${header.layout} (this build has ${LAYOUT_VERSION}); import with the matching rask`);
  const trailer = parse(lines.at(-1), lines.length - 1) as { end?: boolean; keys?: number; sha256?: string };
  if (lines.length < 2 || trailer.end !== true) bad('the last line is not its trailer (the file was cut short)');
  const hash = createHash('sha256');
  const records: ExportedRecord[] = [];
  for (let i = 1; i < lines.length - 1; i++) {
    hash.update(`${lines[i]}\n`);
    const r = parse(lines[i], i) as { k?: unknown; b?: unknown; x?: unknown };
    if (typeof r.k !== 'string' || (typeof r.b !== 'string' && typeof r.x !== 'string')) bad(`line ${i + 1} is not a record`);
    records.push({ key: r.k as string, body: typeof r.b === 'string' ? Buffer.from(r.b, 'utf8') : Buffer.from(r.x as string, 'base64') });
  }
  if (records.length !== trailer.keys) bad(`the trailer counts ${trailer.keys} records, the file holds ${records.length}`);
  if (hash.digest('hex') !== trailer.sha256) bad('the records do not match the trailer digest (the file was altered or damaged)');
  return { header, records };
}

/**
 * What a registry holds once a server has only started on it: the layout record, the storage
 * claims index, the default project and warehouse. An import may replace these (the file's
 * versions win); any other key means the registry is not empty and the import is refused.
 */
const START_UP = [/^layout\.json$/, /^storage\/claims$/, /^projects\/[^/]+$/, /^p\/[^/]+\/w\/[^/]+$/];

export interface ImportSummary {
  readonly keys: number;
  readonly created: number;
  readonly replaced: number;
  /** Records whose storage root `mapStorage` rewrote (warehouses, the storage-claims index). */
  readonly remapped: number;
  readonly scope: Scope;
  readonly at: string;
}

/**
 * Loads an export into an empty registry (see START_UP), byte for byte (except the storage
 * roots `mapStorage` rewrites, for a move between local and AWS): a key the target does
 * not hold is created (put-if-absent), a start-up record is replaced (put-if-match on the etag
 * just read). Refused, before anything is written, when the file is incomplete or the target
 * holds anything else in the scope.
 */
export async function importRegistry(
  store: ObjectStore,
  text: string,
  options: { onProgress?: (keys: number) => void; mapStorage?: readonly StorageMapping[] } = {},
): Promise<ImportSummary> {
  const { header, records: read } = readExport(text);
  let remapped = 0;
  const records = read.map((r) => {
    const body = options.mapStorage?.length ? remap(r, options.mapStorage) : undefined;
    if (!body) return r;
    remapped++;
    return { key: r.key, body };
  });
  const existing = new Map<string, string>();
  for (const range of scopeRanges(header.scope)) {
    let startAfter: string | undefined;
    for (;;) {
      const page = await store.list({ prefix: range.prefix, startAfter, limit: 1000 });
      for (const o of page.objects) if (!range.exact || o.key === range.prefix) existing.set(o.key, o.etag);
      const last = page.objects.at(-1);
      if (!page.truncated || !last) break;
      startAfter = last.key;
    }
  }
  const foreign = [...existing.keys()].filter((k) => !START_UP.some((re) => re.test(k))).sort(compareKeys);
  if (foreign.length > 0) {
    throw new InvalidInputError(
      `the target registry (${store.url}) is not empty: it holds ${foreign.length} key(s) an import would collide with or leave beside the file's, e.g. ${foreign.slice(0, 5).join(', ')}; import into a fresh registry; nothing was imported`,
    );
  }
  let created = 0;
  let replaced = 0;
  for (const r of records) {
    const etag = existing.get(r.key);
    try {
      if (etag === undefined) {
        await store.putIfAbsent(r.key, r.body);
        created++;
      } else {
        await store.putIfMatch(r.key, r.body, etag);
        replaced++;
      }
    } catch (err) {
      if (err instanceof ConditionFailedError) {
        throw new InvalidInputError(`${r.key} changed while the import ran (someone is writing to the target registry); ${created + replaced} of ${records.length} keys were imported; stop the writer, empty the registry and import again`);
      }
      throw err;
    }
    options.onProgress?.(created + replaced);
  }
  return { keys: records.length, created, replaced, remapped, scope: header.scope, at: header.at };
}

/** `--map-storage FROM=TO`: a warehouse root as it is in the file, and what it becomes. */
export interface StorageMapping {
  readonly from: StorageRoot;
  readonly to: StorageRoot;
}

/** `file:<path>` or `s3://<bucket>/<prefix>` as a storage root. */
export function parseStorageRoot(text: string): StorageRoot {
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.*)$/.exec(text);
  if (s3) return { kind: 's3', bucket: s3[1]!, prefix: s3[2]! === '' || s3[2]!.endsWith('/') ? s3[2]! : `${s3[2]}/` };
  if (text.startsWith('file:') && text.length > 'file:'.length) return { kind: 'file', path: text.slice('file:'.length) };
  throw new InvalidInputError(`a storage root is file:<path> or s3://<bucket>/<prefix> (got ${JSON.stringify(text)})`);
}

const sameRoot = (a: StorageRoot, b: StorageRoot) =>
  a.kind === b.kind && (a.kind === 'file' ? a.path === (b as typeof a).path : a.bucket === (b as typeof a).bucket && a.prefix === (b as typeof a).prefix);

/**
 * The record with its storage root rewritten, or undefined when no mapping applies: warehouse
 * records and the storage-claims index (lib/catalog/storage-claims.ts) name roots; table
 * locations are relative to them and stay as they are.
 */
function remap(r: ExportedRecord, mappings: readonly StorageMapping[]): Buffer | undefined {
  const to = (root: StorageRoot) => mappings.find((m) => sameRoot(m.from, root))?.to;
  if (/^p\/[^/]+\/w\/[^/]+$/.test(r.key)) {
    const rec = JSON.parse(r.body.toString('utf8')) as WarehouseRecord;
    const next = to(rec.storage);
    return next ? Buffer.from(JSON.stringify({ ...rec, storage: next })) : undefined;
  }
  if (r.key === 'storage/claims') {
    const rec = JSON.parse(r.body.toString('utf8')) as StorageClaimsRecord;
    if (!rec.claims.some((c) => to(c.storage))) return undefined;
    return Buffer.from(JSON.stringify({ ...rec, claims: rec.claims.map((c) => ({ ...c, storage: to(c.storage) ?? c.storage })) }));
  }
  return undefined;
}
