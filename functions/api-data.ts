import type { APIGatewayProxyEvent } from 'aws-lambda';
import { lazyAwsRouter } from '../lib/app/aws.js';
import { handleInspectEvent, isInspectEvent } from '../lib/app/inspect-event.js';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { lanceDataPlane } from '../lib/adapters/lance/data-plane.js';
import { memoryStats } from '../lib/adapters/lance/memory-stats.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { initContainer } from '../lib/app/container-init.js';
import { loadLanceDb } from '../lib/adapters/lance/lancedb.js';
import { apiObserver } from '../lib/observability/api-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import { lazyAllHandlers } from '../lib/operations/handlers-all-lazy.js';

/**
 * Data-plane operations (Arrow IPC, query, index, schema): runs with the LanceDB layer. Also
 * answers the metadata function's direct inspection requests (lib/app/inspect-event.ts). It
 * carries every handler: requests through a project base URI (`/projects/{project}/v1/…`) reach
 * it through one proxy resource whatever the operation (infra/constructs/api.ts). Each handler
 * module is loaded on its first request (lib/operations/handlers-lazy.ts, issue #37).
 */
export const observability = lambdaObservability('data');
const { logger, metrics, instrument } = observability;

const observeApi = apiObserver(logger, metrics);

const router = lazyAwsRouter(lazyAllHandlers(), lanceDataPlane, { logger, instrument });
// During init (lib/app/container-init.ts): the app's first registry reads, then LanceDB (the
// first data call needs it). Not the policy engine: the inspection events and a platform
// administrator's requests never need it, and compiling it took the CPU from their first answer
// (docs/benchmarks.md, "Cold starts against the floor"); a request that needs it starts it
// beside its own registry reads (lib/governance/guard.ts). Awaited: Lambda's init lasts until
// LanceDB has loaded, so the first request does not pay for it.
await initContainer(router, [loadLanceDb]);

const api = lambdaHandler(
  router,
  logger,
  (request, response, ms) => {
    observeApi(request, response, ms);
    // What the container holds after each request (docs/operations.md, "Memory"): its RSS and
    // the LanceDB session's cache use, against the budget it was sized with.
    const memory = memoryStats();
    metrics.addMetric('MemoryRss', MetricUnit.Bytes, memory.rss);
    if (memory.lanceCacheBudgetBytes > 0) {
      metrics.addMetric('LanceCacheBytes', MetricUnit.Bytes, memory.lanceCacheBytes);
      metrics.addMetric('LanceCacheBudgetBytes', MetricUnit.Bytes, memory.lanceCacheBudgetBytes);
    }
  },
);

const route = async (event: unknown) =>
  isInspectEvent(event) ? handleInspectEvent(event, lanceDataPlane().inspector, logger) : api(event as APIGatewayProxyEvent);

export const handler = withPowertools(route, observability, { correlationId: apiRequestId });
