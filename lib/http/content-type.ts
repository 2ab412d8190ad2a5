import { ErrorCode } from '../errors.js';
import type { OperationDef } from '../contract/operations.js';
import { TransportError } from './transport-errors.js';
import type { HttpRequest } from '../contract/http.js';

/**
 * JSON doors take JSON only (docs/governance.md, "Threat model of the local server"). A browser
 * sends a cross-origin POST without asking first only as text/plain, a form, or with no type at
 * all; a JSON type always costs it a preflight, which this server never answers for a foreign
 * origin. The official clients send `application/json` on every JSON body (reqwest's `.json()`;
 * test/e2e/drive-by.test.ts captures the node client), and nothing on a call without a body —
 * so a body-less call without a type stays accepted. Arrow doors are not checked: their
 * clients send no type. Both transports: the request contract is the router's.
 */
export function checkJsonContentType(operation: OperationDef, request: HttpRequest): void {
  if (operation.request === 'arrow') return;
  const type = request.headers['content-type'];
  if (type === undefined ? request.body.length === 0 : isJson(type)) return;
  throw new TransportError(
    ErrorCode.InvalidInput,
    415,
    `${operation.operationId} takes a JSON body: send it with content-type: application/json${type === undefined ? '' : ` (not ${JSON.stringify(type.slice(0, 100))})`}`,
  );
}

/** `application/json` or `application/<anything>+json`, with any parameters. */
const isJson = (type: string): boolean => /^application\/([\w.-]+\+)?json$/i.test(type.split(';')[0].trim());
