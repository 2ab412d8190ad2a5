/**
 * A decoded QueryTableRequest (lib/ports/data-inputs.ts, QueryInput; decoded by
 * lib/operations/data/query-input.ts) → LanceDB query builder (node-sdk-capabilities.md §A.2).
 * Pure translation, except for what needs the table: the vector column, `order_by`'s columns,
 * the FTS-indexed columns a full-text query without a column searches.
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
import { MAX_QUERY_LIMIT } from '../../data/query-limits.js';
import type { FtsNode, FtsOccur, FtsOperator, FullTextSearch, OrderBy, QueryInput, VectorSearch } from '../../ports/data-inputs.js';

export { DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT } from '../../data/query-limits.js';
/**
 * Searches for more rows than this (k + offset) are clamped to the table's row count first;
 * smaller ones are not worth the extra call into LanceDB (a round trip to its threads, though no
 * storage request: the handle holds the manifest): their top-k buffer is small, and LanceDB
 * answers a k above the row count, or an offset past it, with the rows there are.
 */
export const CLAMP_SEARCHES_ABOVE = 100_000;

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

export async function buildQuery(table: Table, lib: LanceDb, input: QueryInput, options: BuildOptions = {}): Promise<BuiltQuery> {
  const { k, vector } = input;
  let offset = input.offset;
  let limit = Math.min(k, MAX_QUERY_LIMIT);
  // A large search is clamped to the row count (below): read it alongside the column check.
  const large = (vector !== undefined || input.fullTextGiven) && limit + offset > CLAMP_SEARCHES_ABOVE;
  const rowCount = large ? table.countRows() : undefined;
  rowCount?.catch(() => undefined); // awaited below; a check that throws first must not leave it unhandled
  const checkColumn = vector ? () => checkVectorColumn(table, vector.column) : undefined;
  if (checkColumn && !options.checkColumnLater) await checkColumn();
  const fts = await fullText(input.fullText, table, lib);

  const plain = table.query();
  let query: Query | VectorQuery = plain;
  if (vector) {
    let vq = plain.nearestTo([...vector.vectors[0]]);
    for (const v of vector.vectors.slice(1)) vq = vq.addQueryVector([...v]);
    applyVectorOptions(vq, vector);
    query = vq;
  }

  if (input.filter) query.where(input.filter);
  if (fts) query.fullTextSearch(fts.query, fts.columns ? { columns: fts.columns } : undefined);
  const select = input.columns as string[] | Record<string, string> | undefined;
  if (select) query.select(select);
  const ordering = await orderingOf(input.orderBy, table);
  if (ordering.length > 0) {
    // LanceDB 0.31 silently leaves a hybrid result unsorted; the spec asks us to refuse it.
    if (vector && fts) throw new InvalidInputError('"order_by" is not supported for a hybrid (vector + full-text) query');
    query.orderBy(ordering);
  }
  const withRowId = input.withRowId;
  // A sort under a projection fails to plan in LanceDB 0.31 ("TakeExec requires … '_rowid'")
  // unless the row id is read too; it is then dropped again if the caller did not ask for it.
  const rowIdForSort = ordering.length > 0 && select !== undefined && !withRowId;
  if (withRowId || rowIdForSort) query.withRowId();
  if (input.fastSearch) query.fastSearch();

  const isSearch = vector !== undefined || fts !== undefined;
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
 * `order_by` (spec main after 0.11.1, QueryTableOrderBy; decoded by lib/operations/data): each
 * column is resolved against the schema: LanceDB answers a missing one with a generic planning
 * error and sorts list and struct columns without complaint.
 */
async function orderingOf(orderBy: readonly OrderBy[], table: Table): Promise<ColumnOrdering[]> {
  if (orderBy.length === 0) return [];
  const { Type } = loadArrow();
  const unsortable = new Set<number>([Type.List, Type.FixedSizeList, Type.Struct, Type.Map, Type.Union]);
  const fields = (await table.schema()).fields;
  return orderBy.map(({ columnName, ascending, nullsFirst }, i) => {
    const at = `order_by[${i}]`;
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
    return { columnName, ascending, nullsFirst };
  });
}

function applyVectorOptions(vq: VectorQuery, v: VectorSearch): void {
  if (v.column) vq.column(v.column);
  // The typings omit "hamming", which the native query accepts (for binary vectors).
  if (v.distanceType) vq.distanceType(v.distanceType as 'l2');
  if (v.nprobes) vq.nprobes(v.nprobes);
  if (v.refineFactor) vq.refineFactor(v.refineFactor);
  if (v.ef) vq.ef(v.ef);
  if (v.lowerBound !== undefined || v.upperBound !== undefined) vq.distanceRange(v.lowerBound, v.upperBound);
  if (v.bypassVectorIndex) vq.bypassVectorIndex();
  if (v.prefilter === false) vq.postfilter();
}

// ---- full-text search ----

interface FullText {
  readonly query: string | FullTextQuery;
  readonly columns?: string[];
}

async function fullText(search: FullTextSearch | undefined, table: Table, lib: LanceDb): Promise<FullText | undefined> {
  if (search === undefined) return undefined;
  if (search.kind === 'string') return { query: search.query, columns: search.columns?.length ? [...search.columns] : undefined };
  return { query: await new FtsBuilder(table, lib).build(search.query) };
}

/** The spec's FtsQuery tree as LanceDB's query objects. */
class FtsBuilder {
  private indexed?: Promise<string[]>;

  constructor(
    private readonly table: Table,
    private readonly lib: LanceDb,
  ) {}

  async build(node: FtsNode): Promise<FullTextQuery> {
    const { lib } = this;
    switch (node.kind) {
      case 'match': {
        const options = {
          boost: node.boost,
          fuzziness: node.fuzziness,
          maxExpansions: node.maxExpansions,
          prefixLength: node.prefixLength,
          operator: this.operator(node.operator),
        };
        const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
        return this.perColumn(node.column, (col) => new lib.MatchQuery(node.terms, col, defined));
      }
      case 'phrase':
        return this.perColumn(node.column, (col) => new lib.PhraseQuery(node.terms, col, node.slop === undefined ? undefined : { slop: node.slop }));
      case 'boost':
        return new lib.BoostQuery(
          await this.build(node.positive),
          await this.build(node.negative),
          node.negativeBoost === undefined ? undefined : { negativeBoost: node.negativeBoost },
        );
      case 'multi_match': {
        const operator = this.operator(node.operator);
        return new lib.MultiMatchQuery(node.terms, [...node.columns], { boosts: [...node.boosts], ...(operator ? { operator } : {}) });
      }
      case 'boolean': {
        const occur: Record<FtsOccur, Occur> = { must: lib.Occur.Must, should: lib.Occur.Should, must_not: lib.Occur.MustNot };
        const clauses: [Occur, FullTextQuery][] = [];
        for (const [o, q] of node.clauses) clauses.push([occur[o], await this.build(q)]);
        return new lib.BooleanQuery(clauses);
      }
    }
  }

  private operator(op: FtsOperator | undefined) {
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
