/**
 * A query's row bounds (lib/adapters/lance/query.ts explains the choice): what QueryTable's
 * decoder (lib/operations/data/query-input.ts) and the LanceDB translation both read.
 */
export const DEFAULT_QUERY_LIMIT = 10;
/** napi reads limits as u32 and wraps larger values (2^32 returns 0 rows), so stay below. */
export const MAX_QUERY_LIMIT = 2 ** 31 - 1;
