import { lazyAwsRouter } from '../lib/app/aws.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { apiObserver } from '../lib/observability/api-metrics.js';
import { lambdaObservability } from '../lib/observability/lambda.js';
import { apiRequestId, withPowertools } from '../lib/observability/middy.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';
import type { DatasetInspector } from '../lib/ports/dataset-inspector.js';
import { lazyPort } from '../lib/ports/lazy.js';

/**
 * Metadata operations (namespaces, table records, versions): small bundle, no LanceDB. Detailed
 * table metadata is read by invoking the data function; the Lambda client for that is loaded on
 * the first such request (a chunk of its own, infra/bundling.ts), not on every cold start.
 */
export const observability = lambdaObservability('meta');
const { logger, metrics, instrument } = observability;

const api = lambdaHandler(
  lazyAwsRouter(
    metaHandlers,
    (config) => {
      const functionName = config.RASK_DATA_FUNCTION_NAME;
      if (!functionName) return undefined;
      return lazyPort<DatasetInspector>(async () => {
        const { LambdaClient, lambdaInspector } = await import('../lib/adapters/aws/lambda-inspector.js');
        return lambdaInspector(instrument(new LambdaClient({ region: config.AWS_REGION })), functionName);
      }, { inspect: true });
    },
    { logger, instrument },
  ),
  logger,
  apiObserver(logger, metrics),
);

export const handler = withPowertools(api, observability, { correlationId: apiRequestId });
