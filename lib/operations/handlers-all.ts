import type { CatalogServices } from '../catalog/services.js';
import { dataHandlers } from './handlers-data.js';
import { metaHandlers } from './handlers-meta.js';
import type { HandlerMap } from '../contract/request.js';

/** Every implemented operation, for the local server (one process serves both bundles). */
export const allHandlers: HandlerMap<CatalogServices> = {
  ...metaHandlers,
  ...dataHandlers,
};
