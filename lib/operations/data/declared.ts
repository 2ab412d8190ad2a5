import type { ResolvedTable } from '../../catalog/tables/lookup.js';
import { hasData } from '../../catalog/tables/lookup.js';
import { TableAlreadyExistsError, TableNotFoundError } from '../../errors.js';

/**
 * Runs `write` on the table; if the table is only declared (a record and a location, no
 * dataset yet), runs `create` instead: the spec has InsertIntoTable and MergeInsertIntoTable
 * create a declared table with the data they carry. The dataset is looked for only after a
 * failure, so ordinary writes pay nothing for this.
 */
export async function writeOrCreate<T>(
  table: ResolvedTable,
  write: () => Promise<T>,
  create: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof TableNotFoundError) || (await hasData(table.store, table.record.path))) throw err;
  }
  try {
    return await create();
  } catch (err) {
    // Another writer created the dataset meanwhile: this is an ordinary write after all.
    if (err instanceof TableAlreadyExistsError) return write();
    throw err;
  }
}
