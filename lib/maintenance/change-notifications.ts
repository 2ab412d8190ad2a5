/**
 * The change relay's notification path (docs/events.md, "Delivery on AWS: notifications"): S3
 * Event Notifications, delivered by EventBridge through the relay's notification queue
 * (infra/constructs/change-relay.ts), instead of a scan that looks at everything every minute.
 * Two kinds of "Object Created" notification reach it:
 *
 * - **An entry of the change log** (`<registry prefix>changes/<project>/…`, written by a door, a
 *   maintenance pass, a job, or the relay itself): the relay reads the exact object version the
 *   notification names and puts the event on the bus. This is the only way an event reaches the
 *   bus while notifications are on; the scheduled scan then reads the log for its claims only.
 * - **A manifest under a table's `_versions/`** in a warehouse bucket: resolved to the registered
 *   table whose location it is in (the warehouses' roots, then the location claim and the table
 *   record it names: O(1) reads per manifest, whatever the registry holds), and turned into a
 *   `dev.rask.table.version.created` event with `via: storage` unless some event of the log claims
 *   that version (a door's, a job's, a pass's: lib/maintenance/change-relay.ts explains claims).
 *   The claim of a catalog commit is appended after its manifest, so a manifest is judged only
 *   once it is `settleMs` old (the queue delays every notification by that much; a younger one
 *   waits out the rest), exactly as the scan judges. The event has the id the scan would give it
 *   (storageCommitId), so a commit both paths find is one change after dedup by `id`. It is
 *   appended to the log, and its own notification takes it to the bus.
 *
 * Anything else (a manifest of an unregistered location, a branch's `_versions/`, a staging
 * file) is counted as ignored. A notification whose work failed (a read, the bus) is reported
 * back by index, so the queue offers it again (delivery at least once; ids are stable).
 *
 * Order: S3 gives each write of a key a sequencer that grows with the writes of that key; a
 * batch's notifications are taken per key in sequencer order, log entries in key (append) order
 * and manifests of one table in version order. Across keys, no order (docs/events.md, "Ordering").
 */
import type { CatalogServices } from '../catalog/services.js';
import { parseManifestName } from '../catalog/dataset/manifests.js';
import { cloudEvent, type RaskEvent } from '../events/cloudevent.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import { keys } from '../registry/keys.js';
import type { LocationClaimRecord, TableRecord, WarehouseRecord } from '../registry/records.js';
import { forEachLimited } from '../concurrency.js';
import { claimKey, namedCommits, STORAGE_COMMIT_EVENT, storageCommitId } from './change-relay.js';
import { listProjects, listWarehouses } from './estate.js';

/** One S3 "Object Created" notification, as EventBridge delivers it (detail-type `Object Created`, source `aws.s3`). */
export interface ObjectCreated {
  readonly bucket: string;
  readonly key: string;
  /** Absent in a bucket without versioning. */
  readonly versionId?: string;
  /** S3's per-key order of writes (hex; compare after padding to equal length). */
  readonly sequencer: string;
  /** When S3 took the write (the event's `time`). */
  readonly time: Date;
}

/** The notification an EventBridge event carries, or undefined when it is no S3 "Object Created" event. */
export function parseObjectCreated(event: unknown): ObjectCreated | undefined {
  if (event === null || typeof event !== 'object') return undefined;
  const e = event as { source?: unknown; 'detail-type'?: unknown; time?: unknown; detail?: { bucket?: { name?: unknown }; object?: { key?: unknown; 'version-id'?: unknown; sequencer?: unknown } } };
  if (e.source !== 'aws.s3' || e['detail-type'] !== 'Object Created') return undefined;
  const bucket = e.detail?.bucket?.name;
  const object = e.detail?.object;
  if (typeof bucket !== 'string' || typeof object?.key !== 'string' || typeof object.sequencer !== 'string') return undefined;
  const time = typeof e.time === 'string' ? new Date(e.time) : new Date(NaN);
  if (Number.isNaN(time.getTime())) return undefined;
  // EventBridge's S3 events carry the key as written (not URL-encoded, unlike S3's own notifications).
  return { bucket, key: object.key, ...(typeof object['version-id'] === 'string' ? { versionId: object['version-id'] } : {}), sequencer: object.sequencer, time };
}

export interface NotificationSources {
  /** The registry's bucket and key prefix (the change log is at `<prefix>changes/`). */
  readonly registryBucket: string;
  readonly registryPrefix: string;
  /** The bytes of one version of a registry key (relative to the registry prefix); undefined when it is gone. */
  readVersion(key: string, versionId: string | undefined): Promise<Buffer | undefined>;
  /** The change log's cursor just before the entries appended at `time` (lib/adapters/aws/object-change-log.ts). */
  cursorAt(time: Date): string;
}

export interface NotificationOptions {
  /** The bus; absent: log entries are read and counted, nothing is published. */
  readonly publisher?: EventPublisher;
  /** How old a manifest must be before it is judged (the scan's settle window on AWS). */
  readonly settleMs: number;
  readonly now?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface NotificationReport {
  /** Log entries put on the bus. */
  readonly published: number;
  /** Manifests found to be commits straight to storage (appended to the log). */
  readonly storageCommits: number;
  /** Manifests whose version some event of the log claims (the catalog committed them). */
  readonly claimed: number;
  /** Notifications of nothing the relay follows. */
  readonly ignored: number;
  /** Indexes (into the notifications given) whose work failed: offer them again. */
  readonly failed: readonly number[];
  readonly problems: readonly string[];
}

/** How long the warehouses' roots are reused by one relay (warm container): a warehouse created since is found within this. */
const ROOTS_TTL_MS = 60_000;
/** The log is read from this long before the oldest manifest of a batch (clock skew between S3 and the appenders). */
const CLAIM_MARGIN_MS = 5_000;
const LOG_PAGE = 1000;
/** Claims read from the log are kept this long by a warm container (a notification retried later reads the log again). */
const CLAIMS_KEEP_MS = 15 * 60_000;

interface Root {
  readonly project: string;
  readonly warehouse: string;
  readonly bucket: string;
  /** The warehouse's key prefix in its bucket, ending in `/` (or empty). */
  readonly prefix: string;
}

interface Manifest {
  readonly index: number;
  readonly note: ObjectCreated;
  readonly root: Root;
  readonly path: string;
  readonly version: number;
}

/** The relay's notification handler: keeps the warehouses' roots between batches of one container. */
export function notificationRelay(services: CatalogServices, sources: NotificationSources) {
  const log = services.changes;
  if (!log) throw new Error('the change relay needs the change log (services.changes)');
  let roots: { at: number; list: Promise<Root[]> } | undefined;
  const warehouseRoots = (now: number): Promise<Root[]> => {
    if (!roots || now - roots.at > ROOTS_TTL_MS) {
      const list = readRoots(services);
      roots = { at: now, list };
      list.catch(() => (roots = undefined));
    }
    return roots.list;
  };
  const logPrefix = `${sources.registryPrefix}changes/`;
  /**
   * Per project, the claims of the log read so far and where the reading stands: each batch reads
   * on from there, so a warm container reads each entry of the log once, not once per batch whose
   * window covers it. A batch that needs older entries than the reading began at reads its own.
   */
  const logs = new Map<string, { start: number; readAt: number; cursor: string; claims: Map<string, number> }>();
  const claimsFor = async (project: string, from: Date, at: number): Promise<ReadonlySet<string> | ReadonlyMap<string, number>> => {
    let cached = logs.get(project);
    // A reading left idle that long starts again where this batch needs it (its cursor might outlive the log's retention).
    if (cached && at - cached.readAt > CLAIMS_KEEP_MS) cached = undefined;
    if (cached && from.getTime() < cached.start) return (await claimsSince(log, project, sources.cursorAt(from))).claims;
    if (!cached) logs.set(project, (cached = { start: from.getTime(), readAt: at, cursor: sources.cursorAt(from), claims: new Map() }));
    const read = await claimsSince(log, project, cached.cursor);
    cached.cursor = read.next;
    cached.readAt = at;
    for (const k of read.claims) cached.claims.set(k, at);
    for (const [k, t] of cached.claims) if (t < at - CLAIMS_KEEP_MS) cached.claims.delete(k);
    cached.start = Math.max(cached.start, at - CLAIMS_KEEP_MS);
    return cached.claims;
  };

  return async function relayNotifications(notes: readonly ObjectCreated[], options: NotificationOptions): Promise<NotificationReport> {
    const now = options.now ?? (() => new Date());
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const problems: string[] = [];
    const failed = new Set<number>();
    let ignored = 0;

    // One notification per write: S3 may deliver one twice.
    const seen = new Set<string>();
    const entries: { index: number; note: ObjectCreated }[] = [];
    const candidates: { index: number; note: ObjectCreated }[] = [];
    notes.forEach((note, index) => {
      const id = `${note.bucket}\n${note.key}\n${note.sequencer}`;
      if (seen.has(id)) return void ignored++;
      seen.add(id);
      if (note.bucket === sources.registryBucket && note.key.startsWith(logPrefix)) entries.push({ index, note });
      else if (/\/_versions\/[^/]+\.manifest$/.test(note.key)) candidates.push({ index, note });
      else ignored++;
    });

    // 1. Log entries to the bus, in append order (their keys), each key's writes in sequencer order.
    entries.sort((a, b) => (a.note.key < b.note.key ? -1 : a.note.key > b.note.key ? 1 : bySequencer(a.note, b.note)));
    const read: { index: number; event: RaskEvent }[] = [];
    await forEachLimited(entries, 16, async ({ index, note }) => {
      try {
        const body = await sources.readVersion(note.key.slice(sources.registryPrefix.length), note.versionId);
        // Gone (the lifecycle rule expired it before its notification was taken): nothing to relay.
        if (!body) return void ignored++;
        read.push({ index, event: JSON.parse(body.toString('utf8')) as RaskEvent });
      } catch (err) {
        failed.add(index);
        problems.push(`change log entry ${note.key}: ${String(err)}`);
      }
    });
    const order = new Map(entries.map((e, i) => [e.index, i]));
    read.sort((a, b) => order.get(a.index)! - order.get(b.index)!);
    let published = 0;
    if (read.length > 0 && options.publisher) {
      const before = options.publisher.stats.failed;
      await options.publisher.publish(read.map((r) => r.event));
      if (options.publisher.stats.failed === before) published = read.length;
      else {
        // Which entries the bus refused is not told apart: all of them are offered again (same ids).
        for (const r of read) failed.add(r.index);
        problems.push(`${options.publisher.stats.failed - before} of ${read.length} events not taken by the bus`);
      }
    }

    // 2. Manifests: which registered table, and claimed or not.
    const manifests: Manifest[] = [];
    if (candidates.length > 0) {
      let known: Root[] = [];
      try {
        known = await warehouseRoots(now().getTime());
      } catch (err) {
        for (const c of candidates) failed.add(c.index);
        problems.push(`reading the warehouses: ${String(err)}`);
      }
      for (const { index, note } of known.length > 0 ? candidates : []) {
        const root = known.filter((r) => r.bucket === note.bucket && note.key.startsWith(r.prefix)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
        const rel = root ? note.key.slice(root.prefix.length) : '';
        const cut = rel.lastIndexOf('/_versions/');
        const parsed = parseManifestName(rel.slice(cut + '/_versions/'.length));
        if (!root || cut <= 0 || !parsed) {
          ignored++;
          continue;
        }
        manifests.push({ index, note, root, path: rel.slice(0, cut), version: parsed.version });
      }
    }
    const tables = new Map<string, Promise<readonly string[] | undefined>>();
    const tableOf = (m: Manifest) => {
      const k = `${m.root.project}\n${m.root.warehouse}\n${m.path}`;
      let hit = tables.get(k);
      if (!hit) tables.set(k, (hit = registeredTable(services, m.root.project, m.root.warehouse, m.path)));
      return hit;
    };
    const judged: { m: Manifest; id: readonly string[] }[] = [];
    await forEachLimited(manifests, 16, async (m) => {
      try {
        const id = await tableOf(m);
        if (id) judged.push({ m, id });
        else ignored++;
      } catch (err) {
        failed.add(m.index);
        problems.push(`manifest ${m.note.key}: ${String(err)}`);
      }
    });

    // A claim is appended after its manifest: judge nothing younger than the settle window.
    const youngest = Math.max(0, ...judged.map((j) => j.m.note.time.getTime()));
    const wait = youngest + options.settleMs - now().getTime();
    if (judged.length > 0 && wait > 0) await sleep(Math.min(wait, options.settleMs));

    let claimed = 0;
    const found: RaskEvent[] = [];
    const byProject = new Map<string, { m: Manifest; id: readonly string[] }[]>();
    for (const j of judged) byProject.set(j.m.root.project, [...(byProject.get(j.m.root.project) ?? []), j]);
    for (const [project, group] of byProject) {
      let claims: ReadonlySet<string> | ReadonlyMap<string, number>;
      try {
        const from = new Date(Math.min(...group.map((g) => g.m.note.time.getTime())) - CLAIM_MARGIN_MS);
        claims = await claimsFor(project, from, now().getTime());
      } catch (err) {
        for (const g of group) failed.add(g.m.index);
        problems.push(`project ${JSON.stringify(project)}: reading the change log for claims: ${String(err)}`);
        continue;
      }
      group.sort((a, b) => a.m.version - b.m.version || bySequencer(a.m.note, b.m.note));
      const announced = new Set<string>();
      for (const { m, id } of group) {
        const claim = claimKey(project, id, m.version);
        if (claims.has(claim)) {
          claimed++;
          continue;
        }
        const eventId = storageCommitId(project, m.root.warehouse, m.path, m.version);
        if (announced.has(eventId)) continue;
        announced.add(eventId);
        found.push(
          cloudEvent(
            STORAGE_COMMIT_EVENT,
            { project, warehouse: m.root.warehouse, kind: 'table', id: [...id], principal: 'storage', operation: 'StorageCommit', request_id: '', version: m.version, details: { via: 'storage' } },
            m.note.time,
            eventId,
          ),
        );
      }
    }
    let storageCommits = 0;
    if (found.length > 0) {
      try {
        await log.append(found);
        storageCommits = found.length;
      } catch (err) {
        for (const j of judged) failed.add(j.m.index);
        problems.push(`appending ${found.length} storage commits: ${String(err)}`);
      }
    }
    return { published, storageCommits, claimed, ignored, failed: [...failed].sort((a, b) => a - b), problems };
  };
}

/** Every warehouse root in S3 of every project (the roots a manifest can be under). */
async function readRoots(services: CatalogServices): Promise<Root[]> {
  const out: Root[] = [];
  for (const project of await listProjects(services)) {
    for (const w of await listWarehouses(services, project)) out.push(...rootOf(project, w));
  }
  return out;
}

function rootOf(project: string, w: WarehouseRecord): Root[] {
  if (w.storage.kind !== 's3') return [];
  const prefix = w.storage.prefix === '' || w.storage.prefix.endsWith('/') ? w.storage.prefix : `${w.storage.prefix}/`;
  return [{ project, warehouse: w.name, bucket: w.storage.bucket, prefix }];
}

/**
 * The id of the table registered at `path` of the warehouse: its location claim, held, names the
 * ids where its record may be; the record there must point at this location. Undefined: no table
 * of the registry is there (an unregistered dataset, a table being created or dropped).
 */
async function registeredTable(services: CatalogServices, project: string, warehouse: string, path: string): Promise<readonly string[] | undefined> {
  const claim = await services.registry.read<LocationClaimRecord>(keys.locationClaim(project, warehouse, path));
  if (claim?.value.state !== 'held') return undefined;
  for (const id of claim.value.ids) {
    const record = await services.registry.read<TableRecord>(keys.table(project, id));
    if (record && record.value.warehouse === warehouse && record.value.path === path) return id;
  }
  return undefined;
}

/** The versions the log's events since `cursor` claim (change-relay.ts, claimKey), read to the log's settled end, and the cursor after them. */
async function claimsSince(log: NonNullable<CatalogServices['changes']>, project: string, cursor: string): Promise<{ claims: Set<string>; next: string }> {
  const claims = new Set<string>();
  let since = cursor;
  for (;;) {
    const page = await log.page({ project, since, limit: LOG_PAGE });
    for (const e of page.events) {
      if (e.data.kind === 'table' && typeof e.data.version === 'number') claims.add(claimKey(project, e.data.id, e.data.version));
      for (const c of namedCommits(e)) for (let v = c.from + 1; v <= c.to; v++) claims.add(claimKey(project, c.id, v));
    }
    const moved = page.next !== since;
    since = page.next;
    if (!page.more || !moved) return { claims, next: since };
  }
}

function bySequencer(a: ObjectCreated, b: ObjectCreated): number {
  const width = Math.max(a.sequencer.length, b.sequencer.length);
  const x = a.sequencer.padStart(width, '0');
  const y = b.sequencer.padStart(width, '0');
  return x < y ? -1 : x > y ? 1 : 0;
}
