/**
 * QueryTableRequest → QueryInput (lib/ports/data-inputs.ts): every field of a query decoded and
 * checked before the engine sees it, in the order the engine once read them, with its messages
 * (issue 25 item 2). What needs the table — the vector column, `order_by`'s columns, which
 * columns carry an FTS index — is left to the translation (lib/adapters/lance/query.ts).
 *
 * Vector-only knobs (nprobes, ef, …) are read only with a vector: clients such as LanceDB's
 * Python one send their defaults on every query, so without a vector they are ignored unread.
 */
import { optSql, reqSql } from '../../data/sql-bounds.js';
import { DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT } from '../../data/query-limits.js';
import { asObject, type Json, numberArray, optBool, optEnum, optInt, optNumber, optString, optStringArray, reqString } from '../../data/validate.js';
import { InvalidInputError } from '../../errors.js';
import type {
  ExplainInput,
  FtsNode,
  FtsOccur,
  FtsOperator,
  FullTextSearch,
  OrderBy,
  QueryInput,
  VectorSearch,
} from '../../ports/data-inputs.js';
import { defined, readSelection } from './inputs.js';

const DISTANCE_TYPES = ['l2', 'cosine', 'dot', 'hamming'] as const;

/** QueryTable and AnalyzeTableQueryPlan: the body is the query. */
export function queryInput(body: Json): QueryInput {
  return { ...readSelection(body), ...queryFields(body) };
}

/** ExplainTableQueryPlan: `{query, verbose}`; the query's branch may also be given beside it. */
export function explainInput(body: Json): ExplainInput {
  const query = asObject(body.query, 'query');
  const verbose = optBool(body.verbose, 'verbose') ?? false;
  const selection = readSelection({ ...query, branch: query.branch ?? body.branch });
  return { query: { ...selection, ...queryFields(query) }, verbose };
}

function queryFields(body: Json): Omit<QueryInput, 'version' | 'branch' | 'tag'> {
  const k = readK(body.k);
  const vectors = readVectors(body.vector);
  const offset = optInt(body.offset, 'offset', { max: MAX_QUERY_LIMIT }) ?? 0;
  const vectorColumn = optString(body.vector_column, 'vector_column');
  const fullText = readFullText(body.full_text_query);
  const vector = vectors.length > 0 ? vectorSearch(vectors, vectorColumn, body) : undefined;
  return defined({
    k,
    offset,
    vector,
    fullText,
    fullTextGiven: body.full_text_query != null,
    filter: optSql(body.filter, 'filter'),
    columns: readColumns(body.columns),
    orderBy: readOrderBy(body.order_by),
    withRowId: optBool(body.with_row_id, 'with_row_id'),
    fastSearch: optBool(body.fast_search, 'fast_search'),
  });
}

function readK(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_QUERY_LIMIT;
  // Not optInt: isize::MAX arrives as 9223372036854775808, which is an integer but not "safe".
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidInputError('"k" must be a non-negative integer');
  }
  return value;
}

function readVectors(value: unknown): number[][] {
  if (value === undefined || value === null) return [];
  // Older clients send the vector bare; an empty one means "no vector search".
  if (Array.isArray(value)) {
    if (value.length === 0) return [];
    return Array.isArray(value[0]) ? value.map((v, i) => numberArray(v, `vector[${i}]`)) : [numberArray(value, 'vector')];
  }
  const v = asObject(value, 'vector');
  const single = v.single_vector == null ? [] : numberArray(v.single_vector, 'vector.single_vector');
  const multi = v.multi_vector == null ? [] : (v.multi_vector as unknown[]);
  if (!Array.isArray(multi)) throw new InvalidInputError('"vector.multi_vector" must be an array of vectors');
  if (single.length > 0 && multi.length > 0) {
    throw new InvalidInputError('provide either vector.single_vector or vector.multi_vector, not both');
  }
  if (single.length > 0) return [single];
  const vectors = multi.map((m, i) => numberArray(m, `vector.multi_vector[${i}]`));
  // An empty or ragged multi-vector panicked inside LanceDB (500).
  if (vectors.some((v) => v.length === 0 || v.length !== vectors[0].length)) {
    throw new InvalidInputError('"vector.multi_vector" must hold non-empty vectors of one dimension');
  }
  return vectors;
}

function vectorSearch(vectors: number[][], column: string | undefined, body: Json): VectorSearch {
  return defined({
    vectors,
    column: column || undefined,
    distanceType: optEnum(body.distance_type, 'distance_type', DISTANCE_TYPES),
    nprobes: optInt(body.nprobes, 'nprobes', { min: 0, max: MAX_QUERY_LIMIT }),
    refineFactor: optInt(body.refine_factor, 'refine_factor', { min: 0, max: MAX_QUERY_LIMIT }),
    ef: optInt(body.ef, 'ef', { min: 0, max: MAX_QUERY_LIMIT }),
    lowerBound: optNumber(body.lower_bound, 'lower_bound'),
    upperBound: optNumber(body.upper_bound, 'upper_bound'),
    bypassVectorIndex: optBool(body.bypass_vector_index, 'bypass_vector_index'),
    prefilter: optBool(body.prefilter, 'prefilter'),
  });
}

/**
 * `order_by` (spec main after 0.11.1, QueryTableOrderBy): absent or [] keeps the query's own
 * order, null is refused.
 */
function readOrderBy(value: unknown): OrderBy[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidInputError('"order_by" must be a list of {column_name, ascending, nulls_first}; null is not allowed');
  return value.map((entry, i) => {
    const at = `order_by[${i}]`;
    const o = asObject(entry, at);
    return {
      columnName: reqString(o.column_name, `${at}.column_name`),
      ascending: optBool(o.ascending, `${at}.ascending`) ?? true,
      nullsFirst: optBool(o.nulls_first, `${at}.nulls_first`) ?? false,
    };
  });
}

function readColumns(value: unknown): string[] | Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return optStringArray(value, 'columns')?.length ? (value as string[]) : undefined;
  const c = asObject(value, 'columns');
  const names = optStringArray(c.column_names, 'columns.column_names');
  const aliases = c.column_aliases == null ? undefined : asObject(c.column_aliases, 'columns.column_aliases');
  if (names?.length && aliases && Object.keys(aliases).length) {
    throw new InvalidInputError('provide either columns.column_names or columns.column_aliases, not both');
  }
  if (aliases && Object.keys(aliases).length) {
    // Alias values are SQL expressions (LanceDB plans them like a filter).
    for (const [alias, path] of Object.entries(aliases)) reqSql(path, `columns.column_aliases.${alias}`);
    return aliases as Record<string, string>;
  }
  // An empty list is read as "no projection" rather than "no columns".
  return names?.length ? names : undefined;
}

// ---- full-text search ----

function readFullText(value: unknown): FullTextSearch | undefined {
  if (value === undefined || value === null) return undefined;
  const fts = asObject(value, 'full_text_query');
  if (fts.string_query != null && fts.structured_query != null) {
    throw new InvalidInputError('provide either full_text_query.string_query or structured_query, not both');
  }
  if (fts.string_query != null) {
    const sq = asObject(fts.string_query, 'full_text_query.string_query');
    const columns = optStringArray(sq.columns, 'full_text_query.string_query.columns');
    return defined({ kind: 'string' as const, query: reqString(sq.query, 'full_text_query.string_query.query'), columns: columns?.length ? columns : undefined });
  }
  if (fts.structured_query != null) {
    const st = asObject(fts.structured_query, 'full_text_query.structured_query');
    return { kind: 'structured', query: ftsNode(st.query, 'full_text_query.structured_query.query') };
  }
  return undefined;
}

const FTS_KINDS = ['match', 'phrase', 'boost', 'multi_match', 'boolean'] as const;

function ftsNode(value: unknown, field: string): FtsNode {
  const node = asObject(value, field);
  const kinds = FTS_KINDS.filter((k) => node[k] != null);
  if (kinds.length !== 1) {
    throw new InvalidInputError(`"${field}" must set exactly one of match, phrase, boost, multi_match, boolean`);
  }
  const kind = kinds[0];
  const inner = asObject(node[kind], `${field}.${kind}`);
  const at = `${field}.${kind}`;
  switch (kind) {
    case 'match':
      return match(inner, at);
    case 'phrase': {
      const terms = reqString(inner.terms, `${at}.terms`);
      const slop = optInt(inner.slop, `${at}.slop`, { max: 2 ** 31 - 1 });
      return defined({ kind: 'phrase' as const, terms, slop, column: optString(inner.column, `${at}.column`) || undefined });
    }
    case 'boost': {
      const negativeBoost = optNumber(inner.negative_boost, `${at}.negative_boost`);
      const positive = ftsNode(inner.positive, `${at}.positive`);
      const negative = ftsNode(inner.negative, `${at}.negative`);
      return defined({ kind: 'boost' as const, positive, negative, negativeBoost });
    }
    case 'multi_match':
      return multiMatch(inner, at);
    case 'boolean':
      return boolean(inner, at);
  }
}

function match(m: Json, at: string): FtsNode {
  return defined({
    kind: 'match' as const,
    terms: reqString(m.terms, `${at}.terms`),
    boost: optNumber(m.boost, `${at}.boost`),
    fuzziness: optInt(m.fuzziness, `${at}.fuzziness`, { max: 2 ** 31 - 1 }),
    maxExpansions: optInt(m.max_expansions, `${at}.max_expansions`, { max: 2 ** 31 - 1 }),
    prefixLength: optInt(m.prefix_length, `${at}.prefix_length`, { max: 2 ** 31 - 1 }),
    operator: operator(m.operator, `${at}.operator`),
    column: optString(m.column, `${at}.column`) || undefined,
  });
}

function multiMatch(m: Json, at: string): FtsNode {
  const entries = m.match_queries;
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new InvalidInputError(`"${at}.match_queries" must be a non-empty array`);
  }
  const parsed = entries.map((e, i) => asObject(e, `${at}.match_queries[${i}]`));
  // LanceDB's MultiMatchQuery is one text over several columns with per-column boosts; any
  // other combination is the same as OR-ing the individual match queries.
  const simple =
    parsed.every((p) => typeof p.column === 'string' && p.terms === parsed[0].terms && p.operator === parsed[0].operator) &&
    parsed.every((p) => p.fuzziness == null && p.max_expansions == null && p.prefix_length == null);
  if (simple) {
    const terms = reqString(parsed[0].terms, `${at}.match_queries[0].terms`);
    const boosts = parsed.map((p, i) => optNumber(p.boost, `${at}.match_queries[${i}].boost`) ?? 1);
    const op = operator(parsed[0].operator, `${at}.match_queries[0].operator`);
    return defined({ kind: 'multi_match' as const, terms, columns: parsed.map((p) => p.column as string), boosts, operator: op });
  }
  const should = parsed.map((p, i) => match(p, `${at}.match_queries[${i}]`));
  return { kind: 'boolean', clauses: should.map((q) => ['should', q] as const) };
}

function boolean(b: Json, at: string): FtsNode {
  const clauses: [FtsOccur, FtsNode][] = [];
  for (const key of ['must', 'should', 'must_not'] as const) {
    const list = b[key];
    if (list == null) continue;
    if (!Array.isArray(list)) throw new InvalidInputError(`"${at}.${key}" must be an array`);
    for (const [i, q] of list.entries()) clauses.push([key, ftsNode(q, `${at}.${key}[${i}]`)]);
  }
  if (clauses.length === 0) throw new InvalidInputError(`"${at}" has no clauses`);
  return { kind: 'boolean', clauses };
}

function operator(value: unknown, field: string): FtsOperator | undefined {
  return optEnum(value, field, ['and', 'or'] as const);
}
