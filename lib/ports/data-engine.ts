/**
 * The data engine: the spec's data operations on one Lance table, named by its storage location
 * (docs/data-plane.md). The data-plane handlers and the job runners call it through
 * `CatalogServices.data`; lib/adapters/lance/engine.ts implements it over LanceDB, and a test
 * may stand a twin in for it (test/support/counting-engine.ts).
 *
 * Requests are typed (lib/ports/data-inputs.ts): the data-plane handlers decode and validate the
 * spec's bodies in lib/operations/data and hand the engine only what they yield (issue 25 item 2,
 * "one shape per operation"); the engine checks what needs the table (a column exists, a filter
 * plans). Responses are the spec's response objects; failures are CatalogErrors.
 */
import type { JsonArrowSchema } from '../data/arrow.js';
import type {
  AddColumnsInput,
  AlterColumnsInput,
  BranchInput,
  CountInput,
  DeleteInput,
  DropColumnsInput,
  ExplainInput,
  FieldMetadataInput,
  IndexListing,
  IndexRequest,
  MergeInsertInput,
  NamedIndex,
  NewBranchInput,
  Paging,
  QueryInput,
  ReadSelection,
  RestoreInput,
  TagInput,
  TagVersionInput,
  UpdateInput,
  VersionListing,
  WriteTarget,
} from './data-inputs.js';

export type * from './data-inputs.js';

export type CreateMode = 'create' | 'exist_ok' | 'overwrite';
export type InsertMode = 'append' | 'overwrite';

export interface TableDescription {
  version: number;
  schema: JsonArrowSchema;
  /** Schema-level metadata (what UpdateTableSchemaMetadata edits). */
  metadata?: Record<string, string>;
}

export interface TableStats {
  total_bytes: number;
  num_rows: number;
  num_indices: number;
  fragment_stats: {
    num_fragments: number;
    num_small_fragments: number;
    lengths: { min: number; max: number; mean: number; p25: number; p50: number; p75: number; p99: number };
  };
}

export interface TableVersion {
  version: number;
  manifest_path: string;
  timestamp_millis: number;
  metadata: Record<string, string>;
}

export interface MergeInsertResponse {
  version: number;
  num_updated_rows: number;
  num_inserted_rows: number;
  num_deleted_rows: number;
}

export interface IndexContent {
  index_name: string;
  index_uuid: string;
  columns: string[];
  /**
   * `done`: committed and its statistics read. `unknown`: listed, but its row counts could not be
   * read, so nothing vouches that it is healthy (docs/data-plane.md). Builds still queued as
   * jobs are not listed; DescribeTransaction shows them.
   */
  status: 'done' | 'unknown';
  index_type?: string;
  type_url?: string;
  num_indexed_rows?: number;
  num_unindexed_rows?: number;
  size_bytes?: number | null;
  num_segments?: number;
  created_at?: string | null;
  index_version?: number;
  index_details?: string | null;
}

export interface IndexStats {
  index_type: string | null;
  distance_type: string | null;
  num_indexed_rows: number | null;
  num_unindexed_rows: number | null;
  num_indices: number | null;
}

export interface TagContents {
  version: number;
  manifestSize: number;
  branch?: string;
}

export interface BranchContents {
  parentBranch?: string;
  parentVersion: number;
  /** Unix seconds; 0 when the ref file cannot be read (LanceDB 0.31.0 does not report it). */
  createAt: number;
  manifestSize: number;
  metadata?: Record<string, string>;
}

/** A computed column and the SQL expression it is computed by. */
export interface ComputedBinding {
  readonly column: string;
  readonly expression: string;
}

/** A backfill of a computed column: which rows (`where`, by default those still null), on which branch. */
export interface BackfillRequest {
  readonly column: string;
  readonly where?: string;
  readonly branch?: string;
}

export interface BackfillSliceRequest extends BackfillRequest {
  readonly key: string;
  /** The row address the previous slice ended at (decimal). */
  readonly after?: string;
  readonly maxRows: number;
}

export interface BackfillSlice {
  /** Arrow IPC of the key and the computed column; absent when no row is left. */
  readonly ipc?: Buffer;
  readonly rows: number;
  readonly last?: string;
  readonly expression: string;
  readonly where: string;
}

export type Empty = Record<string, never>;

export interface DataEngine {
  // ---- table lifecycle and writes (Arrow IPC bodies) ----
  createTable(location: string, ipcBody: Buffer, mode?: CreateMode): Promise<{ version: number }>;
  insert(location: string, ipcBody: Buffer, mode?: InsertMode, target?: WriteTarget): Promise<{ version: number; num_inserted_rows: number }>;
  mergeInsert(location: string, ipcBody: Buffer, input: MergeInsertInput): Promise<MergeInsertResponse>;
  update(location: string, input: UpdateInput): Promise<{ updated_rows: number; version: number }>;
  delete(location: string, input: DeleteInput): Promise<{ version: number }>;
  restore(location: string, input: RestoreInput): Promise<{ version: number }>;

  // ---- reads ----
  /** QueryTable: Arrow IPC *file* bytes; a result above `maxBytes` is refused (code 13), never cut. */
  query(location: string, input: QueryInput, options?: { maxBytes?: number }): Promise<Buffer>;
  explainPlan(location: string, input: ExplainInput): Promise<string>;
  analyzePlan(location: string, input: QueryInput): Promise<string>;
  countRows(location: string, input?: CountInput): Promise<number>;
  stats(location: string, selection?: ReadSelection): Promise<TableStats>;
  describe(location: string, selection?: ReadSelection): Promise<TableDescription>;
  listVersions(location: string, listing?: VersionListing): Promise<{ versions: TableVersion[]; page_token?: string }>;

  // ---- indexes ----
  createIndex(location: string, request: IndexRequest): Promise<Empty>;
  /** Validates a CreateTableIndex request against the table without building; answers the index's name. */
  checkIndex(location: string, request: IndexRequest): Promise<{ name: string }>;
  listIndices(location: string, listing?: IndexListing): Promise<{ indexes: IndexContent[]; page_token?: string }>;
  indexStats(location: string, index: NamedIndex & ReadSelection): Promise<IndexStats>;
  dropIndex(location: string, index: NamedIndex & WriteTarget): Promise<Empty>;
  /**
   * Builds a CreateTableIndex request over every row, replacing an index of the same name: how
   * the catalog keeps a column fill's key index covered (lib/catalog/data/column-fill.ts).
   */
  rebuildIndex(location: string, request: IndexRequest): Promise<Empty>;

  // ---- tags and branches ----
  listTags(location: string, paging?: Paging): Promise<{ tags: Record<string, TagContents>; page_token?: string }>;
  getTagVersion(location: string, tag: TagInput): Promise<{ version: number; branch?: string }>;
  createTag(location: string, tag: TagVersionInput): Promise<Empty>;
  updateTag(location: string, tag: TagVersionInput): Promise<Empty>;
  deleteTag(location: string, tag: TagInput): Promise<Empty>;
  listBranches(location: string, paging?: Paging): Promise<{ branches: Record<string, BranchContents>; page_token?: string }>;
  createBranch(location: string, branch: NewBranchInput): Promise<Empty>;
  deleteBranch(location: string, branch: BranchInput): Promise<Empty>;

  // ---- schema ----
  addColumns(location: string, input: AddColumnsInput): Promise<{ version: number }>;
  alterColumns(location: string, input: AlterColumnsInput): Promise<{ version: number }>;
  dropColumns(location: string, input: DropColumnsInput): Promise<{ version: number }>;
  updateFieldMetadata(location: string, input: FieldMetadataInput): Promise<{ version: number; fields: Record<string, Record<string, string>> }>;
  /**
   * A computed column's binding (12: no such column; 13: not computed), with `where`, when
   * given, checked as a filter the table can plan: what a backfill verifies before it is queued.
   */
  checkBackfill(location: string, request: BackfillRequest): Promise<ComputedBinding>;
  /**
   * A column (other than `column`) whose values identify every row, for a column-only backfill
   * (lib/catalog/data/backfill.ts); undefined when the table has none.
   */
  backfillKey(location: string, request: { column: string; branch?: string }): Promise<string | undefined>;
  /** The next slice of a column-only backfill: `key` + the computed values of one fragment's rows after address `after`. */
  backfillSlice(location: string, request: BackfillSliceRequest): Promise<BackfillSlice>;
  /** Computes a computed column's rows with one UPDATE (whole rows): those matching `where`, by default those still null. */
  backfill(location: string, request: BackfillRequest): Promise<{ updated_rows: number; version: number; expression: string; where: string }>;
}
