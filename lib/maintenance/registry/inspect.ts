import { forEachLimited } from '../../concurrency.js';
import { asChangeStamp, CHANGE_FIELD, type ChangeStamp } from '../../events/change-stamp.js';
import type { ObjectStore } from '../../ports/object-store.js';
import type { RegistryHistory } from '../../ports/registry-history.js';
import { sameId } from '../../http/ids.js';
import { keys, parseLocationClaimKey } from '../../registry/keys.js';
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
  /** The record the finding is about (absent for a finding about something missing). */
  readonly key?: string;
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
  /** The requests the claim scan made (see `scanClaims`): one LIST per 1,000 claims, one GET per claim. */
  readonly claimScan?: { readonly lists: number; readonly claims: number };
}

const WIDTH = 16;

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
  // Claims whose record is gone are reached by no key of the name: only a scan finds them.
  const claimScan = nested ? await scanClaims(store, project, id, (key, etag, body) => {
    if (!records.some((r) => r.key === key)) records.push(decode('location-claim', key, etag, body));
  }) : undefined;
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
  const holders = await recordsNamedByClaims(store, project, records);
  const findings = judge(records, claim, { project, id, holders });
  const history = options.history ? await historyOf(options.history, records.map((r) => r.key).concat(nested ? [keys.table(project, id), keys.namespace(project, id)] : []), store) : undefined;
  return { project, id, records, findings, grants, ...(history ? { history } : {}), ...(claimScan ? { claimScan } : {}) };
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

/**
 * Every location claim of the project whose `ids` name `id`, found by listing `p/<P>/loc/` and
 * reading each claim (docs/operations.md, "Registry backup and restore": what inspect costs).
 * A claim is keyed by its location, and the location of a table whose record is gone (a DropTable
 * or DeclareTable stopped between its writes) is written nowhere under the name: the claim's
 * body is the only place that names the table. An index by id would cost a write on every
 * create, rename and drop to serve this rare read; the scan costs the operator's one command.
 */
async function scanClaims(
  store: ObjectStore,
  project: string,
  id: readonly string[],
  found: (key: string, etag: string, body: Buffer) => void,
): Promise<{ lists: number; claims: number }> {
  let lists = 0;
  let claims = 0;
  let startAfter: string | undefined;
  for (;;) {
    const page = await store.list({ prefix: keys.locationClaimsPrefix(project), startAfter, limit: 1000 });
    lists++;
    const own = page.objects.filter((o) => parseLocationClaimKey(project, o.key));
    claims += own.length;
    await forEachLimited(own, WIDTH, async (o) => {
      const got = await store.get(o.key);
      if (!got) return;
      try {
        const rec = JSON.parse(got.body.toString('utf8')) as LocationClaimRecord;
        if ((rec.ids ?? []).some((x) => sameId(x, id))) found(o.key, got.etag, got.body);
      } catch {
        // Unreadable: it names nobody; reconcile reports it.
      }
    });
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return { lists, claims };
    startAfter = last.key;
  }
}

/** The table records (raw, as stored) at every id a shown claim or trash record names: who holds what. */
async function recordsNamedByClaims(store: ObjectStore, project: string, records: readonly InspectedRecord[]): Promise<Map<string, TableRecord>> {
  const ids: (readonly string[])[] = [];
  for (const r of records) {
    if (r.role === 'location-claim') ids.push(...((r.record as unknown as LocationClaimRecord).ids ?? []));
    if (r.role === 'trash') {
      const t = (r.record as unknown as TrashRecord).table;
      if (t) ids.push(t.id);
    }
  }
  const out = new Map<string, TableRecord>();
  await forEachLimited([...new Set(ids.map((x) => JSON.stringify(x)))], WIDTH, async (text) => {
    const key = keys.table(project, JSON.parse(text) as string[]);
    const got = await store.get(key);
    if (!got) return;
    try {
      out.set(text, JSON.parse(got.body.toString('utf8')) as TableRecord);
    } catch {
      // Unreadable: holds nothing.
    }
  });
  return out;
}

interface JudgeContext {
  readonly project: string;
  readonly id: readonly string[];
  /** Table records at the ids claims and trash records name, by JSON of the id. */
  readonly holders: ReadonlyMap<string, TableRecord>;
}

const fmt = (id: readonly string[] | undefined) => (id ? id.join('.') : '?');

/** The id under which a live record of table `uid` is (at `path`, when given), among `ids`. */
function liveAt(ctx: JudgeContext, uid: string, ids: readonly (readonly string[])[], path?: string): readonly string[] | undefined {
  return ids.find((x) => {
    const t = ctx.holders.get(JSON.stringify(x));
    return t?.uid === uid && (path === undefined || t.path === path);
  });
}

const RECONCILE = '`rask maintenance reconcile --repair`';

/** The state each record is in, and the repair path that finishes or undoes it (docs/protocols.md). */
function judge(records: readonly InspectedRecord[], claim: InspectedRecord | undefined, ctx: JudgeContext): Finding[] {
  const out: Finding[] = [];
  const trashOf = (uid: string) => records.find((x) => x.role === 'trash' && (x.record as unknown as TrashRecord).table?.uid === uid);
  for (const r of records) {
    const rec = r.record;
    const key = r.key;
    switch (r.role) {
      case 'namespace': {
        const n = rec as unknown as NamespaceRecord;
        if (n.state === 'dropping') {
          out.push({
            key,
            state: 'dropping',
            detail: `namespace drop in progress (${n.drop?.behavior ?? 'restrict'}, since ${n.drop?.since ?? 'unknown'})`,
            repair:
              n.drop?.behavior === 'cascade'
                ? 'the next request that reads the namespace finishes the cascade under the context the mark carries'
                : 'the next request that reads the namespace finishes the drop if it is empty, or undoes it (back to active) if not',
          });
        } else out.push({ key, state: 'active', detail: `namespace ${n.id.join('.')} (uid ${n.uid}, warehouse ${n.warehouse})` });
        break;
      }
      case 'drop-mark':
        out.push({ key, state: 'drop-mark', detail: 'a drop of this namespace may be under way (its drop mark is there)', repair: 'the next listing or read of the namespace looks at its record and removes the mark when no drop is under way' });
        break;
      case 'table': {
        const t = rec as unknown as TableRecord;
        const state = t.state ?? 'active';
        const move = (t as { move?: { to?: readonly string[]; from?: readonly string[] } }).move;
        const where = `table ${t.id.join('.')} (uid ${t.uid}, ${t.warehouse}:${t.path})`;
        if (state === 'moving') out.push({ key, state, detail: `${where}: rename in progress to ${move?.to?.join('.') ?? '?'}`, repair: 'the next read of either name finishes the rename (the arrival is there and its namespace active) or undoes it' });
        else if (state === 'arriving') out.push({ key, state, detail: `${where}: arriving from ${move?.from?.join('.') ?? '?'} (rename in progress)`, repair: 'the next read of either name settles the rename: activates this record or deletes it' });
        else if (state === 'moved') out.push({ key, state, detail: `${where}: rename committed, source not yet removed`, repair: 'the next read of either name finishes it: activates the destination, moves the claim and marker, deletes this source record' });
        else out.push({ key, state: 'active', detail: where });
        if (!claim) out.push({ state: 'claim-missing', detail: `no location claim at ${t.path}`, repair: `reconcile (${RECONCILE}, claim-mismatch) writes the claim \`held\`` });
        break;
      }
      case 'rename-mark':
        out.push({ key, state: 'rename-mark', detail: `a rename touching this name may be under way (${JSON.stringify(rec)})`, repair: 'a listing reads the name through its record (settling the rename), and whoever ends the move removes the mark' });
        break;
      case 'location-claim':
        out.push({ key, ...judgeClaim(rec as unknown as LocationClaimRecord, ctx, trashOf) });
        break;
      case 'trash':
        out.push({ key, ...judgeTrash(rec as unknown as TrashRecord, records, ctx) });
        break;
      case 'namespace-trash':
        out.push({ key, state: 'trashed', detail: `a dropped namespace subtree (${String((rec as { subtree?: { dropId?: string } }).subtree?.dropId ?? '')})`, repair: 'UndropNamespace restores the subtree; the expiry pass removes it when its grace ends' });
        break;
      case 'data-marker':
      case 'maybe-data-marker': {
        const kind = r.role === 'data-marker' ? 'data' : 'maybe';
        const uid = String(rec.uid ?? '');
        const here = ctx.holders.get(JSON.stringify(ctx.id)) ?? (records.find((x) => x.role === 'table')?.record as unknown as TableRecord | undefined);
        if (here?.uid === uid) out.push({ key, state: `${kind}-marker`, detail: `${kind === 'data' ? 'has-data' : 'may-have-data'} marker of table uid ${uid}` });
        else {
          out.push({
            key,
            state: 'leftover-marker',
            detail: `${kind} marker of table uid ${uid || '(unreadable)'}, but ${here ? `the table here is another one (uid ${here.uid})` : 'no table record is here'}: a DeclareTable or CreateTable stopped after its marker and before its record, or a DropTable after removing the record and before the marker`,
            repair: `a listing (ListTables include_declared=false) reads the record behind each marker and skips the name meanwhile; reconcile (${RECONCILE}, leftover-marker) removes the marker`,
          });
        }
        break;
      }
      case 'protection':
        out.push({ key, state: 'protected', detail: `protected since ${String(rec.setAt ?? '?')} by ${String(rec.setBy ?? '?')}: drops and renames need force` });
        break;
      case 'maintenance-policy':
        out.push({ key, state: 'policy', detail: 'a maintenance policy that applies here (`rask maintenance policy`)' });
        break;
    }
  }
  return out;
}

/** A location claim naming the id: whose it is, and what the crash that left it means. */
function judgeClaim(c: LocationClaimRecord, ctx: JudgeContext, trashOf: (uid: string) => InspectedRecord | undefined): Omit<Finding, 'key'> {
  const ids = c.ids ?? [];
  const live = liveAt(ctx, c.uid, ids, c.path);
  const trash = trashOf(c.uid);
  const withdrawn = (trash?.record as unknown as TrashRecord | undefined)?.withdrawn === true;
  const where = `claim on ${c.warehouse}:${c.path} (uid ${c.uid}, ids ${ids.map(fmt).join(', ')})`;
  if (c.state === 'purging') {
    return {
      state: 'purging',
      detail: `${where}: a DropTable removed the record and is deleting (or failed to delete) the bytes`,
      repair: `the purge_table job the drop queued finishes the purge and releases the claim; if none is queued (the drop stopped), reconcile (${RECONCILE}, stuck-purging) queues one; nobody can register the location meanwhile`,
    };
  }
  if (c.state === 'trashed' && live) {
    return {
      state: 'unfinished-drop',
      detail: `${where}: claim \`trashed\` while table ${fmt(live)} is still live: a DropTable to trash stopped before removing the record (or an UndropTable after re-creating it)`,
      repair: `the name's next trash read (ListTableTasks, UndropTable, the expiry pass) or reconcile (${RECONCILE}, claim-mismatch) settles it: the table stays live, the claim \`held\` again, the trash record removed; retry the drop if it was meant`,
    };
  }
  if (c.state === 'trashed' && trash) {
    return { state: 'trashed', detail: `${where}: the table is in trash`, repair: 'UndropTable brings it back; the expiry pass purges it when its grace ends' };
  }
  if (c.state === 'pending' && live) {
    return {
      state: 'pending',
      detail: `${where}: its record is written (${fmt(live)}) but the claim is not confirmed: a CreateTable or RegisterTable between its record and its confirmation`,
      repair: `the creating request confirms it (\`held\`); if that request stopped, reconcile (${RECONCILE}, claim-mismatch) writes it \`held\``,
    };
  }
  if (live) return { state: c.state, detail: `${where}: held by ${fmt(live)}` };
  return {
    state: 'stale-claim',
    detail: `${where} (${c.state}): no table record uses it, at any of its ids: a DropTable or DeregisterTable stopped after removing the record and before releasing or purging the claim, or a DeclareTable, CreateTable or RegisterTable stopped between its claim and its record (or after withdrawing the record)`,
    repair: withdrawn
      ? "the withdrawal note in the name's trash (listed here) makes the name's next trash read (ListTableTasks, UndropTable, the expiry pass) release it"
      : `no read of the name reaches a claim whose record is gone: reconcile (${RECONCILE}, stale-claim) releases it, and the next claimant of the location takes it over; files left at the location are the orphan scan's (\`rask maintenance orphans\`)`,
  };
}

/** A trash record at the id: a real drop, the leftover of one, or a withdrawal note. */
function judgeTrash(t: TrashRecord, records: readonly InspectedRecord[], ctx: JudgeContext): Omit<Finding, 'key'> {
  const uid = t.table?.uid ?? '?';
  if (t.withdrawn) {
    return {
      state: 'withdrawal-note',
      detail: `withdrawal note of table uid ${uid} (filed by ${t.droppedBy}): the door gave the table up but could not release its claim, or could not tell whether its record landed`,
      repair: "the name's next trash read (ListTableTasks, UndropTable, the expiry pass) settles it: the claim is written if the record did land, released if not; the note goes either way",
    };
  }
  const claim = records.find((x) => x.role === 'location-claim' && (x.record as unknown as LocationClaimRecord).uid === uid)?.record as unknown as LocationClaimRecord | undefined;
  const live = t.table ? liveAt(ctx, uid, [...(claim?.ids ?? []), t.table.id]) : undefined;
  if (live) {
    return {
      state: 'unfinished-drop',
      detail: `trash record of table uid ${uid}, which is still live at ${fmt(live)}: a DropTable to trash stopped before removing the record, or an UndropTable after re-creating it`,
      repair: "the name's next trash read (ListTableTasks, UndropTable, the expiry pass) settles it: the table stays live, its claim `held`, this record removed; never shown as trash",
    };
  }
  if (claim?.state === 'purging') {
    return { state: 'purging', detail: `trash record of table uid ${uid} whose bytes are being purged`, repair: 'the purge finishes and removes it' };
  }
  if (claim?.state !== 'trashed' || !claim.ids.some((x) => sameId(x, t.table.id))) {
    return {
      state: 'stale-trash',
      detail: `trash record of table uid ${uid} whose location is not claimed \`trashed\` by it under this name: the leftover of a drop or purge that stopped`,
      repair: "the name's next trash read (ListTableTasks, UndropTable) removes it; it is never shown nor undropped",
    };
  }
  return {
    state: 'trashed',
    detail: `dropped table uid ${uid} in trash until ${t.expiresAt ?? '?'} (by ${t.droppedBy})`,
    repair: 'UndropTable (`POST /v1/table/{id}/undrop`) restores it; ListTableTasks shows it',
  };
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
