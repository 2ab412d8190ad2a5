import {
  ConcurrentModificationError,
  NamespaceNotFoundError,
  TableAlreadyExistsError,
  TableNotFoundError,
  UnsupportedError,
} from '../../errors.js';
import { sameId } from '../../http/ids.js';
import { ConditionFailedError } from '../../ports/object-store.js';
import { validateName } from '../../registry/keys.js';
import { readNamespace } from '../namespaces/record.js';
import { requireNamespace } from '../namespaces/lookup.js';
import type { CatalogServices } from '../services.js';
import { readTable, tableKey, validateTableId } from '../protocols/lookup.js';
import { fmtId, validateId } from '../ids.js';
import { beginMove, finishMove, placeRenameMarks } from '../protocols/move.js';
import { withdrawRenameMarks } from '../protocols/rename-marks.js';
import { readClaim } from '../protocols/claims.js';
import { protectedError, readProtectionRecord } from '../protection.js';

export interface RenameInput {
  readonly id: readonly string[];
  readonly newName: string;
  /** Absent: the table stays in its namespace. `[]` is the root namespace. */
  readonly newNamespace?: readonly string[];
  /** Overrides protection (docs/lifecycle.md) and nothing else. */
  readonly force?: boolean;
}

/**
 * RenameTable: moves the pointer, never the bytes (the record keeps its location, uid and
 * properties). The source record is switched to `moving` with a compare-and-swap, which is the
 * step two concurrent renames of one table contend on, so only one can win; the destination is
 * created with put-if-absent in the same round trip, and the move is committed or undone by one
 * more compare-and-swap on the source (move.ts has the state machine, docs/protocols.md the
 * reasoning). Check order: shape (13) → source exists (4) → not protected unless forced (19)
 * → destination namespace exists (1) → same warehouse (0) → destination free (5) → write.
 * Within one namespace, (1) and (0) are answered after the write by the move's namespace
 * re-check (the move is undone), which only a drop racing the rename can make fail.
 * Protection belongs to the table, not the name: a forced rename's move carries it to the new name.
 */
export async function renameTable(services: CatalogServices, input: RenameInput): Promise<Record<string, never>> {
  validateTableId(input.id);
  validateName('table', input.newName);
  const namespace = input.newNamespace ?? input.id.slice(0, -1);
  validateId('namespace', namespace);
  const dest = [...namespace, input.newName];
  tableKey(services, dest); // refuses an over-long destination key (13) before anything is read

  // Within one namespace the table's own record proves the namespace exists, so it is not read
  // up front: the re-check every move makes after its arrival lands (move.ts) answers for it,
  // and for the warehouse (undoing the move if either fails, which only a drop racing the
  // rename can make happen).
  const sameNamespace = sameId(namespace, input.id.slice(0, -1));
  /** The checks on the first round trip's reads, in the check order. */
  const checkRename = async (
    sourceRead: PromiseSettledResult<Awaited<ReturnType<typeof readTable>>>,
    namespaceRead: PromiseSettledResult<Awaited<ReturnType<typeof requireNamespace>>>,
    destRead: PromiseSettledResult<Awaited<ReturnType<typeof readTable>>>,
  ) => {
    const source = settled(sourceRead);
    if (!source) throw new TableNotFoundError(`table ${fmtId(input.id)} does not exist`);
    // The protection record, unless the table record rules protection out (protection.ts,
    // `mayBeProtected`) or the request forces (the move carries a protection itself).
    const protection = input.force || source.value.mayBeProtected === false ? undefined : await readProtectionRecord(services, 'table', input.id);
    if (protection?.uid === source.value.uid) throw protectedError('table', input.id, 'renamed');
    if (!sameNamespace) {
      const destNamespace = settled(namespaceRead);
      const destWarehouse = destNamespace?.value.warehouse ?? services.defaultWarehouse;
      if (destWarehouse !== source.value.warehouse) throw warehouseMismatch(input.id, namespace, destWarehouse, source.value.warehouse);
    }
    if (settled(destRead)) throw new TableAlreadyExistsError(`table ${fmtId(dest)} already exists`);
  };
  return services.registry.retrying(`rename table ${fmtId(input.id)}`, async () => {
    if (sameId(dest, input.id)) {
      // Refused whatever the reads say, in the check order (4, 19, then 5); nothing is marked.
      const none = { status: 'fulfilled', value: undefined } as const;
      await checkRename((await Promise.allSettled([readTable(services, input.id)]))[0], none, none);
      throw new TableAlreadyExistsError(`table ${fmtId(dest)} already exists`);
    }
    // The reads are independent: one round trip for all, answered in the check order. The move's
    // rename marks (protocols/rename-marks.ts) are placed in the same round trip, before any
    // record of the move is written; a refused rename removes those it created.
    const nonce = services.newId();
    const [sourceRead, namespaceRead, destRead, marksPlaced] = await Promise.allSettled([
      readTable(services, input.id),
      sameNamespace ? Promise.resolve(undefined) : requireNamespace(services, namespace, '; create it before moving a table into it'),
      readTable(services, dest),
      placeRenameMarks(services, input.id, dest, nonce),
    ]);
    const marks = settled(marksPlaced);
    try {
      await checkRename(sourceRead, namespaceRead, destRead);
    } catch (err) {
      await withdrawRenameMarks(services, marks);
      throw err;
    }
    const source = settled(sourceRead)!;

    // The claim is read alongside the first writes (the mark and the arrival): the commit
    // rewrites it (move.ts).
    const [begun, claim] = await Promise.all([beginMove(services, input.id, source, dest, { nonce, marks }), readClaim(services, source.value)]);
    const { moving, arrival } = begun;
    const outcome = await finishMove(services, input.id, moving, 1, { arrival, claim, marks: begun.marks });
    switch (outcome.kind) {
      case 'committed':
        // The move itself carried a protection along (move.ts, completeMoved).
        return {};
      case 'undone':
        if (outcome.reason === 'destination-exists') throw new TableAlreadyExistsError(`table ${fmtId(dest)} already exists`);
        if (outcome.reason === 'namespace-missing') {
          throw new NamespaceNotFoundError(`namespace ${fmtId(namespace)} was dropped while the table was being renamed into it`);
        }
        if (outcome.reason === 'warehouse-mismatch') {
          const bound = (await readNamespace(services, namespace))?.value.warehouse ?? services.defaultWarehouse;
          throw warehouseMismatch(input.id, namespace, bound, source.value.warehouse);
        }
        // Undone by another request for a reason we did not see: start over, the next round's
        // checks answer with the reason (or rename it after all).
        throw new ConditionFailedError(tableKey(services, input.id), 'conflict');
      case 'unknown':
        throw new ConcurrentModificationError(
          `table ${fmtId(input.id)} was changed by another request while it was being renamed; look it up and retry if needed`,
        );
    }
  });
}

function warehouseMismatch(id: readonly string[], namespace: readonly string[], bound: string, data: string): Error {
  return new UnsupportedError(
    `cannot rename table ${fmtId(id)} into namespace ${fmtId(namespace)}: it is bound to warehouse ` +
      `${JSON.stringify(bound)}, the table's data lives in ${JSON.stringify(data)}, and a rename never moves bytes`,
  );
}

function settled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}
