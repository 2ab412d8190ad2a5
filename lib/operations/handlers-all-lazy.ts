import type { HandlerMap } from '../contract/request.js';
import type { CatalogServices } from '../catalog/services.js';
import { namingTablesById } from './data/naming.js';
import { lazyHandlers, type DataModule, type HandlerLoaders } from './handlers-lazy.js';
import { META_LOADERS } from './handlers-meta-lazy.js';

/**
 * The data handler modules, each loaded on its first request (lib/operations/handlers-lazy.ts),
 * with the data bundle's error renaming as handlers-data.ts applies it.
 */
export const DATA_LOADERS: HandlerLoaders<DataModule> = {
  'lib/operations/data/writes.ts': () => import('./data/writes.js').then((m) => namingTablesById(m.writeHandlers)),
  'lib/operations/data/reads.ts': () => import('./data/reads.js').then((m) => namingTablesById(m.readHandlers)),
  'lib/operations/data/indices.ts': () => import('./data/indices.js').then((m) => namingTablesById(m.indexHandlers)),
  'lib/operations/data/refs.ts': () => import('./data/refs.js').then((m) => namingTablesById(m.refHandlers)),
  'lib/operations/data/schema.ts': () => import('./data/schema.js').then((m) => namingTablesById(m.schemaHandlers)),
  'lib/operations/data/backfill.ts': () => import('./data/backfill.js').then((m) => namingTablesById(m.backfillHandlers)),
};

/** What `allHandlers` (handlers-all.ts) holds, each module loaded on its first request: the data function's map. */
export const lazyAllHandlers = (): HandlerMap<CatalogServices> => lazyHandlers({ ...META_LOADERS, ...DATA_LOADERS });
