import { lazyAwsRouter } from '../lib/app/aws.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { apiObserver } from '../lib/observability/api-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import type { HandlerMap } from '../lib/operations/types.js';
import type { DatasetInspector } from '../lib/ports/dataset-inspector.js';
import { lazyPort } from '../lib/ports/lazy.js';

/**
 * The Lambda handler of one metadata operation (`rask:functionMode=per-operation`,
 * infra/constructs/operation-functions.ts). Its generated entry (infra/operation-bundles.ts)
 * passes only that operation's handler, so the bundle holds only the code it reaches; the
 * composition is the metadata function's (functions/api-meta.ts). A request for another
 * operation cannot arrive: API Gateway routes only this operation's methods here.
 */
export function metaOperationHandler(operationId: string, handlers: HandlerMap<CatalogServices>) {
  const observability = lambdaObservability(`op-${operationId}`);
  const { logger, metrics, instrument } = observability;
  const inspector = (config: { RASK_DATA_FUNCTION_NAME?: string; AWS_REGION?: string }): DatasetInspector | undefined => {
    const functionName = config.RASK_DATA_FUNCTION_NAME;
    if (!functionName) return undefined;
    return lazyPort<DatasetInspector>(async () => {
      const { LambdaClient, lambdaInspector } = await import('../lib/adapters/aws/lambda-inspector.js');
      return lambdaInspector(instrument(new LambdaClient({ region: config.AWS_REGION })), functionName);
    }, { inspect: true });
  };
  const api = lambdaHandler(lazyAwsRouter(handlers, inspector, { logger, instrument }), logger, apiObserver(logger, metrics));
  return withPowertools(api, observability, { correlationId: apiRequestId });
}
