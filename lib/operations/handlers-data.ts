import type { CatalogServices } from '../catalog/services.js';
import { backfillHandlers } from './data/backfill.js';
import { indexHandlers } from './data/indices.js';
import { readHandlers } from './data/reads.js';
import { refHandlers } from './data/refs.js';
import { schemaHandlers } from './data/schema.js';
import { writeHandlers } from './data/writes.js';
import { fmtId } from '../catalog/namespaces.js';
import { CatalogError } from '../errors.js';
import type { HandlerMap, OperationRequest } from './types.js';

/**
 * Handlers of the data bundle (Arrow IPC, queries, indices, schema). Each resolves the table
 * through the registry and calls the process's one LanceDataEngine on its location. They reach
 * LanceDB through lib/data, which loads it lazily; this bundle ships with the LanceDB Lambda
 * layer. Data operations without a handler here answer code 0 with the reason in unsupported.ts.
 */
export const dataHandlers: HandlerMap<CatalogServices> = namingTablesById({
  ...writeHandlers,
  ...readHandlers,
  ...indexHandlers,
  ...refHandlers,
  ...schemaHandlers,
  ...backfillHandlers,
});

/**
 * LanceDB names a table by its dataset directory (`Table 't1' already exists`); the catalog
 * names it by id (`table ["ns","t1"] already exists`). Errors of data handlers are rewritten to
 * the catalog's form, so one condition reads the same from every door.
 */
function namingTablesById(handlers: HandlerMap<CatalogServices>): HandlerMap<CatalogServices> {
  return Object.fromEntries(
    Object.entries(handlers).map(([op, handler]) => [
      op,
      async (req: OperationRequest, svc: CatalogServices) => {
        try {
          return await handler!(req, svc);
        } catch (err) {
          if (err instanceof CatalogError && req.id.length > 0 && /\bTable '[^']*'/.test(err.message)) {
            err.message = err.message.replace(/\bTable '[^']*'/g, `table ${fmtId(req.id)}`);
          }
          throw err;
        }
      },
    ]),
  );
}
