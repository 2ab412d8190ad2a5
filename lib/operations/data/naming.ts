import { fmtId } from '../../catalog/ids.js';
import type { CatalogServices } from '../../catalog/services.js';
import { CatalogError } from '../../errors.js';
import type { HandlerMap, OperationRequest } from '../../contract/request.js';

/**
 * LanceDB names a table by its dataset directory (`Table 't1' already exists`); the catalog
 * names it by id (`table ["ns","t1"] already exists`). Errors of data handlers are rewritten to
 * the catalog's form, so one condition reads the same from every door.
 */
export function namingTablesById(handlers: HandlerMap<CatalogServices>): HandlerMap<CatalogServices> {
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
