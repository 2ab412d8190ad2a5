import { lazyAwsRouter } from '../lib/app/aws.js';
import { consoleLogger } from '../lib/app/build.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { metaHandlers } from '../lib/operations/handlers-meta.js';

/** Metadata operations (namespaces, table records, versions): small bundle, no LanceDB. */
export const handler = lambdaHandler(lazyAwsRouter(metaHandlers), consoleLogger);
