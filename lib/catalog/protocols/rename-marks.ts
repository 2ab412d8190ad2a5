import { ConditionFailedError } from '../../ports/object-store.js';
import { keys } from '../../registry/keys.js';
import type { CatalogServices } from '../services.js';

/**
 * A table name's rename mark (keys.tableRenameMark: the record key plus `!`, so it sorts right
 * after the record, in the same LIST): written at the source and at the destination before a
 * rename writes either record (move.ts, beginMove), and removed once the move is committed or
 * undone — by whoever finishes it — and only if it still carries that move's nonce (a later
 * rename of the name takes a mark over before it writes a record). So every record a rename left
 * `moving`, `moved` or `arriving` has a mark beside it, and ListTables and ListAllTables, which
 * learn names from a LIST that carries no record state, read (and settle, the way DescribeTable
 * does) only the marked names of their page: no listing names a table that describes as 404
 * after a crash mid-rename (docs/protocols.md, "The rename mark"). A mark that outlives its move
 * (a crash after the move was settled, or a take-over by a rename that then lost) costs a listing
 * one read of that name until the next rename of the name, or the drop of its namespace, removes it.
 */
interface RenameMark {
  readonly kind: 'table-rename-mark';
  /** The move's nonce (TableRecord.move.nonce): only that move's end removes it. */
  readonly nonce: string;
}

/** A mark this request placed: `fresh` when it created it (no mark was there), with the etag it got. */
export interface PlacedMark {
  readonly id: readonly string[];
  readonly etag: string;
  readonly fresh: boolean;
}

/** Writes (or takes over) the mark of move `nonce` at `id`. */
export async function putRenameMark(services: CatalogServices, id: readonly string[], nonce: string): Promise<PlacedMark> {
  const key = keys.tableRenameMark(services.project, id);
  const mark: RenameMark = { kind: 'table-rename-mark', nonce };
  return services.registry.retrying(`mark table rename ${id.join('.')}`, async () => {
    try {
      return { id, etag: await services.registry.create(key, mark), fresh: true }; // the usual case: one PUT
    } catch (err) {
      if (!(err instanceof ConditionFailedError)) throw err;
      const found = await services.registry.read<RenameMark>(key);
      if (!found) throw err; // removed meanwhile: look again
      // A new etag either way: a remover holding the old one can no longer delete it.
      return { id, etag: await services.registry.replace(key, mark, found.etag), fresh: false };
    }
  });
}

/**
 * Removes the mark of move `nonce` at `id`, once that move is committed or undone. `etag`, when
 * the caller placed the mark itself, saves the read: a mark taken over since has another etag.
 */
export async function clearRenameMark(services: CatalogServices, id: readonly string[], nonce: string, etag?: string): Promise<void> {
  const key = keys.tableRenameMark(services.project, id);
  let current = etag;
  if (current === undefined) {
    const found = await services.registry.read<RenameMark>(key);
    if (!found || found.value.nonce !== nonce) return;
    current = found.etag;
  }
  await services.registry.remove(key, current).catch((err: unknown) => {
    if (!(err instanceof ConditionFailedError)) throw err; // gone, or taken over by a later rename: its own
  });
}

/**
 * A rename attempt whose first record write lost (its nonce is on no record): removes the marks
 * it created. One it took over stays: the rename it took it from may be the one that won.
 */
export async function withdrawRenameMarks(services: CatalogServices, marks: readonly PlacedMark[]): Promise<void> {
  await Promise.all(
    marks
      .filter((m) => m.fresh)
      .map((m) =>
        services.registry.remove(keys.tableRenameMark(services.project, m.id), m.etag).catch((err: unknown) => {
          if (!(err instanceof ConditionFailedError)) throw err;
        }),
      ),
  );
}
