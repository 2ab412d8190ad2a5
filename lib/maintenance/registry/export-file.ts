import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../errors.js';
import { compareKeys, ConditionFailedError, type ObjectStore } from '../../ports/object-store.js';
import type { RegistryHistory } from '../../ports/registry-history.js';
import type { StorageRoot } from '../../ports/storage-root.js';
import { randomUUID } from 'node:crypto';
import { decodeSegment, keys } from '../../registry/keys.js';
import { LAYOUT_VERSION } from '../../registry/layout.js';
import { govKeys } from '../../registry/principal-keys.js';
import type { ApiKeyRecord } from '../../registry/principal-records.js';
import type { ProjectRecord, RootClaim, StorageClaimsRecord, WarehouseRecord } from '../../registry/records.js';
import { LINEAGE, WRITE_ID } from '../../registry/registry.js';
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
 * A **project** export holds the project's keys (`projects/<P>`, everything under `p/<P>/`:
 * tree, claims on its table locations, trash, grants, quotas, jobs, policies) and then the
 * global records those depend on (`projectDependencies`): the principals holding grants in the
 * project and their API keys (hashes only), and the project's entries of the storage-claims
 * index (`storage/claims`, one record for every project: only the project's own roots are
 * written, and an import merges them into the target's index). Nothing of another project:
 * no other project's grants, roots or records, no principal without a grant in the project.
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
  const emit = async (key: string, body: Buffer) => {
    const line = `${JSON.stringify({ k: key, ...encode(body) })}\n`;
    hash.update(line);
    await write(line);
    count++;
    bytes += body.length;
    options.onProgress?.(count);
  };
  const grantees: string[] = [];
  for await (const k of keysAt(history, scope, at)) {
    if (!k.at) continue;
    if ('project' in scope && k.key.startsWith(govKeys.grantsPrefix(scope.project))) grantees.push(decodeSegment(k.key.slice(govKeys.grantsPrefix(scope.project).length)));
    await emit(k.key, await history.body(k.at));
  }
  if ('project' in scope) for (const d of await projectDependencies(history, scope.project, grantees, at)) await emit(d.key, d.body);
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

/** The body of `key` as it was at `at` (exact key: the history lists by prefix). */
async function bodyAt(history: RegistryHistory, key: string, at: Date): Promise<Buffer | undefined> {
  for await (const versions of history.versions(key)) {
    if (versions[0]?.key !== key) continue;
    const then = versions.find((v) => v.time.getTime() <= at.getTime());
    return then && !then.deleted ? history.body(then) : undefined;
  }
  return undefined;
}

const parsed = <T>(body: Buffer): T | undefined => {
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
};

/**
 * What a project's records depend on outside `p/<P>/`, as at `at`, in key order: the API keys of
 * the principals holding grants in the project (`grantees`: read off its grants keys), those
 * principals, and the project's own entries of the storage-claims index. One listing of the API
 * keys with a GET of each (keys are few per deployment), one read per principal, one of the index.
 */
export async function projectDependencies(history: RegistryHistory, project: string, grantees: readonly string[], at: Date): Promise<ExportedRecord[]> {
  const out: ExportedRecord[] = [];
  const who = new Set(grantees);
  if (who.size > 0) {
    for await (const versions of history.versions(govKeys.apiKeysPrefix())) {
      const then = versions.find((v) => v.time.getTime() <= at.getTime());
      if (!then || then.deleted) continue;
      const body = await history.body(then);
      if (who.has(parsed<ApiKeyRecord>(body)?.principal ?? '')) out.push({ key: then.key, body });
    }
    for (const name of [...who].sort(compareKeys)) {
      const body = await bodyAt(history, govKeys.principal(name), at);
      if (body) out.push({ key: govKeys.principal(name), body });
    }
  }
  const index = await bodyAt(history, keys.storageClaims(), at);
  const claims = index ? (parsed<StorageClaimsRecord>(index)?.claims ?? []).filter((c) => c.project === project) : [];
  if (claims.length > 0) out.push({ key: keys.storageClaims(), body: Buffer.from(JSON.stringify({ kind: 'storage-claims', claims } satisfies StorageClaimsRecord)) });
  return out.sort((a, b) => compareKeys(a.key, b.key));
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
  // A project export carries its project's keys and the global records they depend on; any
  // other key is none of the project's (a hand-made or altered file): refused, so an import of
  // one project can never write another's records.
  const project = 'project' in header.scope ? header.scope.project : undefined;
  const inScope = (key: string) => scopeRanges(header.scope).some((r) => (r.exact ? key === r.prefix : key.startsWith(r.prefix)));
  const dependency = (key: string) => key === keys.storageClaims() || key.startsWith(govKeys.principalsPrefix()) || key.startsWith(govKeys.apiKeysPrefix());
  if (project !== undefined) {
    // Principals only with a grant in the project, API keys only of those principals.
    const grantees = new Set(records.filter((r) => r.key.startsWith(govKeys.grantsPrefix(project))).map((r) => govKeys.principal(decodeSegment(r.key.slice(govKeys.grantsPrefix(project).length)))));
    const principals = new Set(records.filter((r) => r.key.startsWith(govKeys.principalsPrefix())).map((r) => r.key));
    const ownKey = (r: ExportedRecord) => principals.has(govKeys.principal(parsed<ApiKeyRecord>(r.body)?.principal ?? ''));
    const stray = records
      .filter((r) => (!inScope(r.key) && !dependency(r.key)) || (principals.has(r.key) && !grantees.has(r.key)) || (r.key.startsWith(govKeys.apiKeysPrefix()) && !ownKey(r)))
      .map((r) => r.key);
    if (stray.length > 0) throw new InvalidInputError(`the export of project ${JSON.stringify(project)} holds key(s) of nothing it depends on, e.g. ${stray.slice(0, 5).join(', ')}; nothing was imported`);
  }
  const deps = project === undefined ? [] : records.filter((r) => !inScope(r.key) && r.key !== keys.storageClaims());
  const held = await Promise.all(deps.map(async (r) => ((await store.head(r.key)) ? r.key : undefined)));
  const foreign = [...existing.keys()]
    .filter((k) => !START_UP.some((re) => re.test(k)))
    .concat(held.filter((k): k is string => k !== undefined))
    .sort(compareKeys);
  if (foreign.length > 0) {
    throw new InvalidInputError(
      `the target registry (${store.url}) is not empty: it holds ${foreign.length} key(s) an import would collide with or leave beside the file's, e.g. ${foreign.slice(0, 5).join(', ')}; import into a fresh registry; nothing was imported`,
    );
  }
  let created = 0;
  let replaced = 0;
  let rootClaims: readonly RootClaim[] | undefined;
  for (const r of records) {
    if (project !== undefined && r.key === keys.storageClaims()) {
      // The project's entries of the one index every project shares: merged last, once its warehouse records are there.
      rootClaims = JSON.parse(r.body.toString('utf8')).claims as RootClaim[];
      continue;
    }
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
  if (project !== undefined && rootClaims) {
    if ((await mergeRootClaims(store, project, rootClaims)) === 'created') created++;
    else replaced++;
  }
  return { keys: records.length, created, replaced, remapped, scope: header.scope, at: header.at };
}

/**
 * Puts project `project`'s root claims into the target's storage-claims index (lib/catalog/storage-claims.ts):
 * the target's own entries of every other project stay, the project's are the file's. A target
 * without the index gets one built as the catalog builds it (every other project's warehouse
 * records) plus the file's entries. Compare-and-swap, retried when a server writes it meanwhile.
 */
async function mergeRootClaims(store: ObjectStore, project: string, claims: readonly RootClaim[]): Promise<'created' | 'replaced'> {
  for (let attempt = 0; ; attempt++) {
    const got = await store.get(keys.storageClaims());
    try {
      if (!got) {
        const others = (await warehouseRoots(store)).filter((c) => c.project !== project);
        await store.putIfAbsent(keys.storageClaims(), Buffer.from(JSON.stringify({ kind: 'storage-claims', claims: [...others, ...claims], [WRITE_ID]: randomUUID() })));
        return 'created';
      }
      const { [WRITE_ID]: _w, [LINEAGE]: _l, ...current } = JSON.parse(got.body.toString('utf8')) as StorageClaimsRecord & Record<string, unknown>;
      const merged = { ...current, claims: [...(current.claims ?? []).filter((c) => c.project !== project), ...claims], [WRITE_ID]: randomUUID() };
      await store.putIfMatch(keys.storageClaims(), Buffer.from(JSON.stringify(merged)), got.etag);
      return 'replaced';
    } catch (err) {
      if (!(err instanceof ConditionFailedError) || attempt >= 5) throw err;
    }
  }
}

/** Every warehouse root the target's records name, as `everyWarehouseRoot` (storage-claims.ts) builds them. */
async function warehouseRoots(store: ObjectStore): Promise<RootClaim[]> {
  const out: RootClaim[] = [];
  const children = async (prefix: string) => {
    const found: string[] = [];
    let startAfter: string | undefined;
    for (;;) {
      const page = await store.list({ prefix, startAfter, limit: 1000 });
      for (const o of page.objects) if (!o.key.slice(prefix.length).includes('/')) found.push(o.key);
      const last = page.objects.at(-1);
      if (!page.truncated || !last) return found;
      startAfter = last.key;
    }
  };
  for (const projectKey of await children(keys.projectsPrefix())) {
    const p = await store.get(projectKey);
    const name = p && parsed<ProjectRecord>(p.body)?.name;
    if (!name) continue;
    for (const whKey of await children(keys.warehousesPrefix(name))) {
      const w = await store.get(whKey);
      const rec = w && parsed<WarehouseRecord>(w.body);
      if (rec?.storage) out.push({ project: rec.project, warehouse: rec.name, storage: rec.storage, id: `existing:${whKey}`, claimedAt: rec.createdAt ?? new Date().toISOString() });
    }
  }
  return out;
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
