import type { CatalogServices } from '../catalog/services.js';
import { ALL_OPERATIONS, type HandlerModule, type OperationId } from '../contract/operations.js';
import type { HandlerMap, OperationHandler, OperationRequest } from '../contract/request.js';

/**
 * The Lambda API functions' handler maps with every handler module loaded on the first request
 * that needs it (issue #37; docs/benchmarks.md, "Cold starts against the floor"): a cold start
 * compiles only what its first request runs, not the whole API. Each loader's `import()` is a chunk
 * of its own in the bundle (infra/bundling.ts, SPLITTING); test/infra/bundle.test.ts checks that
 * the entry does not carry them and that one is loaded on its first request only.
 *
 * The loaders are in handlers-meta-lazy.ts and handlers-all-lazy.ts (the metadata bundle must not
 * even reference a data module). The maps have exactly the operations of their eager twins
 * (handlers-meta.ts, handlers-all.ts; test/unit/handlers-lazy.test.ts compares them): which
 * module holds an operation is the operation table's handler column, so nothing is listed twice.
 * The local server keeps the eager maps (one process, nothing to gain).
 */

/** A loaded handler module's map. */
export type LoadedHandlers = HandlerMap<CatalogServices>;

/** The data bundle's handler modules (lib/operations/data/, composed by handlers-data.ts). */
export type DataModule = Extract<HandlerModule, `lib/operations/data/${string}`>;
/** The metadata bundle's handler modules (composed by handlers-meta.ts). */
export type MetaModule = Exclude<HandlerModule, DataModule>;

/** How to load each of some handler modules (the `import()` that makes it a chunk). */
export type HandlerLoaders<M extends HandlerModule> = { readonly [K in M]: () => Promise<LoadedHandlers> };

/**
 * A handler map over the modules of `loaders` whose handlers load their module on first use.
 * The load is shared by concurrent first requests; a failed load is not kept, so the next
 * request retries it.
 */
export function lazyHandlers<M extends HandlerModule>(loaders: HandlerLoaders<M>): HandlerMap<CatalogServices> {
  const loading = new Map<M, Promise<LoadedHandlers>>();
  const load = (module: M): Promise<LoadedHandlers> => {
    let p = loading.get(module);
    if (!p) {
      p = loaders[module]();
      loading.set(module, p);
      p.catch(() => loading.delete(module));
    }
    return p;
  };
  const map: Partial<Record<OperationId, OperationHandler<CatalogServices>>> = {};
  for (const op of ALL_OPERATIONS) {
    const module = op.handler as M | undefined;
    if (module === undefined || !Object.hasOwn(loaders, module)) continue;
    const id = op.operationId as OperationId;
    map[id] = async (request: OperationRequest, services: CatalogServices) => {
      const handler = (await load(module))[id];
      if (!handler) throw new Error(`${module} has no handler for ${id}`);
      return handler(request, services);
    };
  }
  return map;
}
