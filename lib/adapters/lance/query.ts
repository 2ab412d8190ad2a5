/**
 * QueryTableRequest → LanceDB query builder (node-sdk-capabilities.md §A.2).
 *
 * Result bound: the spec makes `k` required and gives it no default. When a client omits it
 * anyway we use DEFAULT_QUERY_LIMIT (10, LanceDB's own top-k default) rather than scanning the
 * whole table; every result is therefore bounded by what the caller asked for or by that
 * documented default. LanceDB's remote client asks for "everything" with k = isize::MAX; a k at
 * or above MAX_QUERY_LIMIT means "no limit" for a plain scan and MAX_QUERY_LIMIT for a search.
 */
import type { ColumnOrdering, FullTextQuery, Occur, Query, VectorQuery } from '@lancedb/lancedb';
import { CatalogError, InvalidInputError, TableColumnNotFoundError } from '../../errors.js';
import { type ArrowRecordBatch, type ArrowTable, emptyTable, loadArrow } from '../../data/arrow.js';
import type { LanceDb, Table } from './lancedb.js';
import { splitFieldPath } from '../../data/names.js';
import {
  asObject,
  type Json,
  numberArray,
  optBool,
  optEnum,
  optInt,
  optNumber,
  optString,
  optStringArray,
  reqString,
} from '../../data/validate.js';
import { optSql, reqSql } from '../../data/sql-bounds.js';

export const DEFAULT_QUERY_LIMIT = 10;
/** napi reads limits as u32 and wraps larger values (2^32 returns 0 rows), so stay below. */
export const MAX_QUERY_LIMIT = 2 ** 31 - 1;
/**
 * Searches for more rows than this (k + offset) are clamped to the table's row count first;
 * smaller ones are not worth the extra call into LanceDB (a round trip to its threads, though no
 * storage request: the handle holds the manifest): their top-k buffer is small, and LanceDB
 * answers a k above the row count, or an offset past it, with the rows there are.
 */
export const CLAMP_SEARCHES_ABOVE = 100_000;

const DISTANCE_TYPES = ['l2', 'cosine', 'dot', 'hamming'] as const;

export interface BuiltQuery {
  readonly query: Query | VectorQuery;
  /** k = 0: nothing to run (LanceDB rejects k = 0 for searches), only the schema matters. */
  readonly zeroRows: boolean;
  /**
   * A search whose column was not checked before it was built (`checkColumnLater`): run when the
   * query fails, it replaces LanceDB's error with ours if the column is missing or holds no
   * vectors, and does nothing otherwise.
   */
  readonly checkColumn?: () => Promise<void>;
  /** Columns the query needed but the caller did not ask for, dropped from the answer. */
  readonly hidden?: readonly string[];
}

export interface BuildOptions {
  /**
   * Check a search's vector column only if running the query fails (runQuery), not before: a
   * search that runs pays no schema read. Only for queries that are run: planning one on a bad
   * column (explain, analyze) made LanceDB panic.
   */
  readonly checkColumnLater?: boolean;
}

export async function buildQuery(table: Table, lib: LanceDb, request: unknown, options: BuildOptions = {}): Promise<BuiltQuery> {
  const body = asObject(request);
  const k = readK(body.k);
  const vectors = readVectors(body.vector);
  let offset = optInt(body.offset, 'offset', { max: MAX_QUERY_LIMIT }) ?? 0;
  let limit = Math.min(k, MAX_QUERY_LIMIT);
  // A large search is clamped to the row count (below): read it alongside the column check.
  const large = (vectors.length > 0 || body.full_text_query != null) && limit + offset > CLAMP_SEARCHES_ABOVE;
  const rowCount = large ? table.countRows() : undefined;
  rowCount?.catch(() => undefined); // awaited below; a check that throws first must not leave it unhandled
  const vectorColumn = optString(body.vector_column, 'vector_column');
  const checkColumn = vectors.length > 0 ? () => checkVectorColumn(table, vectorColumn) : undefined;
  if (checkColumn && !options.checkColumnLater) await checkColumn();
  const fts = await readFullText(body.full_text_query, table, lib);

  const plain = table.query();
  let query: Query | VectorQuery = plain;
  if (vectors.length > 0) {
    let vq = plain.nearestTo(vectors[0]);
    for (const v of vectors.slice(1)) vq = vq.addQueryVector(v);
    applyVectorOptions(vq, body);
    query = vq;
  }
  // Vector-only knobs (nprobes, ef, …) are ignored without a vector: clients such as LanceDB's
  // Python one send their defaults on every query.

  const filter = optSql(body.filter, 'filter');
  if (filter) query.where(filter);
  if (fts) query.fullTextSearch(fts.query, fts.columns ? { columns: fts.columns } : undefined);
  const select = readColumns(body.columns);
  if (select) query.select(select);
  const ordering = await readOrderBy(body.order_by, table);
  if (ordering.length > 0) {
    // LanceDB 0.31 silently leaves a hybrid result unsorted; the spec asks us to refuse it.
    if (vectors.length > 0 && fts) throw new InvalidInputError('"order_by" is not supported for a hybrid (vector + full-text) query');
    query.orderBy(ordering);
  }
  const withRowId = optBool(body.with_row_id, 'with_row_id');
  // A sort under a projection fails to plan in LanceDB 0.31 ("TakeExec requires … '_rowid'")
  // unless the row id is read too; it is then dropped again if the caller did not ask for it.
  const rowIdForSort = ordering.length > 0 && select !== undefined && !withRowId;
  if (withRowId || rowIdForSort) query.withRowId();
  if (optBool(body.fast_search, 'fast_search')) query.fastSearch();

  const isSearch = vectors.length > 0 || fts !== undefined;
  const later = options.checkColumnLater ? checkColumn : undefined;
  const hidden = rowIdForSort ? ['_rowid'] : undefined;
  if (isSearch && rowCount) {
    // A search keeps its top k + offset rows in memory, allocated up front: k = 2^31 aborted the
    // process (out of memory, no error). It can never return more rows than the table has, so
    // both are clamped to the row count (a metadata read) without changing the answer.
    const rows = await rowCount;
    limit = Math.min(limit, rows);
    offset = Math.min(offset, rows);
    if (limit === 0) return { query, zeroRows: true, checkColumn: later, hidden };
  }
  if (offset) query.offset(offset);
  if (k > 0 && (isSearch || k < MAX_QUERY_LIMIT)) query.limit(limit);
  return { query, zeroRows: k === 0, checkColumn: later, hidden };
}

/**
 * Runs the query, collecting batches until the result would exceed `maxBytes` (Arrow buffer
 * bytes). A result that does not fit is refused, never truncated, and stops being read as soon
 * as it crosses the limit, so memory stays bounded by the limit whatever `k` the caller sent.
 */
export async function runQuery(built: BuiltQuery, maxBytes = Number.POSITIVE_INFINITY): Promise<ArrowTable> {
  try {
    return await collect(built, maxBytes);
  } catch (err) {
    // A search whose column was not checked first: if the column is what LanceDB refused, say so
    // in our words (LanceDB's message dumps the schema); a check that cannot run changes nothing.
    await built.checkColumn?.().catch((refusal: unknown) => {
      if (refusal instanceof CatalogError) throw refusal;
    });
    throw err;
  }
}

async function collect(built: BuiltQuery, maxBytes: number): Promise<ArrowTable> {
  return withoutHidden(await collectAll(built, maxBytes), built.hidden);
}

async function collectAll(built: BuiltQuery, maxBytes: number): Promise<ArrowTable> {
  if (built.zeroRows) return emptyTable(await built.query.outputSchema());
  const batches: ArrowRecordBatch[] = [];
  let bytes = 0;
  for await (const batch of built.query) {
    bytes += batch.data.byteLength;
    if (bytes > maxBytes) throw resultTooLarge(maxBytes);
    batches.push(batch);
  }
  // An empty result comes back without a schema; clients still need the columns.
  if (batches.length === 0 || batches[0].schema.fields.length === 0) {
    return emptyTable(await built.query.outputSchema());
  }
  return new (loadArrow().Table)(batches);
}

function withoutHidden(table: ArrowTable, hidden: readonly string[] | undefined): ArrowTable {
  if (!hidden?.length) return table;
  return table.select(table.schema.fields.map((f) => f.name).filter((name) => !hidden.includes(name)));
}

export function resultTooLarge(maxBytes: number): CatalogError {
  return new InvalidInputError(
    `the query result exceeds the ${maxBytes}-byte limit for one response; ask for fewer rows with a smaller "k" ` +
      `(page through with "offset"), or fewer "columns" (large vector columns dominate)`,
  );
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
    return Array.isArray(value[0])
      ? value.map((v, i) => numberArray(v, `vector[${i}]`))
      : [numberArray(value, 'vector')];
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

/**
 * The column a vector search runs on must exist and hold vectors. LanceDB panics ("called
 * `Option::unwrap()` on a `None` value", a 500) when the named column is missing or when the
 * table has no vector column for it to pick.
 */
async function checkVectorColumn(table: Table, column: string | undefined): Promise<void> {
  const { Type } = loadArrow();
  const isVector = (t: { typeId: number }) => t.typeId === Type.FixedSizeList || t.typeId === Type.List;
  const fields = (await table.schema()).fields;
  if (column) {
    if (column.includes('.') || column.includes('`')) return; // a nested path: LanceDB resolves it
    const field = fields.find((f) => f.name === column);
    if (!field) throw new TableColumnNotFoundError(`column "${column}" does not exist`);
    if (!isVector(field.type)) throw new InvalidInputError(`"vector_column": column "${column}" holds ${field.type}, not vectors`);
  } else if (!fields.some((f) => isVector(f.type))) {
    throw new InvalidInputError('a vector search needs a vector column; the table has none');
  }
}

/**
 * `order_by` (spec main after 0.11.1, QueryTableOrderBy): absent or [] keeps the query's own
 * order, null is refused. Each column is resolved against the schema first: LanceDB answers a
 * missing one with a generic planning error and sorts list and struct columns without complaint.
 */
async function readOrderBy(value: unknown, table: Table): Promise<ColumnOrdering[]> {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidInputError('"order_by" must be a list of {column_name, ascending, nulls_first}; null is not allowed');
  if (value.length === 0) return [];
  const { Type } = loadArrow();
  const unsortable = new Set<number>([Type.List, Type.FixedSizeList, Type.Struct, Type.Map, Type.Union]);
  const fields = (await table.schema()).fields;
  return value.map((entry, i) => {
    const at = `order_by[${i}]`;
    const o = asObject(entry, at);
    const columnName = reqString(o.column_name, `${at}.column_name`);
    let level = fields;
    let type: { typeId: number; children?: typeof fields } | undefined;
    for (const segment of splitFieldPath(columnName)) {
      const field = level.find((f) => f.name === segment);
      if (!field) throw new TableColumnNotFoundError(`${at}.column_name: column "${columnName}" does not exist`);
      type = field.type;
      level = field.type.typeId === Type.Struct ? field.type.children : [];
    }
    if (type && unsortable.has(type.typeId)) {
      throw new InvalidInputError(`${at}.column_name: column "${columnName}" holds ${type}, which cannot be sorted`);
    }
    return {
      columnName,
      ascending: optBool(o.ascending, `${at}.ascending`) ?? true,
      nullsFirst: optBool(o.nulls_first, `${at}.nulls_first`) ?? false,
    };
  });
}

function applyVectorOptions(vq: VectorQuery, body: Json): void {
  const column = optString(body.vector_column, 'vector_column');
  if (column) vq.column(column);
  const distance = optEnum(body.distance_type, 'distance_type', DISTANCE_TYPES);
  // The typings omit "hamming", which the native query accepts (for binary vectors).
  if (distance) vq.distanceType(distance as 'l2');
  const nprobes = optInt(body.nprobes, 'nprobes', { min: 0, max: MAX_QUERY_LIMIT });
  if (nprobes) vq.nprobes(nprobes);
  const refine = optInt(body.refine_factor, 'refine_factor', { min: 0, max: MAX_QUERY_LIMIT });
  if (refine) vq.refineFactor(refine);
  const ef = optInt(body.ef, 'ef', { min: 0, max: MAX_QUERY_LIMIT });
  if (ef) vq.ef(ef);
  const lower = optNumber(body.lower_bound, 'lower_bound');
  const upper = optNumber(body.upper_bound, 'upper_bound');
  if (lower !== undefined || upper !== undefined) vq.distanceRange(lower, upper);
  if (optBool(body.bypass_vector_index, 'bypass_vector_index')) vq.bypassVectorIndex();
  if (optBool(body.prefilter, 'prefilter') === false) vq.postfilter();
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

interface FullText {
  readonly query: string | FullTextQuery;
  readonly columns?: string[];
}

async function readFullText(value: unknown, table: Table, lib: LanceDb): Promise<FullText | undefined> {
  if (value === undefined || value === null) return undefined;
  const fts = asObject(value, 'full_text_query');
  if (fts.string_query != null && fts.structured_query != null) {
    throw new InvalidInputError('provide either full_text_query.string_query or structured_query, not both');
  }
  if (fts.string_query != null) {
    const sq = asObject(fts.string_query, 'full_text_query.string_query');
    const columns = optStringArray(sq.columns, 'full_text_query.string_query.columns');
    return { query: reqString(sq.query, 'full_text_query.string_query.query'), columns: columns?.length ? columns : undefined };
  }
  if (fts.structured_query != null) {
    const st = asObject(fts.structured_query, 'full_text_query.structured_query');
    const builder = new FtsBuilder(table, lib);
    return { query: await builder.build(st.query, 'full_text_query.structured_query.query') };
  }
  return undefined;
}

class FtsBuilder {
  private indexed?: Promise<string[]>;

  constructor(
    private readonly table: Table,
    private readonly lib: LanceDb,
  ) {}

  async build(value: unknown, field: string): Promise<FullTextQuery> {
    const node = asObject(value, field);
    const kinds = (['match', 'phrase', 'boost', 'multi_match', 'boolean'] as const).filter((k) => node[k] != null);
    if (kinds.length !== 1) {
      throw new InvalidInputError(`"${field}" must set exactly one of match, phrase, boost, multi_match, boolean`);
    }
    const kind = kinds[0];
    const inner = asObject(node[kind], `${field}.${kind}`);
    const at = `${field}.${kind}`;
    switch (kind) {
      case 'match':
        return this.match(inner, at);
      case 'phrase': {
        const terms = reqString(inner.terms, `${at}.terms`);
        const slop = optInt(inner.slop, `${at}.slop`, { max: 2 ** 31 - 1 });
        return this.perColumn(optString(inner.column, `${at}.column`), (col) =>
          new this.lib.PhraseQuery(terms, col, slop === undefined ? undefined : { slop }),
        );
      }
      case 'boost': {
        const negativeBoost = optNumber(inner.negative_boost, `${at}.negative_boost`);
        return new this.lib.BoostQuery(
          await this.build(inner.positive, `${at}.positive`),
          await this.build(inner.negative, `${at}.negative`),
          negativeBoost === undefined ? undefined : { negativeBoost },
        );
      }
      case 'multi_match':
        return this.multiMatch(inner, at);
      case 'boolean':
        return this.boolean(inner, at);
    }
  }

  private async match(m: Json, at: string): Promise<FullTextQuery> {
    const terms = reqString(m.terms, `${at}.terms`);
    const options = {
      boost: optNumber(m.boost, `${at}.boost`),
      fuzziness: optInt(m.fuzziness, `${at}.fuzziness`, { max: 2 ** 31 - 1 }),
      maxExpansions: optInt(m.max_expansions, `${at}.max_expansions`, { max: 2 ** 31 - 1 }),
      prefixLength: optInt(m.prefix_length, `${at}.prefix_length`, { max: 2 ** 31 - 1 }),
      operator: this.operator(m.operator, `${at}.operator`),
    };
    const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    return this.perColumn(optString(m.column, `${at}.column`), (col) => new this.lib.MatchQuery(terms, col, defined));
  }

  private async multiMatch(m: Json, at: string): Promise<FullTextQuery> {
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
      const operator = this.operator(parsed[0].operator, `${at}.match_queries[0].operator`);
      return new this.lib.MultiMatchQuery(terms, parsed.map((p) => p.column as string), {
        boosts,
        ...(operator ? { operator } : {}),
      });
    }
    const should = await Promise.all(parsed.map((p, i) => this.match(p, `${at}.match_queries[${i}]`)));
    return new this.lib.BooleanQuery(should.map((q) => [this.lib.Occur.Should, q]));
  }

  private async boolean(b: Json, at: string): Promise<FullTextQuery> {
    const clauses: [Occur, FullTextQuery][] = [];
    const groups = [
      ['must', this.lib.Occur.Must],
      ['should', this.lib.Occur.Should],
      ['must_not', this.lib.Occur.MustNot],
    ] as const;
    for (const [key, occur] of groups) {
      const list = b[key];
      if (list == null) continue;
      if (!Array.isArray(list)) throw new InvalidInputError(`"${at}.${key}" must be an array`);
      for (const [i, q] of list.entries()) clauses.push([occur, await this.build(q, `${at}.${key}[${i}]`)]);
    }
    if (clauses.length === 0) throw new InvalidInputError(`"${at}" has no clauses`);
    return new this.lib.BooleanQuery(clauses);
  }

  private operator(value: unknown, field: string) {
    const op = optEnum(value, field, ['and', 'or'] as const);
    if (op === undefined) return undefined;
    return op === 'and' ? this.lib.Operator.And : this.lib.Operator.Or;
  }

  /**
   * The spec lets match/phrase omit the column ("the query default fields"); LanceDB's
   * constructors require one, so search every column that has an FTS index.
   */
  private async perColumn(column: string | undefined, make: (col: string) => FullTextQuery): Promise<FullTextQuery> {
    if (column) return make(column);
    this.indexed ??= this.table
      .listIndices()
      .then((list) => [...new Set(list.filter((i) => /^(fts|inverted)$/i.test(i.indexType)).flatMap((i) => i.columns))]);
    const columns = await this.indexed;
    if (columns.length === 0) {
      throw new InvalidInputError('full-text search needs an FTS index; the table has none');
    }
    if (columns.length === 1) return make(columns[0]);
    return new this.lib.BooleanQuery(columns.map((c) => [this.lib.Occur.Should, make(c)]));
  }
}
