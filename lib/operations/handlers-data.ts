import type { CatalogServices } from '../catalog/services.js';
import { backfillHandlers } from './data/backfill.js';
import { indexHandlers } from './data/indices.js';
import { readHandlers } from './data/reads.js';
import { refHandlers } from './data/refs.js';
import { schemaHandlers } from './data/schema.js';
import { writeHandlers } from './data/writes.js';
import { namingTablesById } from './data/naming.js';
import type { HandlerMap } from '../contract/request.js';

/**
 * Handlers of the data bundle (Arrow IPC, queries, indices, schema). Each decodes its request,
 * resolves the table through the registry and calls lib/catalog/data (writes, index builds,
 * backfills) or the composition's DataEngine (CatalogServices.data) on its location. LanceDB
 * sits behind that port (lib/adapters/lance), loaded lazily; this bundle ships with the LanceDB
 * Lambda layer. Data operations without a handler here answer code 0 with the reason in
 * unsupported.ts.
 */
export const dataHandlers: HandlerMap<CatalogServices> = namingTablesById({
  ...writeHandlers,
  ...readHandlers,
  ...indexHandlers,
  ...refHandlers,
  ...schemaHandlers,
  ...backfillHandlers,
});
