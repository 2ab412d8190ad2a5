/**
 * AlterTableAlterColumns and AlterTableDropColumns, and what they do to the table's index
 * definitions (index-definitions.ts, issue #33 item 3). A rename keeps the index (Lance indexes
 * field ids), so its definition follows the new name; a type change rewrites the column and
 * drops its index, which the index builder then rebuilds from the definition; a dropped column
 * takes its indices with it, and their definitions go too. Both answers name the indices the
 * change cost (`index_effects`, write-effects.ts), as every data write does; a schema change
 * writes no rows, so they carry no `bytes_written`.
 */
import type { AlterColumnsInput, DropColumnsInput } from '../../ports/data-inputs.js';
import { type CatalogServices, dataEngineOf } from '../services.js';
import type { ResolvedTable } from '../protocols/lookup.js';
import { branchOf } from './column-fill.js';
import { dropColumnDefinitions, renameColumns } from './index-definitions.js';
import { withEffects } from './write-effects.js';

/** The engine's `{version}` and, when the change cost an index, `index_effects`. */
async function withIndexEffects(t: ResolvedTable, svc: CatalogServices, branch: string | undefined, change: () => Promise<{ version: number }>) {
  const { bytes_written: _bytes, ...answer } = await withEffects(dataEngineOf(svc), t, branch, change);
  return answer;
}

export async function alterColumns(svc: CatalogServices, t: ResolvedTable, input: AlterColumnsInput) {
  const engine = dataEngineOf(svc);
  const branch = branchOf(input);
  const answer = await withIndexEffects(t, svc, branch, () => engine.alterColumns(t.location, input));
  if (branch === undefined) {
    // Top-level columns only: an index is on a top-level column (a nested path's rename leaves it).
    const renames = new Map(input.alterations.filter((a) => a.rename !== undefined && !a.path.includes('.')).map((a) => [a.path, a.rename!]));
    await renameColumns(svc, t.record, renames);
  }
  return answer;
}

export async function dropColumns(svc: CatalogServices, t: ResolvedTable, input: DropColumnsInput) {
  const engine = dataEngineOf(svc);
  const branch = branchOf(input);
  const answer = await withIndexEffects(t, svc, branch, () => engine.dropColumns(t.location, input));
  if (branch === undefined) await dropColumnDefinitions(svc, t.record, input.columns);
  return answer;
}
