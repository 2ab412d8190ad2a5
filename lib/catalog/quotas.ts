import { randomUUID } from 'node:crypto';
import { CatalogError, ErrorCode, QuotaExceededError } from '../errors.js';
import { keys, parseTreeKey } from '../registry/keys.js';
import type { ProjectLimits } from '../registry/records.js';
import { cachedProject, PROJECT_CACHE_MS } from './control/project-cache.js';
import type { CatalogServices } from './services.js';

/**
 * Object quotas per project (issue #28; docs/operations.md, "Object quotas"): how many namespaces
 * and tables a project may hold. Each (project, kind) has one usage record, `p/<P>/quota/<kind>`,
 * and a create door reserves a slot in it with a compare-and-swap before it writes anything, so
 * no number of concurrent creates can pass the quota: each CAS sees the reservations of every
 * CAS before it. No create scans the project.
 *
 * The record holds `used` (objects counted by the last recount, plus reservations folded in since)
 * and `pending` (reservations of the last SETTLE_MS, each naming the key its create writes).
 * Drops do not touch it; the count is made exact again by a **recount** — one LIST of the
 * project's tree, at most once per RECOUNT_INTERVAL_MS — only when a create would be refused.
 * A recount keeps a reservation only while its create may still be running (younger than
 * SETTLE_MS) and its object is not yet in the listing, so what it writes is never less than what
 * exists: usage can be over (a create that failed after its reservation, a drop), never under.
 * The same reservation (`reserveSlots`) counts API keys and principals
 * (lib/catalog/control/principal-quotas.ts) with their own records and recounts.
 */
export const QUOTA_KINDS = ['namespaces', 'tables'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

/** The deployment's quotas per project (RASK_QUOTA_*); 0 = no quota. */
export type QuotaDefaults = Readonly<Record<QuotaKind, number>>;
export const NO_QUOTAS: QuotaDefaults = { namespaces: 0, tables: 0 };

/**
 * A reservation older than this is taken to have finished (written its object or failed): longer
 * than any request runs, whose commits stop at the 25 s commit deadline (lib/deadline.ts) and
 * whose Lambda stops at 28 s.
 */
export const SETTLE_MS = 60_000;
/** At most one recount per record in this time: a refused create costs no scan most of the time. */
export const RECOUNT_INTERVAL_MS = 5_000;
/** Concurrent creates in one project race on one record; they get more attempts than other CAS loops. */
const QUOTA_ATTEMPTS = 40;

interface Reservation {
  readonly id: string;
  /** The registry key the create writes (its object's record). */
  readonly key: string;
  /** Epoch ms of the reservation. */
  readonly at: number;
}

export interface UsageRecord {
  readonly used: number;
  readonly pending: readonly Reservation[];
  /** Epoch ms of the last recount. */
  readonly recountedAt: number;
  /**
   * The quota in force when the record was written. Creates under no quota do not count, so a
   * record written under none (or never under one) is stale once a quota applies: recounted first.
   */
  readonly countedUnder?: number;
  /**
   * Set when a project's own quota is set: until then (the project cache's lifetime plus
   * SETTLE_MS) other processes may still be creating under the old setting without counting, so
   * every create recounts; the first recount after it makes the count exact.
   */
  readonly exactAfter?: number;
}

/** What a create holds between its reservation and its answer. */
export interface QuotaHold {
  /** The create failed: a refusal that wrote nothing gives its slot back; anything else keeps it until the next recount. */
  failed(err: unknown): Promise<void>;
}

const usageKey = (services: CatalogServices, kind: QuotaKind) => keys.quota(services.project, kind);

/** The quota that applies: the project's own, else the default; 0 = none. */
export const limitOf = (own: ProjectLimits | undefined, kind: QuotaKind, defaults: QuotaDefaults): number => own?.[kind] ?? defaults[kind];

const inUse = (record: UsageRecord) => record.used + record.pending.length;

/**
 * Reserves one `kind` slot in the services' project for a create that writes `objectKey` (or one
 * per key, all or none, for a door that adds several: a namespace undrop), or throws
 * QuotaExceededError (nothing written). Without a quota it costs one read and writes nothing.
 */
export async function reserveQuota(
  services: CatalogServices,
  kind: QuotaKind,
  objectKey: string | readonly string[],
  defaults: QuotaDefaults,
): Promise<QuotaHold | undefined> {
  const objectKeys = typeof objectKey === 'string' ? [objectKey] : objectKey;
  if (objectKeys.length === 0) return undefined;
  // The guard has just read the project record, so this is the cache's (docs/governance.md).
  const own = (await cachedProject(services.registry, services.project, services.now().getTime()))?.limits;
  const limit = limitOf(own, kind, defaults);
  if (limit <= 0) return undefined;
  return reserveSlots(services, projectCounter(services, kind), objectKeys, limit);
}

/**
 * What is counted against one usage record: the record's key, the one LIST that counts what
 * exists (a recount), and the refusal that names the quota. The project quotas above and the
 * quotas on principals and API keys (lib/catalog/control/principal-quotas.ts) share the
 * reservation below, so every quota has the same guarantees.
 */
export interface SlotCounter {
  /** For messages: "a tables slot of project \"A\"". */
  readonly what: string;
  readonly usageKey: string;
  /** Counts what exists now. */
  scan(now: number): Promise<Scan>;
  refusal(limit: number, used: number, wanted: number): Error;
}

/**
 * Reserves a slot per object key (all or none) in `counter`'s usage record under `limit` (> 0),
 * by compare-and-swap, or throws the counter's refusal having written nothing.
 */
export async function reserveSlots(services: CatalogServices, counter: SlotCounter, objectKeys: readonly string[], limit: number): Promise<QuotaHold> {
  const key = counter.usageKey;
  const first = await services.registry.read<UsageRecord>(key);
  const ids: string[] = objectKeys.map(() => randomUUID());
  let scan: Scan | undefined;
  let attempt = 0;
  await services.registry.retrying(
    `reserve ${counter.what}`,
    async () => {
      const found = attempt++ === 0 ? first : await services.registry.read<UsageRecord>(key);
      const now = services.now().getTime();
      let record = found?.value ? settled(found.value, now) : undefined;
      const stale = !record || (record.countedUnder ?? 0) <= 0 || record.recountedAt < (record.exactAfter ?? 0);
      if (stale || (inUse(record!) + objectKeys.length > limit && now - lastRecount(services, key, record!) >= RECOUNT_INTERVAL_MS)) {
        // No count yet (the first create under a quota) or the quota looks full: count what exists.
        // A scan older than a lost race is still valid: recounted() keeps every reservation made since.
        scan ??= await counter.scan(now);
        noteRecount(services, key, now);
        record = recounted(record ?? { used: 0, pending: [], recountedAt: 0 }, scan);
      }
      const current = record!;
      // An object the listing found exists already (a resumed namespace undrop's, or a create
      // about to answer "exists"): it is counted in `used` and needs no second slot.
      const wanted = objectKeys.flatMap((k, i) => (scan?.keys.has(k) ? [] : [{ id: ids[i], key: k, at: now }]));
      if (wanted.length > 0 && inUse(current) + wanted.length > limit) {
        // The recount, if any, is kept only by writing it; a refusal writes nothing.
        throw counter.refusal(limit, inUse(current), wanted.length);
      }
      const next: UsageRecord = { ...current, countedUnder: limit, pending: [...current.pending, ...wanted] };
      if (found) await services.registry.replace(key, next, found.etag);
      else await services.registry.create(key, next);
    },
    QUOTA_ATTEMPTS,
  );
  return {
    failed: async (err) => {
      if (!wroteNothing(err)) return;
      await services.registry.retrying(`release ${counter.what}`, async () => {
        const found = await services.registry.read<UsageRecord>(key);
        const record = found?.value;
        if (!found || !record?.pending.some((r) => ids.includes(r.id))) return;
        await services.registry.replace(key, { ...record, pending: record.pending.filter((r) => !ids.includes(r.id)) }, found.etag);
      });
    },
  };
}

/**
 * After a quota's owner changed it: `counter`'s record starts from what exists, and every create
 * recounts until no process can still be creating under the old setting (`exactAfter`, after
 * `cacheMs` — how long other processes may still see the old setting — and SETTLE_MS).
 */
export async function recountSlots(services: CatalogServices, counter: SlotCounter, limit: number, cacheMs: number): Promise<void> {
  if (limit <= 0) return;
  const now = services.now().getTime();
  const scan = await counter.scan(now);
  await services.registry.retrying(`recount ${counter.what}`, async () => {
    const found = await services.registry.read<UsageRecord>(counter.usageKey);
    const base = recounted(found?.value ? settled(found.value, now) : { used: 0, pending: [], recountedAt: 0 }, scan);
    const next: UsageRecord = { ...base, countedUnder: limit, exactAfter: now + cacheMs + SETTLE_MS };
    if (found) await services.registry.replace(counter.usageKey, next, found.etag);
    else await services.registry.create(counter.usageKey, next);
  });
}

/** The usage record of one kind of object of the services' project. */
function projectCounter(services: CatalogServices, kind: QuotaKind): SlotCounter {
  return {
    what: `a ${kind} slot of project ${JSON.stringify(services.project)}`,
    usageKey: usageKey(services, kind),
    scan: async (now) => scanOf(await scanTree(services, now), kind),
    refusal: (limit, used, wanted) => refusal(services, kind, limit, used, wanted),
  };
}

/**
 * Refusals the doors make before any write (docs/rules.md rule 1: every guard runs before the
 * write): the slot is free again at once. Any other failure may have written the object, so its
 * reservation stays until a recount finds out.
 */
function wroteNothing(err: unknown): boolean {
  if (!(err instanceof CatalogError)) return false;
  return (
    [ErrorCode.InvalidInput, ErrorCode.PermissionDenied, ErrorCode.NamespaceNotFound, ErrorCode.TableNotFound].includes(err.code as 13) ||
    err.code === ErrorCode.NamespaceAlreadyExists ||
    err.code === ErrorCode.TableAlreadyExists
  );
}

/**
 * When this process last recounted each record: a refusal writes nothing (not even its recount),
 * so the interval between scans is kept here, per registry, bounded like every cache.
 */
const recounts = new WeakMap<object, Map<string, number>>();
const MAX_RECOUNT_ENTRIES = 1024;
function lastRecount(services: CatalogServices, key: string, record: UsageRecord): number {
  return Math.max(record.recountedAt, recounts.get(services.registry)?.get(key) ?? 0);
}
function noteRecount(services: CatalogServices, key: string, at: number): void {
  let seen = recounts.get(services.registry);
  if (!seen) recounts.set(services.registry, (seen = new Map()));
  seen.delete(key);
  seen.set(key, at);
  if (seen.size > MAX_RECOUNT_ENTRIES) seen.delete(seen.keys().next().value as string);
}

/** Reservations whose create has surely finished are folded into `used` (a recount corrects it). */
function settled(record: UsageRecord, now: number): UsageRecord {
  const old = record.pending.filter((r) => now - r.at >= SETTLE_MS).length;
  if (old === 0) return record;
  return { ...record, used: record.used + old, pending: record.pending.filter((r) => now - r.at < SETTLE_MS) };
}

/** What a recount found. */
export interface Scan {
  /** When the LIST began: a reservation older than SETTLE_MS by then had finished before it. */
  readonly startedAt: number;
  /** The objects found (their creates have finished): a reservation for one of them is no longer pending. */
  readonly keys: ReadonlySet<string>;
  /** How many of them count against the quota (a revoked API key is found, and counts no more). */
  readonly count: number;
}

interface TreeScan {
  readonly startedAt: number;
  readonly keys: ReadonlySet<string>;
  readonly counts: Readonly<Record<QuotaKind, number>>;
}

const scanOf = (tree: TreeScan, kind: QuotaKind): Scan => ({ startedAt: tree.startedAt, keys: tree.keys, count: tree.counts[kind] });

/** One LIST of the project's tree (every namespace and table record). */
async function scanTree(services: CatalogServices, now: number): Promise<TreeScan> {
  const prefix = keys.subtree(services.project, []);
  const found = new Set<string>();
  const counts = { namespaces: 0, tables: 0 };
  let startAfter: string | undefined;
  for (;;) {
    const page = await services.registry.listKeys({ prefix, startAfter });
    for (const key of page.keys) {
      const parsed = parseTreeKey(services.project, key);
      if (!parsed) continue;
      found.add(key);
      counts[parsed.kind === 'namespace' ? 'namespaces' : 'tables']++;
    }
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || last === undefined) break;
    startAfter = last;
  }
  return { startedAt: now, keys: found, counts };
}

/**
 * The record after a recount: `used` is what the listing found; a reservation stays while its
 * object is not in the listing and its create may have been running when the listing was made.
 */
function recounted(record: UsageRecord, scan: Scan): UsageRecord {
  return {
    ...record,
    used: scan.count,
    pending: record.pending.filter((r) => !scan.keys.has(r.key) && scan.startedAt - r.at < SETTLE_MS),
    recountedAt: scan.startedAt,
  };
}

function refusal(services: CatalogServices, kind: QuotaKind, limit: number, used: number, wanted: number): QuotaExceededError {
  const what = wanted === 1 ? `this ${kind === 'namespaces' ? 'namespace' : 'table'} was not created` : `these ${wanted} ${kind} were not added`;
  return new QuotaExceededError(
    kind,
    limit,
    used,
    `project ${JSON.stringify(services.project)} has reached its quota of ${limit} ${kind} (${used} in use or being created), so ${what}; drop some, or ask a platform administrator to raise the quota (POST /v1/limits {"${kind}": <n>} on the project)`,
  );
}

export interface QuotaView {
  /** The quota in force; null: none. */
  readonly limit: number | null;
  /** Whose it is: the project's own (POST /v1/limits) or the deployment's default (RASK_QUOTA_*). */
  readonly source: 'project' | 'default';
  /** Objects counted (as of the last recount, with the reservations since); null while nothing is counted. */
  readonly in_use: number | null;
}

/** Slots in use in a usage record counted under `limit` (> 0), as the limits doors show them; null while nothing is counted. */
export async function slotsInUse(services: CatalogServices, usageKey: string, limit: number): Promise<number | null> {
  const record = (await services.registry.read<UsageRecord>(usageKey))?.value;
  if (!record || limit <= 0 || (record.countedUnder ?? 0) <= 0) return null;
  return inUse(settled(record, services.now().getTime()));
}

/** Usage and quota of every kind, as the limits door shows them (a recount is not forced). */
export async function readQuotas(services: CatalogServices, own: ProjectLimits | undefined, defaults: QuotaDefaults): Promise<Record<QuotaKind, QuotaView>> {
  const records = await Promise.all(QUOTA_KINDS.map((kind) => services.registry.read<UsageRecord>(usageKey(services, kind))));
  const now = services.now().getTime();
  return Object.fromEntries(
    QUOTA_KINDS.map((kind, i) => {
      const record = records[i]?.value;
      const limit = limitOf(own, kind, defaults);
      const counted = record !== undefined && limit > 0 && (record.countedUnder ?? 0) > 0;
      return [kind, { limit: limit > 0 ? limit : null, source: own?.[kind] !== undefined ? 'project' : 'default', in_use: counted ? inUse(settled(record, now)) : null }];
    }),
  ) as Record<QuotaKind, QuotaView>;
}

/**
 * After a project's own quotas changed (`limits` now in force): recounts every kind under a
 * quota so its record starts from what exists, and marks it to be recounted by every create
 * until no process can still be creating under the old setting (`exactAfter`).
 */
export async function recountUsage(services: CatalogServices, limits: ProjectLimits | undefined, defaults: QuotaDefaults): Promise<void> {
  // One LIST for every kind.
  const tree = await scanTree(services, services.now().getTime());
  for (const kind of QUOTA_KINDS) {
    const counter: SlotCounter = { ...projectCounter(services, kind), scan: async () => scanOf(tree, kind) };
    await recountSlots(services, counter, limitOf(limits, kind, defaults), PROJECT_CACHE_MS);
  }
}
