import type { CatalogServices } from '../services.js';
import { markBeforeFirstWrite } from '../tables/create.js';
import { writeFirstVersion } from '../protocols/first-version.js';
import type { ResolvedTable } from '../protocols/lookup.js';
import { hasData } from '../protocols/lookup.js';
import { ConcurrentModificationError, TableNotFoundError } from '../../errors.js';

const ATTEMPTS = 3;

/**
 * Runs `write` on the table; if the table is only declared (a record and a location, no
 * dataset yet), runs `create` instead: the spec has InsertIntoTable and MergeInsertIntoTable
 * create a declared table with the data they carry. The dataset is looked for only after a
 * failure, so ordinary writes pay nothing for this.
 *
 * The first version is arbitrated (first-version.ts): `create` writes a private staging dataset
 * and exactly one writer publishes its manifest; a writer that lost, or that found the dataset
 * appearing between its write and its look, runs `write` again on top of the winner's version.
 */
export async function writeOrCreate<T>(
  services: CatalogServices,
  table: ResolvedTable,
  write: () => Promise<T>,
  /** Creates a new dataset holding this request's data at `location` (a staging location). */
  create: (location: string) => Promise<T>,
): Promise<T> {
  await markBeforeFirstWrite(services, table);
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof TableNotFoundError)) throw err;
      if (await hasData(table.store, table.record.path)) {
        // The first version landed after our write looked: write again on top of it.
        if (attempt < ATTEMPTS) continue;
        throw err;
      }
    }
    const first = await writeFirstVersion(
      { store: table.store, path: table.record.path, location: table.location },
      services.newId(),
      create,
    );
    if (first.won) return first.value;
    if (attempt >= ATTEMPTS) {
      throw new ConcurrentModificationError('the first version of the table was written concurrently; retry');
    }
  }
}
