import type { HandlerMap } from '../contract/request.js';
import type { CatalogServices } from '../catalog/services.js';
import { lazyHandlers, type HandlerLoaders, type MetaModule } from './handlers-lazy.js';

/** The metadata handler modules, each loaded on its first request (lib/operations/handlers-lazy.ts). */
export const META_LOADERS: HandlerLoaders<MetaModule> = {
  'lib/operations/handlers-namespace.ts': () => import('./handlers-namespace.js').then((m) => m.namespaceHandlers),
  'lib/operations/handlers-table.ts': () => import('./handlers-table.js').then((m) => m.tableHandlers),
  'lib/operations/handlers-version.ts': () => import('./handlers-version.js').then((m) => m.versionHandlers),
  'lib/operations/handlers-transaction.ts': () => import('./handlers-transaction.js').then((m) => m.transactionHandlers),
  'lib/operations/handlers-maintenance.ts': () => import('./handlers-maintenance.js').then((m) => m.maintenanceHandlers),
  'lib/operations/handlers-control.ts': () => import('./handlers-control.js').then((m) => m.controlHandlers),
  'lib/operations/handlers-lifecycle.ts': () => import('./handlers-lifecycle.js').then((m) => m.lifecycleHandlers),
};

/** What `metaHandlers` (handlers-meta.ts) holds, each module loaded on its first request: the metadata functions' map. */
export const lazyMetaHandlers = (): HandlerMap<CatalogServices> => lazyHandlers(META_LOADERS);
