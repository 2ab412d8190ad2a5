/**
 * Computed columns, which LanceDB 0.31.0 does not have, built from what it does have.
 *
 * Spec (AddColumnsEntry.computed): "The column is added all-null with the expression persisted
 * as its binding in field metadata; its type … inferred from the expression. Rows are filled by
 * backfill, never at declaration." So:
 *
 * - declaring: the expression's type is found by adding it as a column to an empty in-memory
 *   table with the same schema (the same SQL planner, no rows, nothing written to the real
 *   table); then the real table gets a nullable all-null column of that type whose field
 *   metadata holds the binding under `rask.computed` — one addColumns, one commit, and an
 *   all-null column costs no data files;
 * - backfilling: `UPDATE t SET <column> = <binding> WHERE <where>`, where `where` defaults to
 *   `<column> IS NULL` (the rows not computed yet). A caller recomputes other rows (after
 *   their inputs changed) by passing a `where` of its own, e.g. `true` for all of them.
 *
 * The binding is ordinary field metadata: it survives renames and updates, and
 * UpdateFieldMetadata can change it (the next backfill computes the new expression).
 */
import { randomUUID } from 'node:crypto';
import { InvalidInputError, TableColumnNotFoundError } from '../../errors.js';
import type { ArrowField } from '../../data/arrow.js';
import { loadArrow } from '../../data/arrow.js';
import type { LanceDb, Table } from './lancedb.js';
import { splitFieldPath } from '../../data/names.js';
import { lanceSession } from './session.js';
import { checkSql } from '../../data/sql-bounds.js';
import { defaultBackfillFilter } from '../../data/backfill-filter.js';
import type { ComputedBinding } from '../../ports/data-engine.js';

/** Field-metadata key of a computed column's binding (its SQL expression). */
export const COMPUTED_BINDING_KEY = 'rask.computed';

/** The nullable, all-null field that declares computed column `name` bound to `expression`. */
export async function computedField(table: Table, lib: LanceDb, name: string, expression: string): Promise<ArrowField> {
  // Through the process's session, so even a scratch table's metadata counts against the one
  // budget. A connection of its own for each declaration, closed after it (an in-memory connect
  // costs little, and declarations are rare): one kept for the life of the process held the
  // session it was made through, so a renewed session (session.ts) could never be freed.
  const db = await lib.connect('memory://', { session: lanceSession() });
  try {
    const probeName = `probe_${randomUUID().replace(/-/g, '')}`;
    const probe = await db.createEmptyTable(probeName, await table.schema());
    try {
      // Evaluated over no rows: only planned and typed. A bad expression fails here, naming itself.
      await probe.addColumns([{ name, valueSql: expression }]);
      const typed = (await probe.schema()).fields.find((f) => f.name === name);
      if (!typed) throw new InvalidInputError(`computed column "${name}": could not infer a type from ${JSON.stringify(expression)}`);
      return new (loadArrow().Field)(name, typed.type, true, new Map([[COMPUTED_BINDING_KEY, expression]]));
    } finally {
      probe.close();
      await db.dropTable(probeName).catch(() => undefined);
    }
  } finally {
    db.close();
  }
}

export type Binding = ComputedBinding;

/** The binding of top-level column `column`: 12 when there is no such column, 13 when it is not computed. */
export async function computedBinding(table: Table, column: string): Promise<Binding> {
  const path = splitFieldPath(column);
  const field = (await table.schema()).fields.find((f) => f.name === path[0]);
  if (!field) throw new TableColumnNotFoundError(`column "${column}" does not exist`);
  const expression = path.length === 1 ? field.metadata.get(COMPUTED_BINDING_KEY) : undefined;
  if (!expression) {
    throw new InvalidInputError(
      `column "${column}" is not a computed column: only columns added with "computed" (AlterTableAddColumns) can be backfilled`,
    );
  }
  // UpdateFieldMetadata can rewrite a binding, so it is bounded where it is read, not only where it was added.
  return { column: field.name, expression: checkSql(expression, `binding of column "${column}"`) };
}

/** Plans (does not run) a filter, so a bad `where` is refused before a job is queued for it. */
export async function checkFilter(table: Table, where: string): Promise<void> {
  await table.query().where(where).limit(1).explainPlan();
}

export async function backfill(
  table: Table,
  request: { column: string; where?: string },
): Promise<{ updated_rows: number; version: number; expression: string; where: string }> {
  const { column, expression } = await computedBinding(table, request.column);
  const where = request.where ?? defaultBackfillFilter(column);
  const r = await table.update({ valuesSql: new Map([[column, expression]]), where });
  return { updated_rows: r.rowsUpdated, version: r.version, expression, where };
}
