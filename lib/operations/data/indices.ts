/**
 * Indices: CreateTableIndex, CreateTableScalarIndex, ListTableIndices, DescribeTableIndexStats,
 * DropTableIndex.
 *
 * Builds run inside the request. A vector index build trains k-means (and PQ codebooks) over
 * the whole column, and past a few tens of thousands of 128-d rows it outlasts API Gateway's
 * 29 s (docs/index-builds.md); the caller would get a 504 while the build went on unseen. So a
 * vector build whose estimated cost is above `maxSyncVectorIndexRows` is refused up front,
 * naming the asynchronous path.
 */
import type { CatalogServices } from '../../catalog/services.js';
import type { JsonArrowSchema } from '../../data/arrow.js';
import { InvalidInputError, UnsupportedError } from '../../errors.js';
import type { HandlerMap, OperationRequest } from '../types.js';
import { body, engine, limits, queryString, table } from './context.js';

export const indexHandlers: HandlerMap<CatalogServices> = {
  CreateTableIndex: (req, svc) => createIndex(req, svc),

  // Same request model; scalar types never reach the vector guard.
  CreateTableScalarIndex: (req, svc) => createIndex(req, svc),

  ListTableIndices: async (req, svc) => engine().listIndices((await table(req, svc)).location, body(req)),

  DescribeTableIndexStats: async (req, svc) =>
    engine().indexStats((await table(req, svc)).location, body(req, { index_name: indexName(req) })),

  DropTableIndex: async (req, svc) => {
    const branch = queryString(req.query, 'branch');
    const extra = branch === undefined ? { index_name: indexName(req) } : { index_name: indexName(req), branch };
    return engine().dropIndex((await table(req, svc)).location, body(req, extra));
  },
};

async function createIndex(req: OperationRequest, svc: CatalogServices): Promise<unknown> {
  const t = await table(req, svc);
  const request = body(req);
  if (isVectorIndex(request.index_type)) await guardBuildCost(t.location, request, limits(svc).maxSyncVectorIndexRows);
  return engine().createIndex(t.location, request);
}

/**
 * Measured build times (docs/index-builds.md) grow with rows × dimension and depend on the
 * type: IVF_PQ and IVF_HNSW_SQ cost about the same, IVF_HNSW_PQ about three times as much, and
 * IVF_FLAT and IVF_RQ (no quantizer codebooks to train) a few percent. The limit is therefore
 * expressed in rows of a 128-d IVF_PQ build and every request is converted to that unit. The
 * cheap types keep a conservative 1/16: reading the column from S3 also takes time.
 */
const REFERENCE_DIM = 128;
const COST_WEIGHT: Readonly<Record<string, number>> = {
  IVFFLAT: 1 / 16,
  IVFRQ: 1 / 16,
  IVFHNSWPQ: 3,
  HNSWPQ: 3,
};

async function guardBuildCost(location: string, request: Record<string, unknown>, maxRows: number): Promise<void> {
  const selection = typeof request.branch === 'string' ? { branch: request.branch } : {};
  const [rows, described] = await Promise.all([engine().countRows(location, selection), engine().describe(location, selection)]);
  const dim = vectorDimension(described.schema, request.column);
  // An unknown column is left to the engine, which answers 12.
  if (dim === undefined) return;
  const type = String(request.index_type).toUpperCase().replace(/[^A-Z]/g, '');
  const cost = rows * Math.max(1, dim / REFERENCE_DIM) * (COST_WEIGHT[type] ?? 1);
  if (cost <= maxRows) return;
  throw new UnsupportedError(
    `building this vector index inside a request is not supported: ${rows} rows of ${dim}-d vectors weigh as ` +
      `${Math.round(cost)} rows of a 128-d IVF_PQ build, above the ${maxRows} rows past which builds can outlast ` +
      `API Gateway's 29 s limit (RASK_MAX_SYNC_VECTOR_INDEX_ROWS; docs/index-builds.md). Build it through the ` +
      `asynchronous path (maintenance index-build jobs, not yet available), or client-side against the table's ` +
      `location with vended credentials`,
  );
}

/** The list size of a fixed-size-list column (a vector column), from the JSON Arrow schema. */
function vectorDimension(schema: JsonArrowSchema, column: unknown): number | undefined {
  const field = schema.fields.find((f) => f.name === column);
  return field?.type.type === 'fixed_size_list' ? field.type.length : undefined;
}

/** IVF_* and HNSW variants train over the whole column; scalar and FTS builds are one pass. */
function isVectorIndex(type: unknown): boolean {
  return typeof type === 'string' && /^(IVF|HNSW)/i.test(type.replace(/[-_\s]/g, ''));
}

/** `{index_name}` comes from the path; a body naming a different index is a contradiction. */
function indexName(req: OperationRequest): string {
  const fromPath = req.indexName ?? '';
  const fromBody = req.body.index_name;
  if (fromBody !== undefined && fromBody !== null && fromBody !== fromPath) {
    throw new InvalidInputError(`body index_name ${JSON.stringify(fromBody)} does not match the path's ${JSON.stringify(fromPath)}`);
  }
  if (fromPath === '') throw new InvalidInputError('the index name in the path is empty');
  return fromPath;
}
