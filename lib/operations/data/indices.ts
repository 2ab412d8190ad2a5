/**
 * Indices: CreateTableIndex, CreateTableScalarIndex, ListTableIndices, DescribeTableIndexStats,
 * DropTableIndex.
 *
 * A vector index build trains k-means (and PQ codebooks) over the whole column, and past a few
 * tens of thousands of 128-d rows it outlasts API Gateway's 29 s (docs/index-builds.md); the
 * caller would get a 504 while the build went on unseen. So a vector build whose estimated cost
 * is above `maxSyncVectorIndexRows` is checked (everything but the build itself), queued as a
 * `create_index` job and answered with its `transaction_id` at once; DescribeTransaction
 * follows it (docs/jobs.md). Cheaper builds, and every scalar and FTS build, run inside the
 * request and answer `{}` as before.
 */
import type { CatalogServices } from '../../catalog/services.js';
import type { ResolvedTable } from '../../catalog/protocols/lookup.js';
import type { JsonArrowSchema } from '../../data/arrow.js';
import { InvalidInputError } from '../../errors.js';
import { jobContext } from '../../queue/context.js';
import { enqueue } from '../../queue/jobs.js';
import { CREATE_INDEX } from '../../jobs/runners/create-index.js';
import type { HandlersOf, OperationRequest } from '../../contract/request.js';
import { body, engine, limits, queryString, table } from './context.js';

export const indexHandlers: HandlersOf<'lib/operations/data/indices.ts', CatalogServices> = {
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
  if (isVectorIndex(request.index_type)) {
    const cost = await buildCost(t.location, request);
    const limit = limits(svc).maxSyncVectorIndexRows;
    if (cost && cost.cost > limit) return queueBuild(svc, t, request, { ...cost, limit });
  }
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

interface BuildCost {
  readonly rows: number;
  readonly dim: number;
  /** In rows of a 128-d IVF_PQ build. */
  readonly cost: number;
}

async function buildCost(location: string, request: Record<string, unknown>): Promise<BuildCost | undefined> {
  const selection = typeof request.branch === 'string' ? { branch: request.branch } : {};
  const [rows, described] = await Promise.all([engine().countRows(location, selection), engine().describe(location, selection)]);
  const dim = vectorDimension(described.schema, request.column);
  // An unknown column is left to the engine, which answers 12.
  if (dim === undefined) return undefined;
  const type = String(request.index_type).toUpperCase().replace(/[^A-Z]/g, '');
  return { rows, dim, cost: rows * Math.max(1, dim / REFERENCE_DIM) * (COST_WEIGHT[type] ?? 1) };
}

/**
 * Queues a build too large for a request. Everything the build would refuse at once (bad
 * parameters, a missing column, a taken name) is checked first and answered now; what is
 * queued is the request's index fields only (never `identity` or `context`, which may hold
 * credentials), with the index name fixed, so the job and DescribeTransaction can name it.
 */
async function queueBuild(
  svc: CatalogServices,
  t: ResolvedTable,
  request: Record<string, unknown>,
  cost: BuildCost & { limit: number },
): Promise<{ transaction_id: string }> {
  const { id: _id, identity: _identity, context: _context, ...params } = request;
  const { name } = await engine().checkIndex(t.location, params);
  const job = await enqueue(jobContext(svc), {
    type: CREATE_INDEX,
    table: { id: t.record.id, uid: t.record.uid },
    params: { ...params, name },
    summary: {
      index_name: name,
      column: String(params.column),
      index_type: String(params.index_type),
      // Why it was queued: the guard's arithmetic (docs/index-builds.md).
      rows: String(cost.rows),
      dimension: String(cost.dim),
      cost_rows: String(Math.round(cost.cost)),
      max_sync_rows: String(cost.limit),
      ...(typeof params.branch === 'string' ? { branch: params.branch } : {}),
    },
  });
  return { transaction_id: job.id };
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
