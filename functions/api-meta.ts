import { LambdaClient } from '@aws-sdk/client-lambda';
import { lambdaInspector } from '../lib/adapters/aws/lambda-inspector.js';
import { lazyAwsRouter } from '../lib/app/aws.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { apiObserver } from '../lib/observability/api-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';

/**
 * Metadata operations (namespaces, table records, versions): small bundle, no LanceDB. Detailed
 * table metadata is read by invoking the data function.
 */
export const observability = lambdaObservability('meta');
const { logger, metrics, instrument } = observability;

const api = lambdaHandler(
  lazyAwsRouter(
    metaHandlers,
    (config) =>
      config.RASK_DATA_FUNCTION_NAME
        ? lambdaInspector(instrument(new LambdaClient({ region: config.AWS_REGION })), config.RASK_DATA_FUNCTION_NAME)
        : undefined,
    { logger, instrument },
  ),
  logger,
  apiObserver(logger, metrics),
);

export const handler = withPowertools(api, observability, { correlationId: apiRequestId });
