import { DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS } from '../../config.js';
import type { CatalogServices, DataLimits } from '../services.js';

/** The bounds on synchronous data-plane work; a composition that set none gets lib/config.ts's defaults. */
export function dataLimitsOf(services: CatalogServices): DataLimits {
  return (
    services.dataLimits ?? {
      maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
      maxSyncVectorIndexRows: DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS,
    }
  );
}
