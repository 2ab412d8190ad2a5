import type { CatalogServices } from '../catalog/services.js';
import { maintenanceHandlers } from './handlers-maintenance.js';
import { controlHandlers } from './handlers-control.js';
import { lifecycleHandlers } from './handlers-lifecycle.js';
import { namespaceHandlers } from './handlers-namespace.js';
import { tableHandlers } from './handlers-table.js';
import { transactionHandlers } from './handlers-transaction.js';
import { versionHandlers } from './handlers-version.js';
import type { HandlerMap } from '../contract/request.js';

/**
 * Handlers of the metadata bundle. Nothing reachable from here may import @lancedb/lancedb
 * (test/unit/module-graph.test.ts checks it): these functions cold-start in milliseconds.
 */
export const metaHandlers: HandlerMap<CatalogServices> = {
  ...namespaceHandlers,
  ...tableHandlers,
  ...versionHandlers,
  ...transactionHandlers,
  ...maintenanceHandlers,
  ...controlHandlers,
  ...lifecycleHandlers,
};
