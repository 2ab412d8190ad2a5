/**
 * The data engine's typed inputs (issue 25 item 2, "one shape per operation"): what the
 * data-plane handlers decode a request into (lib/operations/data/*) before they call the engine.
 * Every field here has been checked for type and range; what needs the table (a column exists, a
 * vector column holds vectors, a filter plans) is the engine's to check.
 */
import type { ArrowDataType, ArrowField } from '../data/arrow.js';
import type { IndexRequest } from '../data/index-request.js';

export type { IndexRequest };
export type { FtsParams, IndexKind, VectorParams } from '../data/index-request.js';

/** Which snapshot a read sees. Absent fields mean the latest version of the main branch. */
export interface ReadSelection {
  readonly version?: number;
  /** A branch other than main (main is absent). */
  readonly branch?: string;
  readonly tag?: string;
}

/** Which branch a write goes to; absent is main. */
export interface WriteTarget {
  readonly branch?: string;
}

/** A listing's page: start after `pageToken`, at most `limit` items (absent: all). */
export interface Paging {
  readonly pageToken?: string;
  readonly limit?: number;
}

// ---- writes ----

export interface MergeInsertInput extends WriteTarget {
  readonly on: readonly string[];
  /** Set when `when_matched_update_all` or its filter is given (a filter implies its clause). */
  readonly whenMatchedUpdateAll: boolean;
  readonly whenMatchedUpdateAllFilt?: string;
  readonly whenNotMatchedInsertAll: boolean;
  readonly whenNotMatchedBySourceDelete: boolean;
  readonly whenNotMatchedBySourceDeleteFilt?: string;
  readonly useIndex?: boolean;
  readonly timeoutMs?: number;
}

export interface UpdateInput extends WriteTarget {
  /** Column → SQL expression, in the request's order, each column once. */
  readonly updates: ReadonlyMap<string, string>;
  readonly predicate?: string;
}

export interface DeleteInput extends WriteTarget {
  readonly predicate: string;
}

export interface RestoreInput extends WriteTarget {
  readonly version: number;
}

// ---- reads ----

export interface CountInput extends ReadSelection {
  readonly predicate?: string;
}

export interface VersionListing extends WriteTarget {
  readonly descending: boolean;
  readonly limit?: number;
  /** Versions after this one (before it when descending). */
  readonly after?: number;
}

export type DistanceType = 'l2' | 'cosine' | 'dot' | 'hamming';

/** The knobs of a vector search (read only when the query has a vector). */
export interface VectorSearch {
  readonly vectors: readonly (readonly number[])[];
  readonly column?: string;
  readonly distanceType?: DistanceType;
  readonly nprobes?: number;
  readonly refineFactor?: number;
  readonly ef?: number;
  readonly lowerBound?: number;
  readonly upperBound?: number;
  readonly bypassVectorIndex?: boolean;
  /** `false`: filter after the search. */
  readonly prefilter?: boolean;
}

export type FtsOperator = 'and' | 'or';
export type FtsOccur = 'must' | 'should' | 'must_not';

/** A structured full-text query (the spec's FtsQuery); a column left out means every FTS-indexed one. */
export type FtsNode =
  | {
      readonly kind: 'match';
      readonly terms: string;
      readonly column?: string;
      readonly boost?: number;
      readonly fuzziness?: number;
      readonly maxExpansions?: number;
      readonly prefixLength?: number;
      readonly operator?: FtsOperator;
    }
  | { readonly kind: 'phrase'; readonly terms: string; readonly column?: string; readonly slop?: number }
  | { readonly kind: 'boost'; readonly positive: FtsNode; readonly negative: FtsNode; readonly negativeBoost?: number }
  /** One text over several columns with per-column boosts (LanceDB's MultiMatchQuery). */
  | { readonly kind: 'multi_match'; readonly terms: string; readonly columns: readonly string[]; readonly boosts: readonly number[]; readonly operator?: FtsOperator }
  | { readonly kind: 'boolean'; readonly clauses: readonly (readonly [FtsOccur, FtsNode])[] };

export type FullTextSearch =
  | { readonly kind: 'string'; readonly query: string; readonly columns?: readonly string[] }
  | { readonly kind: 'structured'; readonly query: FtsNode };

export interface OrderBy {
  readonly columnName: string;
  readonly ascending: boolean;
  readonly nullsFirst: boolean;
}

/** QueryTableRequest, decoded (also the query of Explain/AnalyzeTableQueryPlan). */
export interface QueryInput extends ReadSelection {
  /** Rows wanted; may be above MAX_QUERY_LIMIT (LanceDB's clients send isize::MAX for "all"). */
  readonly k: number;
  readonly offset: number;
  readonly vector?: VectorSearch;
  readonly fullText?: FullTextSearch;
  /** Whether `full_text_query` was given at all (even one that asks for nothing). */
  readonly fullTextGiven: boolean;
  readonly filter?: string;
  readonly columns?: readonly string[] | Readonly<Record<string, string>>;
  readonly orderBy: readonly OrderBy[];
  readonly withRowId?: boolean;
  readonly fastSearch?: boolean;
}

export interface ExplainInput {
  readonly query: QueryInput;
  readonly verbose: boolean;
}

// ---- indexes ----

export interface IndexListing extends ReadSelection, Paging {}

export interface NamedIndex {
  readonly indexName: string;
}

// ---- tags and branches ----

export interface TagInput {
  readonly tag: string;
}

export interface TagVersionInput extends TagInput {
  readonly version: number;
  /** The branch the tag's handle is on; absent or main is main. */
  readonly branch?: string;
}

export interface BranchInput {
  readonly name: string;
}

export interface NewBranchInput extends BranchInput {
  readonly fromBranch?: string;
  readonly fromVersion?: number;
}

// ---- schema ----

/** One new column: a SQL expression evaluated now, a computed (maintained) one, or a typed all-null one. */
export type NewColumn =
  | { readonly kind: 'expression'; readonly name: string; readonly expression: string }
  | { readonly kind: 'computed'; readonly name: string; readonly expression: string }
  | { readonly kind: 'typed'; readonly name: string; readonly field: ArrowField };

export interface AddColumnsInput extends WriteTarget {
  readonly columns: readonly NewColumn[];
}

export interface ColumnChange {
  readonly path: string;
  readonly rename?: string;
  readonly nullable?: boolean;
  readonly dataType?: ArrowDataType;
}

export interface AlterColumnsInput extends WriteTarget {
  readonly alterations: readonly ColumnChange[];
}

export interface DropColumnsInput extends WriteTarget {
  readonly columns: readonly string[];
}

export interface FieldMetadataChange {
  readonly path: string;
  /** `null` deletes the key. */
  readonly metadata: Readonly<Record<string, string | null>>;
  readonly replace?: boolean;
}

export interface FieldMetadataInput extends WriteTarget {
  readonly updates: readonly FieldMetadataChange[];
}
