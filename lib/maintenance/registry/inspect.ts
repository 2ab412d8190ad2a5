import { forEachLimited } from '../../concurrency.js';
import { asChangeStamp, CHANGE_FIELD, type ChangeStamp } from '../../events/change-stamp.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { RegistryHistory } from '../../ports/registry-history.js';
import { keys } from '../../registry/keys.js';
import { govKeys } from '../../registry/principal-keys.js';
import type { GrantsRecord } from '../../registry/principal-records.js';
import type { LocationClaimRecord, NamespaceRecord, TableRecord, TrashRecord } from '../../registry/records.js';
import { LINEAGE, WRITE_ID } from '../../registry/registry.js';
import { policyKeys } from '../policy.js';

/**
 * `rask registry inspect`: every record behind one namespace or table id, decoded for people,
 * with the raw keys, the state the protocols left it in and what the next reader does about it
 * (docs/protocols.md, "Repair paths"). Reads only; never settles anything itself, so what it
 * shows is what is on record.
 */
export interface InspectedRecord {
  /** What the record is: `table`, `rename-mark`, `location-claim`, `trash`, … */
  readonly role: string;
  readonly key: string;
  readonly etag: string;
  /** The record as stored, without the registry's own fields (write id, lineage, change stamp). */
  readonly record: Record<string, unknown>;
  /** Who last wrote it, when and by which door, where the write carried a change stamp. */
  readonly change?: { readonly operation: string; readonly by: string; readonly at: string; readonly request: string };
}

export interface Finding {
  /** `active`, `moving`, `dropping`, `trashed`, `stale-claim`, … */
  readonly state: string;
  readonly detail: string;
  /** What the next reader (or pass) does about it; absent for a settled state. */
  readonly repair?: string;
}

export interface HistoryEntry {
  readonly key: string;
  readonly time: string;
  readonly deleted: boolean;
  readonly current: boolean;
  readonly operation?: string;
  readonly by?: string;
}

export interface Inspection {
  readonly project: string;
  readonly id: readonly string[];
  readonly records: readonly InspectedRecord[];
  readonly findings: readonly Finding[];
  /** Grants of any principal whose scope covers the id (project, an ancestor namespace, itself). */
  readonly grants: readonly { readonly principal: string; readonly role: string; readonly scope: string }[];
  readonly history?: readonly HistoryEntry[];
}

const WIDTH = 8;

/** Everything on record about `id` in `project`: as a namespace and as a table, whichever exist. */
export async function inspect(
  store: ObjectStore,
  project: string,
  id: readonly string[],
  options: { history?: RegistryHistory } = {},
): Promise<Inspection> {
  const records: InspectedRecord[] = [];
  const read = async (role: string, key: string) => {
    const got = await store.get(key);
    if (!got) return undefined;
    const r = decode(role, key, got.etag, got.body);
    records.push(r);
    return r;
  };
  const list = async (role: string, prefix: string) => {
    const page = await store.list({ prefix, limit: 1000 });
    await forEachLimited(page.objects, WIDTH, async (o) => void (await read(role, o.key)));
  };
  const nested = id.length > 0;
  const [ns, , table] = await Promise.all([
    nested ? read('namespace', keys.namespace(project, id)) : undefined,
    nested ? read('drop-mark', keys.namespaceDropMark(project, id)) : undefined,
    nested ? read('table', keys.table(project, id)) : undefined,
    nested ? read('rename-mark', keys.tableRenameMark(project, id)) : undefined,
    nested ? read('protection', keys.protection(project, 'namespace', id)) : undefined,
    nested ? read('protection', keys.protection(project, 'table', id)) : undefined,
    nested ? read('data-marker', keys.dataMarker(project, 'data', id)) : undefined,
    nested ? read('maybe-data-marker', keys.dataMarker(project, 'maybe', id)) : undefined,
    nested ? list('trash', keys.trashOf(project, id)) : undefined,
    nested ? list('namespace-trash', keys.namespaceTrashOf(project, id)) : undefined,
  ]);
  const tableRecord = table?.record as unknown as TableRecord | undefined;
  const claim = tableRecord ? await read('location-claim', keys.locationClaim(project, tableRecord.warehouse, tableRecord.path)) : undefined;
  const uids = [ns?.record.uid, tableRecord?.uid].filter((u): u is string => typeof u === 'string');
  await Promise.all([
    read('maintenance-policy', policyKeys.project(project)),
    ...(ns ? [read('maintenance-policy', policyKeys.namespace(project, uids[0]!))] : []),
    ...(tableRecord ? [read('maintenance-policy', policyKeys.table(project, tableRecord.uid))] : []),
  ]);
  // Trash records list their claims too: a trashed table's claim is at its old location.
  for (const t of records.filter((r) => r.role === 'trash')) {
    const rec = t.record as unknown as TrashRecord;
    if (rec.table && !records.some((r) => r.key === keys.locationClaim(project, rec.table.warehouse, rec.table.path))) {
      await read('location-claim', keys.locationClaim(project, rec.table.warehouse, rec.table.path));
    }
  }
  const grants = await grantsCovering(store, project, id);
  const findings = judge(records, claim);
  const history = options.history ? await historyOf(options.history, records.map((r) => r.key).concat(nested ? [keys.table(project, id), keys.namespace(project, id)] : []), store) : undefined;
  return { project, id, records, findings, grants, ...(history ? { history } : {}) };
}

function decode(role: string, key: string, etag: string, body: Buffer): InspectedRecord {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { role, key, etag, record: { unreadable: body.toString('utf8').slice(0, 200) } };
  }
  const stamp = asChangeStamp(parsed[CHANGE_FIELD]);
  const { [WRITE_ID]: _w, [LINEAGE]: _l, [CHANGE_FIELD]: _c, ...record } = parsed;
  return { role, key, etag, record, ...(stamp ? { change: changeOf(stamp) } : {}) };
}

const changeOf = (s: ChangeStamp) => ({ operation: s.op, by: s.by, at: s.at, request: s.req });

/** The state each record is in, and the repair path that finishes or undoes it (docs/protocols.md). */
function judge(records: readonly InspectedRecord[], claim: InspectedRecord | undefined): Finding[] {
  const out: Finding[] = [];
  for (const r of records) {
    const rec = r.record;
    switch (r.role) {
      case 'namespace': {
        const n = rec as unknown as NamespaceRecord;
        if (n.state === 'dropping') {
          out.push({
            state: 'dropping',
            detail: `namespace drop in progress (${n.drop?.behavior ?? 'restrict'}, since ${n.drop?.since ?? 'unknown'})`,
            repair:
              n.drop?.behavior === 'cascade'
                ? 'the next request that reads the namespace finishes the cascade under the context the mark carries'
                : 'the next request that reads the namespace finishes the drop if it is empty, or undoes it (back to active) if not',
          });
        } else out.push({ state: 'active', detail: `namespace ${n.id.join('.')} (uid ${n.uid}, warehouse ${n.warehouse})` });
        break;
      }
      case 'drop-mark':
        out.push({ state: 'drop-mark', detail: 'a drop of this namespace may be under way (its drop mark is there)', repair: 'the next listing or read of the namespace looks at its record and removes the mark when no drop is under way' });
        break;
      case 'table': {
        const t = rec as unknown as TableRecord;
        const state = t.state ?? 'active';
        const move = (t as { move?: { to?: readonly string[]; from?: readonly string[] } }).move;
        const where = `table ${t.id.join('.')} (uid ${t.uid}, ${t.warehouse}:${t.path})`;
        if (state === 'moving') out.push({ state, detail: `${where}: rename in progress to ${move?.to?.join('.') ?? '?'}`, repair: 'the next read of either name finishes the rename (the arrival is there and its namespace active) or undoes it' });
        else if (state === 'arriving') out.push({ state, detail: `${where}: arriving from ${move?.from?.join('.') ?? '?'} (rename in progress)`, repair: 'the next read of either name settles the rename: activates this record or deletes it' });
        else if (state === 'moved') out.push({ state, detail: `${where}: rename committed, source not yet removed`, repair: 'the next read of either name finishes it: activates the destination, moves the claim and marker, deletes this source record' });
        else out.push({ state: 'active', detail: where });
        if (!claim) out.push({ state: 'claim-missing', detail: `no location claim at ${t.path}`, repair: "reconcile (`rask maintenance reconcile --repair`, claim-mismatch) writes the claim `held`" });
        break;
      }
      case 'rename-mark':
        out.push({ state: 'rename-mark', detail: `a rename touching this name may be under way (${JSON.stringify(rec)})`, repair: 'a listing reads the name through its record (settling the rename), and whoever ends the move removes the mark' });
        break;
      case 'location-claim': {
        const c = rec as unknown as LocationClaimRecord;
        const live = records.some((x) => x.role === 'table' && (x.record as unknown as TableRecord).uid === c.uid);
        if (c.state === 'purging') out.push({ state: 'purging', detail: `claim on ${c.path}: its bytes are being purged`, repair: 'the purge_table job, or else the orphan scan, finishes the purge; nobody can register the location meanwhile' });
        else if (c.state === 'trashed') out.push({ state: 'trashed', detail: `claim on ${c.path}: the table is in trash`, repair: 'UndropTable brings it back; the expiry pass purges it when its grace ends' });
        else if (!live) out.push({ state: 'stale-claim', detail: `claim on ${c.path} (${c.state}) whose table record is not here`, repair: "the next claimant of the location takes it over; reconcile (stale-claim) releases it" });
        else out.push({ state: c.state, detail: `claim on ${c.path} held by uid ${c.uid}` });
        break;
      }
      case 'trash': {
        const t = rec as unknown as TrashRecord;
        out.push({ state: 'trashed', detail: `dropped table uid ${t.table?.uid ?? '?'} in trash until ${(t as { expiresAt?: string }).expiresAt ?? '?'}`, repair: 'UndropTable (`POST /v1/table/{id}/undrop`) restores it; ListTableTasks shows it' });
        break;
      }
      case 'namespace-trash':
        out.push({ state: 'trashed', detail: `a dropped namespace subtree (${String((rec as { dropId?: string }).dropId ?? '')})`, repair: 'UndropNamespace restores the subtree' });
        break;
      case 'protection':
        out.push({ state: 'protected', detail: `protected since ${String(rec.setAt ?? '?')} by ${String(rec.setBy ?? '?')}: drops and renames need force` });
        break;
    }
  }
  return out;
}

async function grantsCovering(store: ObjectStore, project: string, id: readonly string[]) {
  const out: { principal: string; role: string; scope: string }[] = [];
  const page = await store.list({ prefix: govKeys.grantsPrefix(project), limit: 1000 });
  await forEachLimited(page.objects, WIDTH, async (o) => {
    const got = await store.get(o.key);
    if (!got) return;
    let rec: GrantsRecord;
    try {
      rec = JSON.parse(got.body.toString('utf8')) as GrantsRecord;
    } catch {
      return;
    }
    for (const g of rec.grants ?? []) {
      const scopeId = g.scope.kind === 'project' ? [] : g.scope.id;
      const covers = scopeId.length <= id.length && scopeId.every((p, i) => p === id[i]);
      if (covers) out.push({ principal: rec.principal, role: g.role, scope: g.scope.kind === 'project' ? 'project' : `${g.scope.kind} ${g.scope.id.join('.')}` });
    }
  });
  return out.sort((a, b) => (a.principal < b.principal ? -1 : a.principal > b.principal ? 1 : 0));
}

/** Past versions of the given keys, newest first, each with the change stamp its body carried. */
async function historyOf(history: RegistryHistory, wanted: readonly string[], _store: ObjectStore): Promise<HistoryEntry[]> {
  const out: HistoryEntry[] = [];
  for (const key of new Set(wanted)) {
    for await (const versions of history.versions(key)) {
      for (const v of versions) {
        if (v.key !== key) continue;
        let stamp: ChangeStamp | undefined;
        if (!v.deleted) {
          try {
            stamp = asChangeStamp((JSON.parse((await history.body(v)).toString('utf8')) as Record<string, unknown>)[CHANGE_FIELD]);
          } catch {
            stamp = undefined;
          }
        }
        out.push({ key, time: v.time.toISOString(), deleted: v.deleted, current: v.current, ...(stamp ? { operation: stamp.op, by: stamp.by } : {}) });
      }
    }
  }
  return out.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
}
