/**
 * CreateTableIndex / ListTableIndices / DescribeTableIndexStats / DropTableIndex.
 *
 * Some invalid parameters make the native module *panic* rather than fail (an unknown FTS
 * language aborts the whole process; a hamming distance on float vectors panics inside the
 * index builder), so the request is validated completely before LanceDB sees it: its fields by
 * lib/data/index-request.ts, what needs the table here.
 */
import type { Index } from '@lancedb/lancedb';
import { TableColumnNotFoundError, TableIndexAlreadyExistsError, TableIndexNotFoundError } from '../../errors.js';
import { hammingRefused, type IndexRequest } from '../../data/index-request.js';
import { type ArrowSchema, loadArrow } from '../../data/arrow.js';
import type { LanceDb, Table } from './lancedb.js';
import { page, type Page } from '../../data/paging.js';
import type { IndexContent, IndexStats, Paging } from '../../ports/data-engine.js';
export type { IndexContent, IndexStats };

export async function createIndex(
  table: Table,
  lib: LanceDb,
  request: IndexRequest,
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
export async function checkIndex(table: Table, lib: LanceDb, request: IndexRequest): Promise<{ name: string }> {
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

/** The request (decoded by lib/data/index-request.ts) as LanceDB's index config, with what needs the table checked. */
export async function prepareIndex(table: Table, lib: LanceDb, request: IndexRequest): Promise<{ column: string; config: Index; name?: string }> {
  return { column: request.column, config: await indexConfig(table, lib, request), name: request.name };
}

async function indexConfig(table: Table, lib: LanceDb, request: IndexRequest): Promise<Index> {
  const { indexType: type, column } = request;
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
      return lib.Index.fts({ ...request.fts });
  }
  const v = request.vector ?? {};
  // Hamming only makes sense for packed binary vectors; on floats the index builder panics.
  // (Only IVF_FLAT gets this far with it: lib/data/index-request.ts.)
  if (v.distanceType === 'hamming' && !isBinaryVector(await table.schema(), column)) throw hammingRefused();
  const ivf = defined({
    distanceType: v.distanceType as 'l2' | 'cosine' | 'dot' | undefined,
    numPartitions: await numPartitions(table, v.numPartitions, v.targetPartitionSize),
    sampleRate: v.sampleRate,
    maxIterations: v.maxIterations,
  });
  const { numSubVectors, numBits } = v;
  const hnsw = defined({ m: v.m, efConstruction: v.efConstruction });
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

function isBinaryVector(schema: ArrowSchema, column: string): boolean {
  const { DataType } = loadArrow();
  const type = schema.fields.find((f) => f.name === column)?.type;
  if (!type || !DataType.isFixedSizeList(type)) return false;
  const item = type.children[0].type;
  return DataType.isInt(item) && item.bitWidth === 8 && !item.isSigned;
}

/** 0.31.0 has no target_partition_size; Lance derives the partition count from it the same way. */
async function numPartitions(table: Table, n: number | undefined, target: number | undefined): Promise<number | undefined> {
  if (target === undefined) return n;
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

export async function listIndices(table: Table, paging: Paging): Promise<{ indexes: IndexContent[] } & Page> {
  const { items, page_token } = page(await table.listIndices(), (i) => i.name, paging);
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
