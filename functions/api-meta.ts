import { lazyMetaHandlers } from '../lib/operations/handlers-meta-lazy.js';
import { metaApi } from './meta-api.js';

/**
 * Metadata operations (namespaces, table records, versions): small bundle, no LanceDB. Each
 * handler module is loaded on its first request (lib/operations/handlers-lazy.ts, issue #37).
 */
export const { observability, handler } = metaApi('meta', lazyMetaHandlers());
