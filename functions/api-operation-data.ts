import { lazyAwsRouter } from '../lib/app/aws.js';
import type { CatalogServices } from '../lib/catalog/services.js';
import { lanceDataPlane } from '../lib/adapters/lance/data-plane.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { apiObserver } from '../lib/observability/api-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import { namingTablesById } from '../lib/operations/data/naming.js';
import type { HandlerMap } from '../lib/contract/request.js';

/**
 * The Lambda handler of one data-plane operation (`rask:functionMode=per-operation`): the data
 * function's composition (functions/api-data.ts) with only that operation's handler, renamed
 * errors included. Inspection events and project base URIs stay with the grouped data function.
 */
export function dataOperationHandler(operationId: string, handlers: HandlerMap<CatalogServices>) {
  const observability = lambdaObservability(`op-${operationId}`);
  const { logger, metrics, instrument } = observability;
  const api = lambdaHandler(
    lazyAwsRouter(namingTablesById(handlers), lanceDataPlane, { logger, instrument }),
    logger,
    apiObserver(logger, metrics),
  );
  return withPowertools(api, observability, { correlationId: apiRequestId });
}
