/**
 * CreateTableIndex / ListTableIndices / DescribeTableIndexStats / DropTableIndex.
 *
 * Some invalid parameters make the native module *panic* rather than fail (an unknown FTS
 * language aborts the whole process; a hamming distance on float vectors panics inside the
 * index builder), so the request is validated completely before LanceDB sees it.
 */
import type { Index } from '@lancedb/lancedb';
import { InvalidInputError, TableColumnNotFoundError, TableIndexAlreadyExistsError, TableIndexNotFoundError } from '../../errors.js';
import { type ArrowSchema, loadArrow } from '../../data/arrow.js';
import type { LanceDb, Table } from './lancedb.js';
import { page, type Page } from '../../data/paging.js';
import { asObject, type Json, optBool, optEnum, optInt, optString, reqString } from '../../data/validate.js';
import type { IndexContent, IndexStats } from '../../ports/data-engine.js';
export type { IndexContent, IndexStats };

const I32 = { min: 1, max: 2 ** 31 - 1 };

/** Spec index type → what it needs. Aliases map the names LanceDB itself reports. */
const INDEX_TYPES = {
  BTREE: 'scalar',
  BITMAP: 'scalar',
  LABEL_LIST: 'scalar',
  FTS: 'fts',
  FM: 'scalar',
  IVF_FLAT: 'ivf',
  IVF_PQ: 'ivf',
  IVF_RQ: 'ivf',
  IVF_HNSW_SQ: 'hnsw',
  IVF_HNSW_PQ: 'hnsw',
} as const;
type IndexType = keyof typeof INDEX_TYPES;
const ALIASES: Record<string, IndexType> = {
  INVERTED: 'FTS',
  LABELLIST: 'LABEL_LIST',
  HNSW_SQ: 'IVF_HNSW_SQ',
  HNSW_PQ: 'IVF_HNSW_PQ',
  IVFHNSWSQ: 'IVF_HNSW_SQ',
  IVFHNSWPQ: 'IVF_HNSW_PQ',
  IVFPQ: 'IVF_PQ',
  IVFFLAT: 'IVF_FLAT',
  IVFRQ: 'IVF_RQ',
};

/** Which optional request fields each index type accepts. */
const PARAMS: Record<IndexType, readonly string[]> = {
  BTREE: [],
  BITMAP: [],
  LABEL_LIST: [],
  FM: [],
  FTS: ['with_position', 'base_tokenizer', 'language', 'max_token_length', 'lower_case', 'stem', 'remove_stop_words', 'ascii_folding'],
  IVF_FLAT: ['distance_type', 'num_partitions', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_PQ: ['distance_type', 'num_partitions', 'num_sub_vectors', 'num_bits', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_RQ: ['distance_type', 'num_partitions', 'num_bits', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_HNSW_SQ: ['distance_type', 'num_partitions', 'sample_rate', 'max_iterations', 'target_partition_size', 'm', 'ef_construction'],
  IVF_HNSW_PQ: ['distance_type', 'num_partitions', 'num_sub_vectors', 'sample_rate', 'max_iterations', 'target_partition_size', 'm', 'ef_construction'],
};
const ALL_PARAMS = [...new Set(Object.values(PARAMS).flat())];

// The tokenizer's language list in Lance 8; anything else panics and kills the process.
const FTS_LANGUAGES = [
  'Arabic', 'Danish', 'Dutch', 'English', 'Finnish', 'French', 'German', 'Greek', 'Hungarian',
  'Italian', 'Norwegian', 'Portuguese', 'Romanian', 'Russian', 'Spanish', 'Swedish', 'Tamil', 'Turkish',
] as const;
const BASE_TOKENIZERS = ['simple', 'whitespace', 'raw', 'ngram'] as const;

export async function createIndex(
  table: Table,
  lib: LanceDb,
  request: unknown,
  options: { replace?: boolean } = {},
): Promise<Record<string, never>> {
  const { column, config, name } = await prepareIndex(table, lib, request);
  // replace:false so that an existing name is TableIndexAlreadyExists (LanceDB's default replaces);
  // only the catalog's own rebuilds replace (DataEngine.rebuildIndex).
  await table.createIndex(column, { config, name, replace: options.replace ?? false });
  return {};
}

/**
 * Everything CreateTableIndex checks, without building: the request is valid for this table
 * and the index name is free. Run before a build is queued, so a request that cannot succeed
 * is refused at once (13, 12, 7) instead of becoming a failed job.
 */
export async function checkIndex(table: Table, lib: LanceDb, request: unknown): Promise<{ name: string }> {
  const { column, name } = await prepareIndex(table, lib, request);
  if (!(await table.schema()).fields.some((f) => f.name === column)) {
    throw new TableColumnNotFoundError(`column "${column}" does not exist`);
  }
  const resolved = name ?? defaultIndexName(column);
  if ((await table.listIndices()).some((i) => i.name === resolved)) {
    throw new TableIndexAlreadyExistsError(`index "${resolved}" already exists`);
  }
  return { name: resolved };
}

/** The name LanceDB gives an index created without one. */
export function defaultIndexName(column: string): string {
  return `${column}_idx`;
}

export async function prepareIndex(table: Table, lib: LanceDb, request: unknown): Promise<{ column: string; config: Index; name?: string }> {
  const body = asObject(request);
  const column = reqString(body.column, 'column');
  const type = readIndexType(body.index_type);
  const name = optString(body.name, 'name') || undefined;
  const extra = ALL_PARAMS.filter((p) => body[p] != null && !PARAMS[type].includes(p));
  if (extra.length > 0) {
    throw new InvalidInputError(`index type ${type} does not take ${extra.map((p) => `"${p}"`).join(', ')}`);
  }
  return { column, config: await indexConfig(table, lib, type, column, body), name };
}

function readIndexType(value: unknown): IndexType {
  const raw = reqString(value, 'index_type').toUpperCase().replace(/-/g, '_');
  const type = raw in INDEX_TYPES ? (raw as IndexType) : ALIASES[raw.replace(/_/g, '')] ?? ALIASES[raw];
  if (!type) {
    throw new InvalidInputError(`unsupported index_type "${String(value)}"; supported: ${Object.keys(INDEX_TYPES).join(', ')}`);
  }
  return type;
}

async function indexConfig(table: Table, lib: LanceDb, type: IndexType, column: string, b: Json): Promise<Index> {
  switch (type) {
    case 'BTREE':
      return lib.Index.btree();
    case 'BITMAP':
      return lib.Index.bitmap();
    case 'LABEL_LIST':
      return lib.Index.labelList();
    case 'FM':
      return lib.Index.fm();
    case 'FTS':
      return lib.Index.fts(defined({
        withPosition: optBool(b.with_position, 'with_position'),
        baseTokenizer: optEnum(b.base_tokenizer, 'base_tokenizer', BASE_TOKENIZERS),
        language: optEnum(b.language, 'language', FTS_LANGUAGES),
        maxTokenLength: optInt(b.max_token_length, 'max_token_length', { min: 1, max: I32.max }),
        lowercase: optBool(b.lower_case, 'lower_case'),
        stem: optBool(b.stem, 'stem'),
        removeStopWords: optBool(b.remove_stop_words, 'remove_stop_words'),
        asciiFolding: optBool(b.ascii_folding, 'ascii_folding'),
      }));
  }
  // Only IVF_FLAT gets past distanceType() with "hamming".
  const distance = (await distanceType(table, type, column, b.distance_type)) as 'l2' | 'cosine' | 'dot' | undefined;
  const ivf = defined({
    distanceType: distance,
    numPartitions: await numPartitions(table, b),
    sampleRate: optInt(b.sample_rate, 'sample_rate', I32),
    maxIterations: optInt(b.max_iterations, 'max_iterations', I32),
  });
  const numSubVectors = optInt(b.num_sub_vectors, 'num_sub_vectors', I32);
  const numBits = optInt(b.num_bits, 'num_bits', I32);
  const hnsw = defined({ m: optInt(b.m, 'm', I32), efConstruction: optInt(b.ef_construction, 'ef_construction', I32) });
  switch (type) {
    case 'IVF_FLAT':
      return lib.Index.ivfFlat(ivf);
    case 'IVF_PQ':
      return lib.Index.ivfPq(defined({ ...ivf, numSubVectors, numBits }));
    case 'IVF_RQ':
      return lib.Index.ivfRq(defined({ ...ivf, numBits }));
    case 'IVF_HNSW_SQ':
      return lib.Index.hnswSq({ ...ivf, ...hnsw });
    case 'IVF_HNSW_PQ':
      return lib.Index.hnswPq(defined({ ...ivf, ...hnsw, numSubVectors }));
  }
}

async function distanceType(table: Table, type: IndexType, column: string, value: unknown) {
  const d = optEnum(value, 'distance_type', ['l2', 'cosine', 'dot', 'hamming'] as const);
  if (d !== 'hamming') return d;
  // Hamming only makes sense for packed binary vectors; on floats the index builder panics.
  if (type !== 'IVF_FLAT' || !isBinaryVector(await table.schema(), column)) {
    throw new InvalidInputError('distance_type "hamming" needs an IVF_FLAT index on a fixed_size_list<uint8> column');
  }
  return d;
}

function isBinaryVector(schema: ArrowSchema, column: string): boolean {
  const { DataType } = loadArrow();
  const type = schema.fields.find((f) => f.name === column)?.type;
  if (!type || !DataType.isFixedSizeList(type)) return false;
  const item = type.children[0].type;
  return DataType.isInt(item) && item.bitWidth === 8 && !item.isSigned;
}

/** 0.31.0 has no target_partition_size; Lance derives the partition count from it the same way. */
async function numPartitions(table: Table, b: Json): Promise<number | undefined> {
  const n = optInt(b.num_partitions, 'num_partitions', I32);
  const target = optInt(b.target_partition_size, 'target_partition_size', I32);
  if (target === undefined) return n;
  if (n !== undefined) throw new InvalidInputError('give num_partitions or target_partition_size, not both');
  return Math.max(1, Math.ceil((await table.countRows()) / target));
}

function defined<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// ---- listing and stats ----

const FRIENDLY_TYPES: Record<string, string> = {
  BTree: 'BTREE',
  Bitmap: 'BITMAP',
  LabelList: 'LABEL_LIST',
  Inverted: 'FTS',
  FTS: 'FTS',
  Fm: 'FM',
  IvfFlat: 'IVF_FLAT',
  IvfPq: 'IVF_PQ',
  IvfRq: 'IVF_RQ',
  IvfSq: 'IVF_SQ',
  IvfHnswSq: 'IVF_HNSW_SQ',
  IvfHnswPq: 'IVF_HNSW_PQ',
  IvfHnswFlat: 'IVF_HNSW_FLAT',
};

function friendlyType(t: string): string {
  return FRIENDLY_TYPES[t] ?? t.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

export async function listIndices(table: Table, request: unknown): Promise<{ indexes: IndexContent[] } & Page> {
  const body = asObject(request);
  const { items, page_token } = page(await table.listIndices(), (i) => i.name, body);
  const indexes = items.map((i): IndexContent => {
    const out: IndexContent = {
      index_name: i.name,
      index_uuid: i.indexUuid ?? '',
      columns: i.columns,
      status: i.numIndexedRows === undefined || i.numUnindexedRows === undefined ? 'unknown' : 'done',
      index_type: friendlyType(i.indexType),
    };
    if (i.typeUrl !== undefined) out.type_url = i.typeUrl;
    if (i.numIndexedRows !== undefined) out.num_indexed_rows = i.numIndexedRows;
    if (i.numUnindexedRows !== undefined) out.num_unindexed_rows = i.numUnindexedRows;
    out.size_bytes = i.sizeBytes ?? null;
    if (i.numSegments !== undefined) out.num_segments = i.numSegments;
    out.created_at = i.createdAt ? new Date(i.createdAt).toISOString() : null;
    if (i.indexVersion !== undefined) out.index_version = i.indexVersion;
    out.index_details =
      i.indexDetails === undefined ? null : typeof i.indexDetails === 'string' ? i.indexDetails : JSON.stringify(i.indexDetails);
    return out;
  });
  return page_token === undefined ? { indexes } : { indexes, page_token };
}

export async function indexStats(table: Table, indexName: string): Promise<IndexStats> {
  const stats = await table.indexStats(indexName);
  // LanceDB returns undefined (not an error) for a missing index.
  if (!stats) throw new TableIndexNotFoundError(`index "${indexName}" not found`);
  return {
    index_type: stats.indexType ?? null,
    distance_type: stats.distanceType ?? null,
    num_indexed_rows: stats.numIndexedRows ?? null,
    num_unindexed_rows: stats.numUnindexedRows ?? null,
    num_indices: stats.numIndices ?? null,
  };
}

export async function dropIndex(table: Table, indexName: string): Promise<Record<string, never>> {
  await table.dropIndex(indexName);
  return {};
}
