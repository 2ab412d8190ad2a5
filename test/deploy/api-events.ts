/**
 * API Gateway REST (v1) proxy events, shaped like the samples in events/ (encoded `path`,
 * decoded `pathParameters`, binary bodies base64), for driving deployed artifacts directly.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';

let counter = 0;

export function apiEvent(
  method: 'GET' | 'POST',
  path: string,
  options: { query?: Record<string, string>; json?: unknown; binary?: Uint8Array; headers?: Record<string, string>; authorizer?: Record<string, string> } = {},
): APIGatewayProxyEvent {
  const headers: Record<string, string> = { Host: 'abc123.execute-api.us-east-1.amazonaws.com', ...options.headers };
  if (options.json !== undefined) headers['Content-Type'] = 'application/json';
  const body = options.binary ? Buffer.from(options.binary).toString('base64') : options.json !== undefined ? JSON.stringify(options.json) : null;
  const requestId = `smoke-${++counter}`;
  return {
    resource: path,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: options.query ? Object.fromEntries(Object.entries(options.query).map(([k, v]) => [k, [v]])) : null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: options.binary !== undefined,
    requestContext: {
      resourcePath: path,
      httpMethod: method,
      path: `/prod${path}`,
      stage: 'prod',
      requestId,
      accountId: '123456789012',
      apiId: 'abc123',
      identity: { sourceIp: '127.0.0.1', userAgent: 'rask-smoke' },
      protocol: 'HTTP/1.1',
      requestTimeEpoch: Date.now(),
      // What the deployed authorizer returns for the admin key (functions/authorizer.ts), as API
      // Gateway hands it on; lib/governance/guard.ts (mode `authorizer`) takes the caller from it.
      // `options.authorizer` stands for another principal's context.
      authorizer: options.authorizer ?? { principal: 'admin', platformAdmin: 'true', via: 'admin-key', principalId: 'rask-admin' },
    },
  } as unknown as APIGatewayProxyEvent;
}
