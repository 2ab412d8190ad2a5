import type { CatalogServices } from '../catalog/services.js';
import type { HandlerMap } from './types.js';

/**
 * Handlers of the data bundle (Arrow IPC, queries, indices, schema). They reach LanceDB through
 * lib/data, which loads it lazily; this bundle ships with the LanceDB Lambda layer.
 */
export const dataHandlers: HandlerMap<CatalogServices> = {};
