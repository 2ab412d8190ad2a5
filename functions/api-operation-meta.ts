import type { CatalogServices } from '../lib/catalog/services.js';
import type { HandlerMap } from '../lib/contract/request.js';
import { metaApi } from './meta-api.js';

/**
 * The Lambda handler of one metadata operation (`rask:functionMode=per-operation`,
 * infra/constructs/operation-functions.ts). Its generated entry (infra/operation-bundles.ts)
 * passes only that operation's handler, so the bundle holds only the code it reaches; the
 * composition is the metadata function's (functions/meta-api.ts). A request for another
 * operation cannot arrive: API Gateway routes only this operation's methods here.
 */
export function metaOperationHandler(operationId: string, handlers: HandlerMap<CatalogServices>) {
  return metaApi(`op-${operationId}`, handlers).handler;
}
