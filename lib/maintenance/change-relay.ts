/**
 * The change relay (docs/events.md, "The relay"): one cycle, run on a schedule (the
 * `ChangeRelay` Lambda on AWS, a timer of the local server), does two things per project.
 *
 * 1. **Relays the log to the bus.** It pages the change log from its own cursor and hands every
 *    event to the publisher (EventBridge on AWS; none locally, where the log is the destination).
 *    The cursor moves only past events the publisher took: an event it could not publish is
 *    offered again next cycle with the same `id` (delivery at least once, consumers deduplicate).
 *    The doors never wait for the bus: they append to the log, which is durable, and answer.
 *
 * 2. **Finds commits made straight to storage.** For every table the registry knows, it lists the
 *    newest manifests under `_versions/` and turns each version the relay has not seen yet into a
 *    `dev.rask.table.version.created` event with `details.via = "storage"`, appended to the log
 *    (and so relayed next cycle). A version some catalog door committed is not announced twice:
 *    every table event of the log that carries `data.version` claims that version of its table
 *    (read in step 1, kept in the state until its manifest is judged), and a manifest is judged
 *    only once it is `settleMs` old, longer than a door takes from its commit to its append. Its
 *    event id is derived from (project, warehouse, location, version), so a cycle that ran again
 *    after a crash re-derives the same ids.
 *
 * State: one object in the registry store (`RELAY_STATE_KEY`), read once and written once per
 * cycle with a condition (a concurrent cycle's write wins; the loser's appends carry the same ids).
 * It holds each project's cursor, each table's last judged version, the claims, and the horizon
 * (the newest manifest time the previous cycle judged): a table first seen has its versions
 * after the horizon judged (a table created since), and on the very first cycle only the
 * latest version is noted, so history is never announced.
 */
import { createHash } from 'node:crypto';
import type { CatalogServices } from '../catalog/services.js';
import { readChain } from '../catalog/dataset/version-chain.js';
import { versionsPrefix } from '../catalog/dataset/manifests.js';
import { cloudEvent, type RaskEvent } from '../events/cloudevent.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import { ConditionFailedError } from '../ports/object-store.js';
import { derivable, RECOVERY_GRACE_MS, recoverWindow, SEEN_KEEP_MS, type RecoveryMark } from './change-recovery.js';
import { listProjects } from './estate.js';
import { forEachTable } from './walker.js';

/** Where the relay keeps its state in the registry store (outside every record prefix). */
export const RELAY_STATE_KEY = 'changes-relay/state.json';

/** The event type of a table commit made outside the catalog. */
export const STORAGE_COMMIT_EVENT = 'dev.rask.table.version.created';

/** Manifests judged per table per cycle, newest first: a burst of direct commits larger than this is taken over several cycles. */
const VERSIONS_PER_TABLE = 100;
/** Events read from the log per page. */
const LOG_PAGE = 1000;
/** Claims older than this before the horizon are dropped: their manifest has been judged. */
const CLAIM_KEEP_MS = 3_600_000;

export interface RelayState {
  /** Per project: the log cursor after the last event handed to the publisher, and the recovery's mark. */
  projects: Record<string, { cursor?: string } & RecoveryMark>;
  /** Per table (`project \n warehouse \n path`): the newest version judged. */
  tables: Record<string, number>;
  /** `project \n table id (JSON) \n version` → the claiming event's time. */
  claims: Record<string, string>;
  /** The newest manifest time judged by the previous cycle (ISO); absent before the first cycle. */
  horizon?: string;
  /** With `recover`: `project \n event id` → time, of the derivable events read from the log (change-recovery.ts). */
  seen?: Record<string, string>;
}

export interface RelayOptions {
  /** The bus; absent locally (the log is the destination). */
  readonly publisher?: EventPublisher;
  /** How old a manifest must be before it is judged (default 30 s). */
  readonly settleMs?: number;
  readonly now?: () => Date;
  /** Stop starting new tables after this instant (epoch ms). */
  readonly deadline?: number;
  /**
   * Re-derive the events of changes whose door died between its decisive write and its append
   * (change-recovery.ts): on AWS, where no start-up finds them. The local server recovers at start.
   */
  readonly recover?: boolean;
}

export interface RelayReport {
  /** Events read from the log and handed to the publisher. */
  readonly relayed: number;
  /** Of those, what the publisher could not take (offered again next cycle). */
  readonly unpublished: number;
  /** Commits found in storage and appended to the log. */
  readonly storageCommits: number;
  /** Events of changes found again in the registry (their door's append never came), appended to the log. */
  readonly recovered: number;
  readonly tables: number;
  readonly problems: readonly string[];
}

const tableKey = (project: string, warehouse: string, path: string) => `${project}\n${warehouse}\n${path}`;
/** The key of a claim: `version` of table `id` in `project` was committed by the catalog. */
export const claimKey = (project: string, id: readonly string[], version: number) => `${project}\n${JSON.stringify(id)}\n${version}`;

/** A stable UUID-shaped id for a storage commit: the same however often it is found. */
export function storageCommitId(project: string, warehouse: string, path: string, version: number): string {
  const h = createHash('sha256').update(`storage-commit\n${project}\n${warehouse}\n${path}\n${version}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

async function readState(services: CatalogServices): Promise<{ state: RelayState; etag?: string }> {
  const obj = await services.registry.store.get(RELAY_STATE_KEY);
  if (!obj) return { state: { projects: {}, tables: {}, claims: {} } };
  const parsed = JSON.parse(obj.body.toString('utf8')) as Partial<RelayState>;
  return {
    state: { projects: parsed.projects ?? {}, tables: parsed.tables ?? {}, claims: parsed.claims ?? {}, ...(parsed.horizon ? { horizon: parsed.horizon } : {}), ...(parsed.seen ? { seen: parsed.seen } : {}) },
    etag: obj.etag,
  };
}

/** One relay cycle over every project of the registry. */
export async function relayChanges(services: CatalogServices, options: RelayOptions = {}): Promise<RelayReport> {
  const log = services.changes;
  if (!log) throw new Error('the change relay needs the change log (services.changes)');
  const now = options.now ?? (() => new Date());
  const settleMs = options.settleMs ?? 30_000;
  const { state, etag } = await readState(services);
  const problems: string[] = [];
  const firstCycle = state.horizon === undefined;

  // 1. The log to the bus, and the versions the catalog's own doors committed.
  let relayed = 0;
  let unpublished = 0;
  const seen = options.recover ? (state.seen ??= {}) : undefined;
  /** Projects whose log was read to its end this cycle: only those are recovered (every id of the log is in `seen`). */
  const readToEnd = new Set<string>();
  const projects = new Set<string>([...Object.keys(state.projects), ...(await listProjects(services))]);
  for (const project of projects) {
    const at = (state.projects[project] ??= {});
    for (;;) {
      const page = await log.page({ project, limit: LOG_PAGE, ...(at.cursor === undefined ? {} : { since: at.cursor }) });
      for (const e of page.events) {
        if (e.data.kind === 'table' && typeof e.data.version === 'number') state.claims[claimKey(project, e.data.id, e.data.version)] = e.time;
        // A maintenance run, a door or a job names the further versions it committed
        // (lib/maintenance/announce.ts, lib/operations/emit.ts, lib/jobs/worker.ts).
        for (const c of namedCommits(e)) for (let v = c.from + 1; v <= c.to; v++) state.claims[claimKey(project, c.id, v)] = e.time;
        if (seen && derivable(e)) seen[`${project}\n${e.id}`] = e.time;
      }
      if (options.publisher && page.events.length > 0) {
        const taken = await publishAll(options.publisher, page.events);
        relayed += page.events.length;
        if (!taken) {
          // Not past this page: next cycle offers it again (same ids).
          unpublished += page.events.length;
          break;
        }
      } else relayed += page.events.length;
      const moved = page.next !== at.cursor;
      at.cursor = page.next;
      if (!page.more || !moved) {
        readToEnd.add(project);
        break;
      }
    }
  }

  // 1b. Changes whose door died before its append (AWS; change-recovery.ts).
  let recovered = 0;
  if (seen) {
    const upTo = new Date(now().getTime() - RECOVERY_GRACE_MS);
    const missing: RaskEvent[] = [];
    for (const project of readToEnd) {
      const at = state.projects[project]!;
      // A project first seen: its changes from now on (history is never re-derived).
      if (at.recoveredTo === undefined) {
        at.recoveredTo = now().toISOString();
        continue;
      }
      const from = new Date(at.recoveredTo);
      if (upTo <= from) continue;
      try {
        const found = await recoverWindow(services.registry.store, project, from, upTo, (id) => seen[`${project}\n${id}`] !== undefined);
        for (const e of found) seen[`${project}\n${e.id}`] = e.time;
        missing.push(...found);
        at.recoveredTo = upTo.toISOString();
      } catch (err) {
        // The mark stays: the next cycle judges the same window again.
        problems.push(`project ${JSON.stringify(project)}: recovering changes: ${String(err)}`);
      }
    }
    if (missing.length > 0) {
      await log.append(missing);
      recovered = missing.length;
    }
    for (const [k, t] of Object.entries(seen)) {
      const mark = state.projects[k.slice(0, k.indexOf('\n'))]?.recoveredTo;
      if (mark === undefined || Date.parse(t) < Date.parse(mark) - SEEN_KEEP_MS) delete seen[k];
    }
  }

  // 2. Commits straight to storage.
  const horizon = new Date(now().getTime() - settleMs);
  const previousHorizon = state.horizon === undefined ? undefined : new Date(state.horizon);
  let storageCommits = 0;
  let tables = 0;
  const found: RaskEvent[] = [];
  const walked = await forEachTable(services, options.deadline === undefined ? {} : { deadline: options.deadline }, async (unit) => {
    tables++;
    const key = tableKey(unit.project, unit.record.warehouse, unit.record.path);
    const judged = state.tables[key];
    const chain = await readChain(unit.store, versionsPrefix(unit.record.path), { descending: true, limit: VERSIONS_PER_TABLE });
    const entries = [...chain.entries].reverse(); // oldest first
    if (entries.length === 0) return;
    if (firstCycle) {
      // History is never announced: the first cycle only notes where each table stands.
      state.tables[key] = entries.at(-1)!.version;
      return;
    }
    let last = judged ?? 0;
    for (const entry of entries) {
      if (entry.version <= last) continue;
      if (entry.info.lastModified > horizon) break; // not settled: judged next cycle
      last = entry.version;
      // A table first seen: only what was committed since the previous cycle is news.
      if (judged === undefined && previousHorizon && entry.info.lastModified <= previousHorizon) continue;
      const claim = claimKey(unit.project, unit.id, entry.version);
      if (state.claims[claim] !== undefined) {
        delete state.claims[claim];
        continue;
      }
      found.push(
        cloudEvent(
          STORAGE_COMMIT_EVENT,
          {
            project: unit.project,
            warehouse: unit.record.warehouse,
            kind: 'table',
            id: [...unit.id],
            principal: 'storage',
            operation: 'StorageCommit',
            request_id: '',
            version: entry.version,
            details: { via: 'storage' },
          },
          entry.info.lastModified,
          storageCommitId(unit.project, unit.record.warehouse, unit.record.path, entry.version),
        ),
      );
    }
    if (last > 0) state.tables[key] = last;
  });
  problems.push(...walked.problems);
  if (found.length > 0) {
    await log.append(found);
    storageCommits = found.length;
  }

  // Claims whose manifest has long been judged (or never came: a failed commit) are dropped.
  const keepAfter = horizon.getTime() - CLAIM_KEEP_MS;
  for (const [k, t] of Object.entries(state.claims)) if (Date.parse(t) < keepAfter) delete state.claims[k];
  state.horizon = horizon.toISOString();
  const body = JSON.stringify(state);
  try {
    if (etag === undefined) await services.registry.store.putIfAbsent(RELAY_STATE_KEY, body);
    else await services.registry.store.putIfMatch(RELAY_STATE_KEY, body, etag);
  } catch (err) {
    // A concurrent cycle saved first; it covered the same ground (its events carry the same ids).
    if (!(err instanceof ConditionFailedError)) throw err;
    problems.push('another relay cycle saved its state first; this cycle’s state was not kept');
  }
  return { relayed, unpublished, storageCommits, recovered, tables, problems };
}

/** The `details.commits` of an event: table versions the catalog committed itself, `from` (exclusive) to `to`. */
export function namedCommits(e: RaskEvent): { id: string[]; from: number; to: number }[] {
  if (!Array.isArray(e.data.details?.commits)) return [];
  return (e.data.details.commits as unknown[]).filter(
    (c): c is { id: string[]; from: number; to: number } =>
      typeof c === 'object' && c !== null && Array.isArray((c as { id?: unknown }).id) && typeof (c as { from?: unknown }).from === 'number' && typeof (c as { to?: unknown }).to === 'number' && (c as { to: number }).to - (c as { from: number }).from <= 1000,
  );
}

/**
 * Whether the publisher took every event: its `failed` counter, read around the call (the relay
 * is the publisher's only caller, so no concurrent publish counts into the difference).
 */
async function publishAll(publisher: EventPublisher, events: readonly RaskEvent[]): Promise<boolean> {
  const before = publisher.stats.failed;
  await publisher.publish(events);
  return publisher.stats.failed === before;
}

