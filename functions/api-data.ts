import { lazyAwsRouter } from '../lib/app/aws.js';
import { consoleLogger } from '../lib/app/build.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { dataHandlers } from '../lib/operations/handlers-data.js';

/** Data-plane operations (Arrow IPC, query, index, schema): runs with the LanceDB layer. */
export const handler = lambdaHandler(lazyAwsRouter(dataHandlers), consoleLogger);
