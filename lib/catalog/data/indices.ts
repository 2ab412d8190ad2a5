/**
 * Index builds (CreateTableIndex, CreateTableScalarIndex): in the request, or queued.
 *
 * A vector index build trains k-means (and PQ codebooks) over the whole column, and past a few
 * tens of thousands of 128-d rows it outlasts API Gateway's 29 s (docs/index-builds.md); the
 * caller would get a 504 while the build went on unseen. So a vector build whose estimated cost
 * is above `maxSyncVectorIndexRows` is checked (everything but the build itself), queued as a
 * `create_index` job and answered with its `transaction_id` at once; DescribeTransaction
 * follows it (docs/jobs.md). Cheaper builds, and every scalar and FTS build, run inside the
 * request and answer `{}` as before.
 */
import type { JsonArrowSchema } from '../../data/arrow.js';
import { type IndexRequest, indexRequestFields, isVectorIndex } from '../../data/index-request.js';
import { jobContext } from '../../queue/context.js';
import { enqueue } from '../../queue/jobs.js';
import { type CatalogServices, dataEngineOf } from '../services.js';
import type { ResolvedTable } from '../protocols/lookup.js';
import { dataLimitsOf } from './limits.js';
import { recordDefinition, recordDrop } from './index-definitions.js';
import type { NamedIndex, WriteTarget } from '../../ports/data-inputs.js';

/** The job type of a queued build (its runner: lib/jobs/runners/create-index.ts). */
export const CREATE_INDEX = 'create_index';

/**
 * CreateTableIndex / CreateTableScalarIndex on `t`: built now, or, for a vector build above the
 * synchronous limit, checked and queued (answering its `transaction_id`).
 */
export async function createIndex(svc: CatalogServices, t: ResolvedTable, request: IndexRequest): Promise<unknown> {
  if (isVectorIndex(request.indexType)) {
    const cost = await buildCost(svc, t.location, request);
    const limit = dataLimitsOf(svc).maxSyncVectorIndexRows;
    if (cost && cost.cost > limit) return queueBuild(svc, t, request, { ...cost, limit });
  }
  const built = await dataEngineOf(svc).createIndex(t.location, request);
  // Once it committed: the index builder rebuilds it from this if a write drops it
  // (index-definitions.ts). A queued build records it when its job succeeds.
  await recordDefinition(svc, t.record, request);
  return built;
}

/**
 * DropTableIndex on `t`. On main the drop is noted in the record first (index-definitions.ts),
 * so no index-builder pass records or rebuilds the index after it is gone: it stays dropped.
 */
export async function dropIndex(svc: CatalogServices, t: ResolvedTable, index: NamedIndex & WriteTarget): Promise<unknown> {
  if (index.branch === undefined || index.branch === 'main') await recordDrop(svc, t.record, index.indexName);
  return dataEngineOf(svc).dropIndex(t.location, index);
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

async function buildCost(svc: CatalogServices, location: string, request: IndexRequest): Promise<BuildCost | undefined> {
  const selection = request.branch === undefined ? {} : { branch: request.branch };
  const [rows, described] = await Promise.all([dataEngineOf(svc).countRows(location, selection), dataEngineOf(svc).describe(location, selection)]);
  const dim = vectorDimension(described.schema, request.column);
  // An unknown column is left to the engine, which answers 12.
  if (dim === undefined) return undefined;
  const type = request.indexType.replace(/[^A-Z]/g, '');
  return { rows, dim, cost: rows * Math.max(1, dim / REFERENCE_DIM) * (COST_WEIGHT[type] ?? 1) };
}

/**
 * Queues a build too large for a request. Everything the build would refuse at once (bad
 * parameters, a missing column, a taken name) is checked first and answered now; what is
 * queued is the decoded request as the spec's index fields (indexRequestFields: never
 * `identity` or `context`, which may hold credentials), with the index name fixed, so the job
 * and DescribeTransaction can name it; the runner decodes them again.
 */
async function queueBuild(
  svc: CatalogServices,
  t: ResolvedTable,
  request: IndexRequest,
  cost: BuildCost & { limit: number },
): Promise<{ transaction_id: string }> {
  const { name } = await dataEngineOf(svc).checkIndex(t.location, request);
  const params = indexRequestFields(request);
  const job = await enqueue(jobContext(svc), {
    type: CREATE_INDEX,
    table: { id: t.record.id, uid: t.record.uid },
    params: { ...params, name },
    // Above the task tier's limit the build starts there (lib/queue/tiers.ts, docs/jobs.md "Routing").
    estimate: { costRows: cost.cost },
    summary: {
      index_name: name,
      column: request.column,
      index_type: request.indexType,
      // Why it was queued: the guard's arithmetic (docs/index-builds.md).
      rows: String(cost.rows),
      dimension: String(cost.dim),
      cost_rows: String(Math.round(cost.cost)),
      max_sync_rows: String(cost.limit),
      ...(request.branch === undefined ? {} : { branch: request.branch }),
    },
  });
  return { transaction_id: job.id };
}

/** The list size of a fixed-size-list column (a vector column), from the JSON Arrow schema. */
function vectorDimension(schema: JsonArrowSchema, column: string): number | undefined {
  const field = schema.fields.find((f) => f.name === column);
  return field?.type.type === 'fixed_size_list' ? field.type.length : undefined;
}
