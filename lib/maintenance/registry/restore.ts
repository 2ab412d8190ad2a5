import { randomUUID } from 'node:crypto';
import { hasData } from '../../catalog/protocols/lookup.js';
import type { CatalogServices } from '../../catalog/services.js';
import { requireWarehouse } from '../../catalog/warehouses.js';
import { forEachLimited } from '../../concurrency.js';
import { CHANGE_FIELD } from '../../events/change-stamp.js';
import { ConditionFailedError, type ObjectStore } from '../../ports/object-store.js';
import type { KeyVersion, RegistryHistory } from '../../ports/registry-history.js';
import { decodeSegment, keys, parseTreeKey } from '../../registry/keys.js';
import type { TableRecord } from '../../registry/records.js';
import { LINEAGE, WRITE_ID } from '../../registry/registry.js';
import { checkInstant, keysAt, type Scope } from './state-at.js';

/**
 * `rask registry restore --at T`: every registry key of the scope back to its content at T
 * (docs/operations.md, "Registry backup and restore").
 *
 * - **Consistency**: the state at T is causally closed (state-at.ts), so it is a state a crash at
 *   T could have left, and every door is crash-consistent: the first read of each object after
 *   the restore finishes or undoes whatever was in flight at T, as after a restart
 *   (test/unit/registry-restore.test.ts restores to random instants of a concurrent workload
 *   and checks the crash test's invariants after one read of each object).
 * - **Table data is not rolled back**: each Lance table keeps its own versions. A table record
 *   the restore would bring back whose data is gone (dropped and purged after T) is not written,
 *   nor its claim, markers, rename mark or protection: it is reported by name (`dataGone`). A table
 *   created after T loses its record (and claim): its files stay where they are, unreferenced,
 *   for the orphan scan to report. A table renamed after T is back under its old name.
 * - **Writes** are conditional on what the plan saw (put-if-absent, put-if-match, delete-if-match),
 *   so a concurrent writer is never overwritten: its key is reported as a conflict. Restored
 *   records get a fresh write id (etags never come back: docs/protocols.md) and no change stamp.
 *   The writes go in an order whose every prefix is repairable (claims and markers, then
 *   namespaces parents first, then tables; deletions of tables before their namespaces); a
 *   restore that stopped half-way is finished by running it again.
 * - **Requests** on S3: one ListObjectVersions per 1,000 versions in scope, one GET per changed
 *   key at T (two when both sides exist, to skip a key whose content is the same), one write per
 *   change: O(keys in scope).
 */
export type ChangeKind = 'create' | 'replace' | 'delete';

export interface PlannedChange {
  readonly key: string;
  readonly change: ChangeKind;
  /** `namespace a.b`, `table a.b.t`, or the key's kind (`claim`, `marker`, `record`). */
  readonly what: string;
}

export interface RestorePlan {
  readonly at: string;
  readonly scope: Scope;
  /** Keys of the scope the history names (at T or now). */
  readonly keysInScope: number;
  readonly changes: readonly PlannedChange[];
  /** Tables whose records come back (absent now, present at T). */
  readonly tablesRestored: readonly string[];
  /** Tables present now whose records go (created or renamed in after T). */
  readonly tablesRemoved: readonly string[];
  /** Tables present at T whose data is gone: not restored, reported. */
  readonly dataGone: readonly { readonly table: string; readonly location: string }[];
}

export interface RestoreResult extends RestorePlan {
  readonly dryRun: boolean;
  readonly applied: number;
  /** Keys a concurrent writer changed between the plan and the write: left as they are. */
  readonly conflicts: readonly string[];
}

export interface RestoreOptions {
  readonly dryRun?: boolean;
  /**
   * Whether the data of a table record as it was at T is still there (its manifests); undefined
   * when it cannot tell (then the record is restored and the doubt reported nowhere else).
   */
  readonly dataExists: (table: TableRecord, project: string) => Promise<boolean | undefined>;
  readonly onProgress?: (done: number, total: number | undefined, phase: string) => void;
}

interface Item {
  readonly key: string;
  readonly at?: KeyVersion;
  readonly now?: KeyVersion;
  body?: Buffer;
}

const WIDTH = 8;

export async function restoreRegistry(store: ObjectStore, history: RegistryHistory, scope: Scope, at: Date, options: RestoreOptions): Promise<RestoreResult> {
  await checkInstant(history, at);
  const items: Item[] = [];
  let requests = 0;
  let keysInScope = 0;
  for await (const k of keysAt(history, scope, at, { onRequest: () => options.onProgress?.(++requests, undefined, 'listing versions') })) {
    keysInScope++;
    if (k.at?.ref !== k.now?.ref) items.push({ key: k.key, ...(k.at ? { at: k.at } : {}), ...(k.now ? { now: k.now } : {}) });
  }
  // Bodies at T of what changed, and of now where both exist (a key rewritten to the same
  // content, which every journaled write is, is no change).
  let read = 0;
  await forEachLimited(items, WIDTH, async (item) => {
    if (item.at) item.body = await history.body(item.at);
    if (item.at && item.now && item.body && (await sameRecord(item.body, await history.body(item.now)))) item.body = undefined;
    options.onProgress?.(++read, items.length, 'reading versions');
  });
  const changed = items.filter((i) => !(i.at && i.now && i.body === undefined));
  const total = changed.length;

  // Tables whose data is gone: their record and every key that hangs off it are left out.
  const stateAt = new Map(changed.filter((i) => i.at).map((i) => [i.key, i]));
  const skip = new Set<string>();
  const dataGone: { table: string; location: string }[] = [];
  const tablesRestored: string[] = [];
  const tablesRemoved: string[] = [];
  for (const item of changed) {
    const parsed = projectOf(item.key);
    const tree = parsed ? parseTreeKey(parsed, item.key) : undefined;
    if (tree?.kind !== 'table') continue;
    if (!item.at && item.now) {
      tablesRemoved.push(tree.id.join('.'));
      continue;
    }
    if (!item.at || item.now) continue;
    const record = JSON.parse(item.body!.toString('utf8')) as TableRecord;
    const hadData = record.origin === 'registered' || record.dataMarker === 'data' || record.dataMarker === 'maybe' || stateAt.has(keys.dataMarker(parsed!, 'data', tree.id));
    const exists = hadData ? await options.dataExists(record, parsed!) : true;
    if (exists === false) {
      dataGone.push({ table: tree.id.join('.'), location: `${record.warehouse}:${record.path}` });
      for (const k of [
        item.key,
        keys.tableRenameMark(parsed!, tree.id),
        keys.dataMarker(parsed!, 'data', tree.id),
        keys.dataMarker(parsed!, 'maybe', tree.id),
        keys.protection(parsed!, 'table', tree.id),
        keys.locationClaim(parsed!, record.warehouse, record.path),
      ]) {
        skip.add(k);
      }
    } else tablesRestored.push(tree.id.join('.'));
  }
  const plan = changed.filter((i) => !skip.has(i.key)).sort((a, b) => rank(a) - rank(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const changes: PlannedChange[] = plan.map((i) => ({ key: i.key, change: !i.at ? 'delete' : i.now ? 'replace' : 'create', what: describeKey(i.key) }));
  const base = {
    at: at.toISOString(),
    scope,
    keysInScope,
    changes,
    tablesRestored: tablesRestored.sort(),
    tablesRemoved: tablesRemoved.sort(),
    dataGone: dataGone.sort((a, b) => (a.table < b.table ? -1 : 1)),
  };
  if (options.dryRun) return { ...base, dryRun: true, applied: 0, conflicts: [] };

  const conflicts: string[] = [];
  let applied = 0;
  // One rank at a time, each rank's writes together: a later rank never lands before an earlier one.
  for (const r of [...new Set(plan.map(rank))]) {
    await forEachLimited(
      plan.filter((i) => rank(i) === r),
      WIDTH,
      async (i) => {
        try {
          if (!i.at) await store.deleteIfMatch(i.key, i.now!.etag ?? '');
          else if (!i.now) await store.putIfAbsent(i.key, restamped(i.body!));
          else await store.putIfMatch(i.key, restamped(i.body!), i.now.etag ?? '');
          applied++;
        } catch (err) {
          if (!(err instanceof ConditionFailedError)) throw err;
          conflicts.push(i.key);
        }
        options.onProgress?.(applied + conflicts.length, total, 'writing');
      },
    );
  }
  return { ...base, dryRun: false, applied, conflicts: conflicts.sort() };
}

/**
 * Write order (see the module comment): every other record first (claims, markers, warehouses,
 * projects, trash), then namespaces by depth, then tables; deletions after all writes, tables
 * first, then namespaces deepest first, then the rest.
 */
function rank(i: Item): number {
  const project = projectOf(i.key);
  const tree = project ? parseTreeKey(project, i.key) : undefined;
  const depth = tree ? tree.id.length : 0;
  if (i.at) return tree?.kind === 'namespace' ? 100 + depth : tree?.kind === 'table' ? 300 : 0;
  return tree?.kind === 'table' ? 400 : tree?.kind === 'namespace' ? 600 - depth : 700;
}

function projectOf(key: string): string | undefined {
  const m = /^p\/([^/]+)\//.exec(key);
  if (!m) return undefined;
  // Keys hold encoded segments; parseTreeKey re-encodes the project it is given.
  return decodeSegment(m[1]!);
}

function describeKey(key: string): string {
  const project = projectOf(key);
  const tree = project ? parseTreeKey(project, key) : undefined;
  if (tree) return `${tree.kind} ${tree.id.join('.')}`;
  if (/\/loc\/.*\+c$/.test(key)) return 'location claim';
  if (/^p\/[^/]+\/(data|maybe)\//.test(key)) return 'has-data marker';
  if (key.endsWith('!')) return 'mark';
  if (/^p\/[^/]+\/trash\//.test(key)) return 'trash record';
  if (/^p\/[^/]+\/w\//.test(key)) return 'warehouse';
  return 'record';
}

/** The same record apart from the registry's own fields (write id, lineage, change stamp). */
async function sameRecord(a: Buffer, b: Buffer): Promise<boolean> {
  if (a.equals(b)) return true;
  try {
    return JSON.stringify(strip(JSON.parse(a.toString('utf8')))) === JSON.stringify(strip(JSON.parse(b.toString('utf8'))));
  } catch {
    return false;
  }
}

function strip(v: Record<string, unknown>): Record<string, unknown> {
  const { [WRITE_ID]: _w, [LINEAGE]: _l, [CHANGE_FIELD]: _c, ...rest } = v;
  return rest;
}

/** The record as at T, with a fresh write id: an etag a key has left never comes back (docs/protocols.md). */
function restamped(body: Buffer): Buffer {
  try {
    const value = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return body;
    return Buffer.from(JSON.stringify({ ...strip(value), [WRITE_ID]: randomUUID() }));
  } catch {
    return body;
  }
}

/**
 * `dataExists` over the catalog's storage: the table has a committed manifest where its record
 * says (hasData, the same probe the listing uses). Undefined when its warehouse cannot be read.
 */
export function manifestsPresent(services: CatalogServices): RestoreOptions['dataExists'] {
  return async (table, project) => {
    try {
      const warehouse = await requireWarehouse({ ...services, project }, table.warehouse);
      return await hasData(services.storageFor(warehouse.storage), table.path);
    } catch {
      return undefined;
    }
  };
}
