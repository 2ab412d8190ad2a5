import { fmtId } from '../ids.js';
import { ConcurrentModificationError } from '../../errors.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { NamespaceRecord, TableRecord } from '../../registry/records.js';
import type { Versioned } from '../../ports/object-store.js';
import type { CatalogServices } from '../services.js';
import { dropClaimId, moveClaimId, type KnownClaim } from './claims.js';
import { putMarkersOf, removeMarkers } from './markers.js';
import { carryProtection, readProtectionRecord } from '../protection.js';
import { clearRenameMark, putRenameMark, withdrawRenameMarks, type PlacedMark } from './rename-marks.js';

/**
 * The rename state machine (docs/protocols.md, "RenameTable"). A rename moves a table record
 * from a source id S to a destination id D; there is no multi-object transaction, so the move
 * is a sequence of single-object conditional writes whose every intermediate state is on
 * record and can be finished or undone by whoever finds it:
 *
 *   rename marks at S and D (rename-marks.ts)            so a listing reads those two names
 *   S active ──CAS──▶ S moving{to D, nonce}            the contended step: one rename wins
 *   D absent ──put-if-absent──▶ D arriving{from S, nonce, sourceEtag}   (together with the mark)
 *   (D's namespace re-checked: it must still be active after the arrival landed)
 *   S moving ──CAS──▶ S moved                          THE DECISION: committed
 *      or    ──CAS──▶ S active, then D arriving deleted   THE DECISION: undone
 *   D arriving ──CAS──▶ D active, claim ids S → D      then the S marker is deleted
 *   (the marks of this nonce removed once the move is committed or undone)
 *
 * Each step reuses what the one before answered (the arrival's etag, the claim read alongside
 * the first write) instead of reading it again: six requests in a row (docs/protocols.md,
 * "Request pattern").
 *
 * Both outcomes are decided by one compare-and-swap on S's `moving` record, so a commit and an
 * undo can never both happen. A committed move activates D before it deletes the S marker, so
 * an arrival whose source no longer carries its nonce was undone, or its mark never landed (a
 * stale arrival), and is deleted; while the source is still at the etag the arrival names, its
 * mark may be in flight, so the source is rewritten first (a fence: etags never come back, so
 * that mark can then never land). The nonce is fresh per attempt: a stale arrival never has the
 * same content (and so the same etag) as a current one, which would let a conditional delete
 * remove the wrong one.
 *
 * Readers never answer from a non-live record: `readSettled` drives whatever it finds to a
 * settled state first. So a rename that crashed half-way is finished (or undone) by the next
 * request that touches either name, and a describe during a rename sees the table under exactly
 * one name. Listings read names only and may show both names for the duration of a rename.
 * In read-only mode a reader answers as the decision on record says, without settling
 * (`readAsDecided`): the next writer or the reconcile pass finishes the move.
 */

type Rec = Versioned<TableRecord>;

export type MoveOutcome =
  | { readonly kind: 'committed' }
  | { readonly kind: 'undone'; readonly reason: 'destination-exists' | 'namespace-missing' | 'warehouse-mismatch' | 'unknown' }
  | { readonly kind: 'unknown' };

/** Bounds help-on-read: each round makes progress unless other requests keep changing the record. */
const ROUNDS = 8;
/** Settling an arrival finishes its source's move, which may settle a foreign arrival: bounded. */
const MAX_DEPTH = 4;

export const isLive = (record: TableRecord): boolean => record.state === undefined || record.state === 'active';

/** The record without rename bookkeeping: what a live table stores. */
export function liveRecord(record: TableRecord): TableRecord {
  const { state: _state, move: _move, ...rest } = record;
  return rest;
}

function tableKey(services: CatalogServices, id: readonly string[]): string {
  return keys.table(services.project, id);
}

/** The record exactly as stored, rename bookkeeping included (only the protocols need this). */
export async function readRaw(services: CatalogServices, id: readonly string[]): Promise<Rec | undefined> {
  return services.registry.read<TableRecord>(tableKey(services, id));
}

/**
 * The table record at `id` once any rename touching it has been finished or undone. In
 * read-only mode (services.readOnly) nothing is finished or undone: the answer is what the
 * settled state will be (`readAsDecided`).
 */
export async function readSettled(services: CatalogServices, id: readonly string[], depth = 0): Promise<Rec | undefined> {
  if (services.readOnly) return readAsDecided(services, id);
  for (let round = 0; round < ROUNDS; round++) {
    const found = await readRaw(services, id);
    if (!found || isLive(found.value)) return found;
    try {
      await settle(services, id, found, depth);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err; // someone else moved it on: look again
    }
  }
  throw new ConcurrentModificationError(`table ${fmtId(id)} is being renamed by concurrent requests; retry`);
}

/**
 * The record at `id` as settling would leave it, without writing (a read-only role cannot):
 *
 * - a `moving` source is undecided, so the table is still the source's: live at `id`;
 * - a `moved` source is decided (committed): the table has left `id`;
 * - an `arriving` destination is live exactly when its source is `moved` with the same nonce and
 *   uid (committed); an undecided source keeps the table there, and a source without the nonce
 *   means the move was undone or its mark has not landed: nothing is at `id`.
 *
 * For any one state of the two records the table is at exactly one name: the decision is the one
 * CAS on the source record. The etag answered is the stored record's, which no read-only caller
 * compares against (a writer always reads settled itself).
 */
async function readAsDecided(services: CatalogServices, id: readonly string[]): Promise<Rec | undefined> {
  let found = await readRaw(services, id);
  for (let round = 0; round < ROUNDS; round++) {
    if (!found || isLive(found.value)) return found;
    switch (found.value.state) {
      case 'moving':
        return { value: liveRecord(found.value), etag: found.etag };
      case 'moved':
        return undefined;
    }
    // `arriving`: the source's record decides.
    const { from: src, nonce } = found.value.move ?? {};
    const source = src ? await readRaw(services, src) : undefined;
    if (source?.value.uid === found.value.uid && source.value.move?.nonce === nonce) {
      return source.value.state === 'moved' ? { value: liveRecord(found.value), etag: found.etag } : undefined;
    }
    // The source does not carry the nonce: an undone move, a mark that has not landed (or never
    // will), or a commit that activated this arrival and removed its marker since we read it
    // (the activation comes first). Look again: an unchanged arrival is not the table.
    const again = await readRaw(services, id);
    if (again?.etag === found.etag) return undefined;
    found = again;
  }
  throw new ConcurrentModificationError(`table ${fmtId(id)} is being renamed by concurrent requests; retry`);
}

async function settle(services: CatalogServices, id: readonly string[], found: Rec, depth: number): Promise<void> {
  if (depth >= MAX_DEPTH) {
    throw new ConcurrentModificationError(`table ${fmtId(id)} is part of a chain of concurrent renames; retry`);
  }
  switch (found.value.state) {
    case 'moving':
      await finishMove(services, id, found, depth + 1);
      return;
    case 'moved':
      await completeMoved(services, id, found);
      return;
    case 'arriving':
      await settleArrival(services, id, found, depth + 1);
      return;
  }
}

/**
 * Starts a rename: marks the source (the conditional write two concurrent renames of one table
 * contend on) and writes the arrival at D in the same round trip. The arrival names the etag the
 * mark is conditional on, so a reader that meets it before the mark lands can fence the mark
 * off instead of guessing (settleArrival). A mark that loses withdraws the arrival written with
 * it. `arrival` is absent when D was taken first: finishMove looks at what holds it.
 */
export async function beginMove(
  services: CatalogServices,
  sourceId: readonly string[],
  source: Rec,
  destination: readonly string[],
  /** The move's nonce and its marks, when the caller placed them already (beside its first reads). */
  placed?: { readonly nonce: string; readonly marks: readonly [PlacedMark, PlacedMark] },
): Promise<{ moving: Rec; arrival?: Rec; marks: RenameMarks }> {
  const nonce = placed?.nonce ?? services.newId();
  const moving: TableRecord = {
    ...liveRecord(source.value),
    state: 'moving',
    move: { nonce, to: [...destination] },
  };
  // The marks go first, so a listing never meets a record of this move without one beside it.
  const [sourceMark, destinationMark] = placed?.marks ?? (await placeRenameMarks(services, sourceId, destination, nonce));
  const marks = { source: sourceMark.etag, destination: destinationMark.etag };
  const arrival = arrivalOf(moving, sourceId, destination, source.etag);
  const destKey = tableKey(services, destination);
  const [marked, arrived] = await Promise.allSettled([
    services.registry.replace(tableKey(services, sourceId), moving, source.etag),
    services.registry.create(destKey, arrival),
  ]);
  if (marked.status === 'rejected') {
    if (arrived.status === 'fulfilled') await services.registry.remove(destKey, arrived.value).catch(ignoreLostRace);
    await withdrawRenameMarks(services, [sourceMark, destinationMark]);
    throw marked.reason;
  }
  const begun = { value: moving, etag: marked.value };
  if (arrived.status === 'rejected') {
    ignoreLostRace(arrived.reason);
    return { moving: begun, marks };
  }
  return { moving: begun, arrival: { value: arrival, etag: arrived.value }, marks };
}

/** Both marks of move `nonce` (source first), in one round trip. */
export async function placeRenameMarks(
  services: CatalogServices,
  sourceId: readonly string[],
  destination: readonly string[],
  nonce: string,
): Promise<[PlacedMark, PlacedMark]> {
  return Promise.all([putRenameMark(services, sourceId, nonce), putRenameMark(services, destination, nonce)]);
}

/** The etags of the rename marks the request that began a move placed (rename-marks.ts). */
export interface RenameMarks {
  readonly source: string;
  readonly destination: string;
}

/** Removes the marks of a committed or undone move at both its names (`known`: the etags its request placed them with). */
async function clearMarksOf(services: CatalogServices, names: readonly (readonly string[])[], nonce: string, known?: RenameMarks): Promise<void> {
  const etags = [known?.source, known?.destination];
  await Promise.all(names.map((id, i) => clearRenameMark(services, id, nonce, etags[i])));
}

/** The destination's record while the move is undecided. */
function arrivalOf(moving: TableRecord, sourceId: readonly string[], dest: readonly string[], sourceEtag?: string): TableRecord {
  const move = { nonce: moving.move!.nonce, from: [...sourceId], ...(sourceEtag === undefined ? {} : { sourceEtag }) };
  return { ...liveRecord(moving), id: [...dest], state: 'arriving', move };
}

/** What the request that began a move already knows; saves re-reading it (first round only). */
export interface MoveHints {
  /** The arrival written alongside the mark (absent: D was taken, or not written yet). */
  readonly arrival?: Rec;
  /** The location claim, read alongside the move's first write. */
  readonly claim?: KnownClaim;
  /** The rename marks it placed. */
  readonly marks?: RenameMarks;
}

/**
 * Drives a `moving` source record to a decision. Undoes the move when the destination is taken
 * by another table, its namespace is missing or being dropped, or is bound to another warehouse
 * than the table's data; commits it otherwise.
 */
export async function finishMove(
  services: CatalogServices,
  sourceId: readonly string[],
  moving: Rec,
  depth = 1,
  hints: MoveHints = {},
): Promise<MoveOutcome> {
  const { to: dest, nonce } = moving.value.move ?? {};
  if (!dest || !nonce) throw new ConcurrentModificationError(`table ${fmtId(sourceId)} has a malformed rename record`);
  const destKey = tableKey(services, dest);
  // What the destination holds, when known without reading it: our own arrival just written
  // (its etag is the create's answer).
  let known: { arrived: Rec | undefined } | undefined = hints.arrival ? { arrived: hints.arrival } : undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const arrived = known ? known.arrived : await readRaw(services, dest);
    known = undefined;
    const ours = arrived?.value.state === 'arriving' && arrived.value.move?.nonce === nonce;
    if (arrived && !ours) {
      // A live table, or one that is itself being renamed away: D is taken.
      if (isLive(arrived.value) || arrived.value.state === 'moving') {
        return undo(services, sourceId, moving, 'destination-exists', undefined, hints.marks);
      }
      // Someone else's arrival (another rename into D, or a stale one), or the marker of a table
      // that has left D: settle it, then look again.
      await settle(services, dest, arrived, depth).catch(ignoreLostRace);
      continue;
    }
    if (!arrived) {
      const arrival = arrivalOf(moving.value, sourceId, dest);
      try {
        known = { arrived: { value: arrival, etag: await services.registry.create(destKey, arrival) } };
      } catch (err) {
        ignoreLostRace(err); // something landed at D first: look at it
      }
      continue;
    }
    // Read after our arrival landed: a namespace drop that marked `dropping` before this read
    // lists D afterwards and settles it; one that marks it later sees the committed table.
    const namespace = await namespaceState(services, dest.slice(0, -1));
    if (!namespace.active) return undo(services, sourceId, moving, 'namespace-missing', arrived, hints.marks);
    if (namespace.warehouse !== moving.value.warehouse) return undo(services, sourceId, moving, 'warehouse-mismatch', arrived, hints.marks);
    const moved: TableRecord = { ...moving.value, state: 'moved' };
    let movedEtag: string;
    try {
      movedEtag = await services.registry.replace(tableKey(services, sourceId), moved, moving.etag);
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      return observe(services, sourceId, moving);
    }
    await completeMoved(services, sourceId, { value: moved, etag: movedEtag }, { arrival: arrived, claim: hints.claim, marks: hints.marks });
    return { kind: 'committed' };
  }
  throw new ConcurrentModificationError(`renaming table ${fmtId(sourceId)} kept colliding with concurrent requests; retry`);
}

/**
 * After the commit: make the destination live and let the location claim name it (together),
 * then delete the source marker, which is what tells an arrival "committed" until then.
 * `known` carries what the committing request already holds: its arrival (with the etag its
 * create answered) and the claim it read.
 */
async function completeMoved(
  services: CatalogServices,
  sourceId: readonly string[],
  moved: Rec,
  known: { arrival?: Rec; claim?: KnownClaim; marks?: RenameMarks } = {},
): Promise<void> {
  const { to: dest, nonce } = moved.value.move ?? {};
  if (dest && nonce) {
    await Promise.all([
      activate(services, dest, nonce, known.arrival),
      moveClaimId(services, moved.value, sourceId, dest, known.claim),
      // A declared-only table (the usual rename) keeps no marker: nothing to write.
      putMarkersOf(services, dest, moved.value),
      carryProtectionOf(services, moved.value, sourceId, dest),
    ]);
  }
  // D is live: its rename mark goes beside the source marker's removal; S's only after it.
  const destinationMark = dest && nonce ? clearRenameMark(services, dest, nonce, known.marks?.destination) : Promise.resolve();
  destinationMark.catch(() => undefined); // settled even when the removal below throws first
  await services.registry.remove(tableKey(services, sourceId), moved.etag).catch(ignoreLostRace);
  await destinationMark;
  await Promise.all([
    removeMarkers(services, sourceId, moved.value),
    nonce ? clearRenameMark(services, sourceId, nonce, known.marks?.source) : undefined,
  ]);
}

/**
 * Makes the committed move's arrival at D live. A lost compare-and-swap is verified, never
 * assumed to be another helper's activation (issue #35: S3's 409 ConditionalRequestConflict, which
 * writes nothing, once read as "someone activated it first" lost an acknowledged rename when the
 * source marker went next): D is read again, an arrival of this move still there is activated
 * on its new etag, and only a live record of this table (or, once D has moved on, anything else:
 * only a live D can be renamed away or dropped, and nothing deletes an arrival of a committed
 * move while its source marker stands) lets the caller delete the source marker.
 */
/**
 * A committed move of a protected table (a forced rename) takes its protection along, here and
 * not in the renaming request: whoever finishes the move (a later read, after the request died)
 * carries it before the source marker goes, so the protection is never lost (issue #35). Only a
 * record that may be protected costs the read (protection.ts, `mayBeProtected`).
 */
async function carryProtectionOf(services: CatalogServices, table: TableRecord, from: readonly string[], to: readonly string[]): Promise<void> {
  if (table.mayBeProtected === false) return;
  const protection = await readProtectionRecord(services, 'table', from);
  if (protection?.uid === table.uid) await carryProtection(services, from, to, protection);
}

async function activate(services: CatalogServices, dest: readonly string[], nonce: string, known: Rec | undefined): Promise<void> {
  let first = known;
  await services.registry.retrying(`activate renamed table ${fmtId(dest)}`, async () => {
    const arrived = first ?? (await readRaw(services, dest));
    first = undefined;
    if (arrived?.value.state !== 'arriving' || arrived.value.move?.nonce !== nonce) return;
    await services.registry.replace(tableKey(services, dest), liveRecord(arrived.value), arrived.etag);
  });
}

type UndoReason = 'destination-exists' | 'namespace-missing' | 'warehouse-mismatch';

/** Undoes a move: the decision is the CAS back to live; the arrival is cleaned up after it. */
async function undo(
  services: CatalogServices,
  sourceId: readonly string[],
  moving: Rec,
  reason: UndoReason,
  arrival?: Rec,
  marks?: RenameMarks,
): Promise<MoveOutcome> {
  try {
    await services.registry.replace(tableKey(services, sourceId), liveRecord(moving.value), moving.etag);
  } catch (err) {
    if (!(err instanceof ConditionFailedError)) throw err;
    return observe(services, sourceId, moving);
  }
  await withdrawArrival(services, sourceId, moving.value, arrival, marks);
  return { kind: 'undone', reason };
}

/**
 * Deletes an undone move's arrival (`known`: the one the caller wrote). The claim never names the
 * destination before a commit, but a rename begun by an earlier version named it before its
 * arrival: drop that id too.
 */
async function withdrawArrival(services: CatalogServices, sourceId: readonly string[], moving: TableRecord, known?: Rec, marks?: RenameMarks): Promise<void> {
  const { to: dest, nonce } = moving.move ?? {};
  if (!dest || !nonce) return;
  const arrived = known ?? (await readRaw(services, dest));
  if (arrived?.value.state === 'arriving' && arrived.value.move?.nonce === nonce) {
    await services.registry.remove(tableKey(services, dest), arrived.etag).catch(ignoreLostRace);
  }
  // The source is live again and the arrival gone: the move is over at both names.
  await Promise.all([dropClaimId(services, moving, dest), clearMarksOf(services, [sourceId, dest], nonce, marks)]);
}

/**
 * Our decisive CAS lost: someone else decided this move. Find out what they decided from where
 * the table is now.
 */
async function observe(services: CatalogServices, sourceId: readonly string[], moving: Rec): Promise<MoveOutcome> {
  const { to: dest, nonce } = moving.value.move!;
  const source = await readRaw(services, sourceId);
  if (source?.value.move?.nonce === nonce && source.value.state === 'moved') {
    await completeMoved(services, sourceId, source);
    return { kind: 'committed' };
  }
  const destination = await readSettled(services, dest!);
  if (destination?.value.uid === moving.value.uid) return { kind: 'committed' };
  if (source?.value.uid === moving.value.uid && isLive(source.value)) {
    await withdrawArrival(services, sourceId, moving.value);
    return { kind: 'undone', reason: 'unknown' };
  }
  return { kind: 'unknown' };
}

/**
 * An `arriving` record: its source's move is still undecided (finish it), or committed (make
 * it live), or was undone or never begun, which is the case exactly when the source no longer
 * carries the arrival's nonce, since a commit keeps the `moved` marker until the arrival is
 * live, once no mark can land on the source any more: a source still at the etag the arrival
 * names may yet take the mark written alongside it, so it is rewritten first (the fence), after
 * which that mark's If-Match can never succeed (etags never come back, registry.ts).
 */
async function settleArrival(services: CatalogServices, destId: readonly string[], arriving: Rec, depth: number): Promise<void> {
  const { from: src, nonce, sourceEtag } = arriving.value.move ?? {};
  const source = src ? await readRaw(services, src) : undefined;
  if (source && source.value.uid === arriving.value.uid && source.value.move?.nonce === nonce) {
    if (source.value.state === 'moving') {
      await finishMove(services, src!, source, depth);
      return;
    }
    if (source.value.state === 'moved') {
      await completeMoved(services, src!, source);
      return;
    }
  }
  if (source && sourceEtag !== undefined && source.etag === sourceEtag) {
    // Losing this CAS means the source changed (the mark may have landed): the caller looks again.
    await services.registry.replace(tableKey(services, src!), source.value, source.etag);
  }
  await services.registry.remove(tableKey(services, destId), arriving.etag);
  // This nonce is on no record now, and (fenced, or never carried) never will be at the source.
  await Promise.all([dropClaimId(services, arriving.value, destId), nonce && src ? clearMarksOf(services, [src, destId], nonce) : undefined]);
}

/** Whether the namespace is active, and the warehouse its tables live in (the root: the default one). */
async function namespaceState(services: CatalogServices, id: readonly string[]): Promise<{ active: boolean; warehouse?: string }> {
  if (id.length === 0) return { active: true, warehouse: services.defaultWarehouse };
  const found = await services.registry.read<NamespaceRecord>(keys.namespace(services.project, id));
  return { active: found?.value.state === 'active', warehouse: found?.value.warehouse ?? services.defaultWarehouse };
}

function ignoreLostRace(err: unknown): void {
  if (!(err instanceof ConditionFailedError)) throw err;
}
