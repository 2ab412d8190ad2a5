import { lazyAwsRouter } from '../lib/app/aws.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { consoleAssetsIn, withConsole } from '../lib/http/console-route.js';
import { apiObserver } from '../lib/observability/api-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import type { HandlerMap } from '../lib/contract/request.js';
import type { DatasetInspector } from '../lib/ports/dataset-inspector.js';
import { lazyPort } from '../lib/ports/lazy.js';
import { initContainer } from '../lib/app/container-init.js';

/**
 * The metadata functions' composition (no LanceDB), shared by the grouped function
 * (functions/api-meta.ts) and the per-operation ones (functions/api-operation-meta.ts): the
 * router over `handlers`, Powertools around it under `service`. Detailed table metadata is read
 * by invoking the data function; the Lambda client for that is loaded on the first such request
 * (a chunk of its own, infra/bundling.ts), not on every cold start.
 */
export function metaApi(service: string, handlers: HandlerMap<CatalogServices>) {
  const observability = lambdaObservability(service);
  const { logger, metrics, instrument } = observability;
  const inspector = (config: { RASK_DATA_FUNCTION_NAME?: string; AWS_REGION?: string }): DatasetInspector | undefined => {
    const functionName = config.RASK_DATA_FUNCTION_NAME;
    if (!functionName) return undefined;
    return lazyPort<DatasetInspector>(async () => {
      const { LambdaClient, lambdaInspector } = await import('../lib/adapters/aws/lambda-inspector.js');
      return lambdaInspector(instrument(new LambdaClient({ region: config.AWS_REGION })), functionName);
    }, { inspect: true });
  };
  const router = lazyAwsRouter(handlers, (config) => ({ inspector: inspector(config) }), { logger, instrument });
  // During init (lib/app/container-init.ts): the first registry reads only. Not the policy
  // engine: compiled during init it added a fifth to a platform administrator's cold DescribeTable
  // (CPU to the first answer) and took module load past 150 ms, while a member's first request,
  // which starts it beside its own registry reads (lib/governance/guard.ts), answered no sooner
  // for it (docs/benchmarks.md, "Cold starts: the metadata entry's init, the S3 client, esbuild").
  void initContainer(router, []);
  // The web console's files, written beside this bundle by infra/bundling.ts (docs/console.md).
  const consoleFiles = consoleAssetsIn(path.join(path.dirname(fileURLToPath(import.meta.url)), 'console'));
  const api = lambdaHandler(async () => withConsole(await router(), consoleFiles), logger, apiObserver(logger, metrics));
  return { observability, handler: withPowertools(api, observability, { correlationId: apiRequestId }) };
}
