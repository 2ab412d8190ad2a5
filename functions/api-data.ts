import type { APIGatewayProxyEvent } from 'aws-lambda';
import { lazyAwsRouter } from '../lib/app/aws.js';
import { consoleLogger } from '../lib/app/build.js';
import { handleInspectEvent, isInspectEvent } from '../lib/app/inspect-event.js';
import { engineInspector } from '../lib/data/inspector.js';
import { sharedEngine } from '../lib/data/shared-engine.js';
import { lambdaHandler } from '../lib/http/apigw-adapter.js';
import { allHandlers } from '../lib/operations/handlers-all.js';

/**
 * Data-plane operations (Arrow IPC, query, index, schema): runs with the LanceDB layer. Also
 * answers the metadata function's direct inspection requests (lib/app/inspect-event.ts). It
 * carries every handler: requests through a project base URI (`/projects/{project}/v1/…`) reach
 * it through one proxy resource whatever the operation (infra/constructs/api.ts).
 */
const api = lambdaHandler(lazyAwsRouter(allHandlers, () => engineInspector(sharedEngine())), consoleLogger);

export const handler = async (event: unknown) =>
  isInspectEvent(event) ? handleInspectEvent(event, engineInspector(sharedEngine())) : api(event as APIGatewayProxyEvent);
