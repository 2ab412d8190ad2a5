import { metaHandlers } from '../lib/operations/handlers-meta.js';
import { metaApi } from './meta-api.js';

/** Metadata operations (namespaces, table records, versions): small bundle, no LanceDB. */
export const { observability, handler } = metaApi('meta', metaHandlers);
