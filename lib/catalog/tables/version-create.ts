import { ConcurrentModificationError, InvalidInputError, TableNotFoundError } from '../../errors.js';
import { ConditionFailedError, type ObjectInfo, type ObjectStore } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';
import { isMain, readBranch, validateBranch } from '../dataset/lance-refs.js';
import { storePathToRelative } from '../dataset/location.js';
import { readTable, resolveTable, type ResolvedTable } from '../protocols/lookup.js';
import { fmtId } from '../ids.js';
import { ensureHasData } from '../protocols/markers.js';
import { manifestName, parseManifestName, versionsPrefix, type NamingScheme } from '../dataset/manifests.js';
import { requireWarehouse } from '../warehouses.js';
import { latestEntry, tableVersionOf, type ChainEntry, type TableVersionJson } from '../dataset/version-chain.js';

export interface CreateVersionInput {
  readonly id: readonly string[];
  readonly version: number;
  /** The client's staging manifest, relative to the object-store root. */
  readonly manifestPath: string;
  readonly manifestSize?: number;
  /** The staging object's etag as the client's store reported it. */
  readonly eTag?: string;
  readonly namingScheme?: NamingScheme;
  readonly branch?: string;
}

/**
 * CreateTableVersion: the commit point of managed versioning (rest-conformance §4).
 *
 * The client has written its manifest to a staging path; we copy it to the version's final name
 * with put-if-absent through the object-store port. That write is the linearization point: of
 * any number of concurrent commits of version N exactly one creates the final object, and every
 * other one answers 409 / code 14, after which Lance re-reads the latest version and retries.
 * On top of that we enforce strict CAS (N must be latest + 1), so a client working from a stale
 * read cannot leave a gap in the chain.
 *
 * The final object is complete before we answer (read-your-writes for every later version/list),
 * and a retry whose bytes equal what is already there is a success, not a conflict.
 */
export async function createTableVersion(
  services: CatalogServices,
  input: CreateVersionInput,
): Promise<{ version: TableVersionJson }> {
  const branch = validateBranch(input.branch);
  // The chain's latest version is looked up while the table record is read (one round trip for
  // both), under the versions directory the staging path implies; used only if the record agrees.
  const onMain = isMain(branch);
  const guess = onMain ? latestImplied(services, input).catch(() => undefined) : undefined;
  const table = await resolveTable(services, input.id);
  // A managed table's first commit: its has-data marker first (markers.ts), so the commit is
  // listed by include_declared=false the moment it exists. Later commits pay nothing here.
  if (table.record.dataMarker === 'none') {
    await ensureHasData(services, input.id, table, () => readTable(services, input.id), () =>
      new TableNotFoundError(`table ${fmtId(input.id)} was dropped, renamed or re-created while the commit ran; look it up again`),
    );
  }
  const prefix = versionsPrefix(table.record.path, branch);
  const { stagingKey, finalKey } = stagingAndFinal(table, prefix, input);
  if (onMain) {
    const fast = await commitByCopy(table, input, prefix, stagingKey, finalKey, await guess);
    if (fast) return fast;
  }
  return commitTheLongWay(services, table, input, branch, prefix, stagingKey, finalKey);
}

/** The latest version under the versions directory the staging path implies. */
interface ImpliedLatest {
  readonly warehouse: string;
  readonly prefix: string;
  readonly latest: ChainEntry | undefined;
}

async function latestImplied(services: CatalogServices, input: CreateVersionInput): Promise<ImpliedLatest | undefined> {
  const warehouse = await requireWarehouse(services, services.defaultWarehouse);
  const relative = storePathToRelative(warehouse.storage, input.manifestPath);
  const m = relative === undefined ? null : /^(.+\/_versions\/)\d+\.manifest-[^/]+$/.exec(relative);
  if (!m) return undefined;
  return { warehouse: warehouse.name, prefix: m[1], latest: await latestEntry(services.storageFor(warehouse.storage), m[1]) };
}

/**
 * The usual commit on main in one conditional request: when version N is the latest + 1 (one
 * LIST, usually made alongside the table read), the staging manifest is copied onto N's name
 * with copy-if-absent, so neither its bytes nor a HEAD afterwards are needed. On S3 with the
 * client's e_tag the copy is pinned to exactly the bytes the client staged (CopySourceIfMatch);
 * elsewhere a HEAD of the staging file (alongside the LIST) pins it and checks its size.
 * Anything unusual (N not next, staging missing or changed, N taken meanwhile) answers
 * undefined and the long way gives the precise answer.
 */
async function commitByCopy(
  table: ResolvedTable,
  input: CreateVersionInput,
  prefix: string,
  stagingKey: string,
  finalKey: string,
  guess: ImpliedLatest | undefined,
): Promise<{ version: TableVersionJson } | undefined> {
  const { store } = table;
  const pinned = table.warehouse.storage.kind === 's3' && input.eTag !== undefined;
  const known = guess?.warehouse === table.warehouse.name && guess.prefix === prefix;
  const [latest, staging] = await Promise.all([
    known ? guess.latest : latestEntry(store, prefix),
    pinned ? undefined : store.head(stagingKey),
  ]);
  if (input.version !== (latest ? latest.version + 1 : 1)) return undefined;
  if (!pinned && !staging) return undefined;
  if (staging && input.manifestSize !== undefined && input.manifestSize !== staging.size) return undefined;
  let copied;
  try {
    copied = await store.copyIfAbsent(stagingKey, finalKey, { sourceEtag: pinned ? input.eTag : staging!.etag });
  } catch (err) {
    if (err instanceof ConditionFailedError) return undefined;
    throw err;
  }
  if (!copied) return undefined;
  // The staging file stays: no DELETE on the commit path (one request less per commit). A retry
  // whose answer was lost finds it and is matched byte for byte (the long way); the orphan scan
  // takes it once past its grace period (docs/managed-versioning.md, step 5).
  const size = copied.size ?? staging?.size ?? input.manifestSize ?? (await store.head(finalKey))?.size ?? 0;
  const info: ObjectInfo = { key: finalKey, etag: copied.etag, size, lastModified: copied.lastModified };
  return { version: tableVersionOf(table.warehouse.storage, input.version, info) };
}

/** Every case, from a full read of the staging file and the chain (the original protocol). */
async function commitTheLongWay(
  services: CatalogServices,
  table: ResolvedTable,
  input: CreateVersionInput,
  branch: string | undefined,
  prefix: string,
  stagingKey: string,
  finalKey: string,
): Promise<{ version: TableVersionJson }> {
  const { store } = table;
  const answer = (info: ObjectInfo) => ({ version: tableVersionOf(table.warehouse.storage, input.version, info) });

  const staging = await store.get(stagingKey);
  if (!staging) {
    // The orphan scan (or an older server's commit) deleted the staging file, so a retry after a
    // lost response may land here. Where the store's etags are content hashes (S3 single-part uploads) the
    // client's etag proves the final object is its own; otherwise we cannot tell, and code 14
    // sends the client to version/describe, which is how Lance settles an unknown outcome.
    const existing = await store.head(finalKey);
    if (existing && input.eTag !== undefined && existing.etag === input.eTag && existing.size === input.manifestSize) {
      return answer(existing);
    }
    if (existing) throw versionTaken(input, 'its staging manifest is gone, so this retry cannot be matched to it');
    throw new InvalidInputError(
      `staging manifest ${JSON.stringify(input.manifestPath)} does not exist; write it before CreateTableVersion`,
    );
  }
  if (input.manifestSize !== undefined && input.manifestSize !== staging.size) {
    throw new InvalidInputError(
      `manifest_size ${input.manifestSize} does not match the staging manifest's ${staging.size} bytes`,
    );
  }

  const latest = await latestEntry(store, prefix);
  if (latest && input.version <= latest.version) {
    // Already committed: an identical retry succeeds, anything else lost the race.
    const settled = await sameAsFinal(store, finalKey, staging.body);
    if (!settled) throw versionTaken(input, `the latest version is ${latest.version} and its manifest differs from this one`);
    return answer(settled);
  }
  const expected = latest ? [latest.version + 1] : await firstVersion(table, branch);
  if (expected !== 'any' && !expected.includes(input.version)) {
    throw new ConcurrentModificationError(
      `Version CAS failed for table ${fmtId(input.id)}${branch ? ` branch ${branch}` : ''}: ` +
        `version ${input.version} is not the next version (expected ${expected.join(' or ')}); reload and retry`,
    );
  }

  try {
    await store.putIfAbsent(finalKey, staging.body);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    const settled = await sameAsFinal(store, finalKey, staging.body);
    if (!settled) throw versionTaken(input, 'a concurrent commit created it first');
    return answer(settled);
  }
  // HEAD for the stored timestamp and etag, so this answer equals what version/list will say.
  const info = await store.head(finalKey);
  return answer(info ?? { key: finalKey, etag: '', size: staging.size, lastModified: services.now() });
}

/**
 * The staging path must be this table's, for exactly this version: `<versions dir>/<final
 * name>-<suffix>`, which is how Lance names staging manifests. Anything else could make us copy
 * bytes from elsewhere in the warehouse into this table's history.
 */
function stagingAndFinal(table: ResolvedTable, prefix: string, input: CreateVersionInput) {
  const relative = storePathToRelative(table.warehouse.storage, input.manifestPath);
  const bad = (why: string) =>
    new InvalidInputError(
      `manifest_path ${JSON.stringify(input.manifestPath)} ${why}; expected the staging manifest ` +
        `${prefix}<final manifest name>-<suffix> of version ${input.version} under the table's location`,
    );
  if (relative === undefined || !relative.startsWith(prefix)) throw bad('is not in this table\u2019s versions directory');
  const m = /^(\d+\.manifest)-([^/]+)$/.exec(relative.slice(prefix.length));
  if (!m) throw bad('is not a staging manifest name');
  const parsed = parseManifestName(m[1]);
  if (!parsed || parsed.version !== input.version) throw bad(`names another version`);
  if (input.namingScheme !== undefined && parsed.scheme !== input.namingScheme) {
    throw bad(`is a ${parsed.scheme} name but naming_scheme is ${input.namingScheme}`);
  }
  return { stagingKey: relative, finalKey: prefix + manifestName(input.version, parsed.scheme) };
}

/**
 * What an empty chain may start with: version 1 on main. A branch's chain starts with a copy of
 * its parent's manifest at `parentVersion` — and LanceDB commits that first manifest BEFORE it
 * writes `_refs/branches/<b>.json` (seen on the wire), so on an empty branch chain without a ref
 * the branch is being created and any version is accepted; put-if-absent still admits one writer
 * per version. Once the ref exists, the chain must start at its parent version (or the next).
 */
async function firstVersion(table: ResolvedTable, branch: string | undefined): Promise<number[] | 'any'> {
  if (isMain(branch)) return [1];
  const ref = await readBranch(table.store, table.record.path, branch!);
  return ref ? [ref.parentVersion, ref.parentVersion + 1] : 'any';
}

/** The final object when its bytes equal `body` (an identical retry), else undefined. */
async function sameAsFinal(store: ObjectStore, finalKey: string, body: Buffer): Promise<ObjectInfo | undefined> {
  const existing = await store.get(finalKey);
  if (!existing?.body.equals(body)) return undefined;
  return { key: finalKey, etag: existing.etag, size: existing.size, lastModified: existing.lastModified };
}

function versionTaken(input: CreateVersionInput, why: string) {
  return new ConcurrentModificationError(
    `version ${input.version} of table ${fmtId(input.id)} is already committed (${why}); reload and retry`,
  );
}
