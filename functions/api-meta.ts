import { LambdaClient } from '@aws-sdk/client-lambda';
import { lambdaInspector } from '../lib/adapters/aws/lambda-inspector.js';
import { lazyAwsRouter } from '../lib/app/aws.js';
import { consoleLogger } from '../lib/app/build.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';

/**
 * Metadata operations (namespaces, table records, versions): small bundle, no LanceDB. Detailed
 * table metadata is read by invoking the data function.
 */
export const handler = lambdaHandler(
  lazyAwsRouter(metaHandlers, (config) =>
    config.RASK_DATA_FUNCTION_NAME
      ? lambdaInspector(new LambdaClient({ region: config.AWS_REGION }), config.RASK_DATA_FUNCTION_NAME)
      : undefined,
  ),
  consoleLogger,
);
