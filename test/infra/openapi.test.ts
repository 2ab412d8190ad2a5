/**
 * The API's OpenAPI document (infra/constructs/openapi.ts), built without a stack: one path and
 * method per (path, method) of the operation table, each to the function its mode names.
 */
import { describe, expect, it } from 'vitest';
import { BINARY_MEDIA_TYPES, GATEWAY_ERRORS, errorTemplate } from '../../infra/constructs/api.js';
import { CONSOLE_OPERATIONS } from '../../infra/constructs/console-routes.js';
import { AUTHORIZER_NAME, PROJECT_PROXY_OPERATIONS, catalogRoutes, openApiDocument, pathParameters, type ApiRoute } from '../../infra/constructs/openapi.js';
import { ALL_OPERATIONS, type OperationDef } from '../../lib/contract/operations.js';

const PREFIX = 'arn:aws:apigateway:eu-west-1:lambda:path/2015-03-31/functions/';
const arn = (target: string) => `arn:aws:lambda:eu-west-1:111122223333:function:${target}`;

function documentFor(routes: ApiRoute[], cacheSeconds = 0) {
  const targets = [...new Set(routes.map((r) => r.target))];
  return openApiDocument({
    title: 'Rask-catalog',
    description: 'test',
    routes,
    functions: Object.fromEntries(targets.map((t) => [t, arn(t)])),
    authorizer: { functionArn: arn('authorizer'), cacheSeconds },
    binaryMediaTypes: BINARY_MEDIA_TYPES,
    gatewayResponses: GATEWAY_ERRORS.map((m) => ({ type: m.type.responseType, statusCode: m.statusCode, template: errorTemplate(m) })),
    lambdaUriPrefix: PREFIX,
  }) as { paths: Record<string, Record<string, any>>; components: any; [k: string]: any };
}

/** The table's (method, path) pairs the document lacks or names with another operation id. */
function missingFrom(doc: ReturnType<typeof documentFor>, table: readonly OperationDef[]): string[] {
  return table.flatMap((op) =>
    op.methods.filter((m) => doc.paths[op.path]?.[m.toLowerCase()]?.operationId !== op.operationId).map((m) => `${m} ${op.path} (${op.operationId})`),
  );
}

const methodsOf = (doc: ReturnType<typeof documentFor>) => Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((v) => `${v.toUpperCase()} ${p}`));

describe('the OpenAPI document of the REST API', () => {
  const grouped = documentFor(catalogRoutes(new Set()));

  it('has one path and method per (path, method) of the operation table, plus the project proxy and the console', () => {
    expect(ALL_OPERATIONS.length).toBeGreaterThanOrEqual(54);
    expect(missingFrom(grouped, ALL_OPERATIONS)).toEqual([]);
    const expected = ALL_OPERATIONS.flatMap((op) => op.methods.map((m) => `${m} ${op.path}`));
    const extra = ['GET /projects/{project}/{proxy+}', 'POST /projects/{project}/{proxy+}', 'GET /console', 'GET /console/{file}'];
    expect(methodsOf(grouped).sort()).toEqual([...expected, ...extra].sort());
  });

  it('notices an operation missing from the document (the check can fail)', () => {
    const dropped = ALL_OPERATIONS.find((op) => op.operationId === 'QueryTable')!;
    const partial = documentFor(catalogRoutes(new Set(), ALL_OPERATIONS.filter((op) => op !== dropped)));
    expect(missingFrom(partial, ALL_OPERATIONS)).toEqual(['POST /v1/table/{id}/query (QueryTable)']);
  });

  it('refuses two routes for one path and method', () => {
    const route: ApiRoute = { path: '/v1/table', method: 'GET', operationId: 'ListAllTables', target: 'meta', authorized: true };
    expect(() => documentFor([route, { ...route, operationId: 'Other' }])).toThrow(/two routes for GET \/v1\/table/);
  });

  it('integrates each method as a Lambda proxy of its bundle function in grouped mode', () => {
    for (const op of ALL_OPERATIONS) {
      for (const m of op.methods) {
        expect(grouped.paths[op.path][m.toLowerCase()]['x-amazon-apigateway-integration'], op.operationId).toEqual({
          type: 'aws_proxy',
          httpMethod: 'POST',
          uri: `${PREFIX}${arn(op.bundle)}/invocations`,
          passthroughBehavior: 'when_no_match',
        });
      }
    }
    for (const verb of ['get', 'post']) expect(grouped.paths['/projects/{project}/{proxy+}'][verb]['x-amazon-apigateway-integration'].uri).toBe(`${PREFIX}${arn('data')}/invocations`);
    expect(grouped.paths['/projects/{project}/{proxy+}'].get.operationId).toBe(PROJECT_PROXY_OPERATIONS[0]);
  });

  it('maps each operation with its own function to that function in per-operation mode, in the same document', () => {
    const own = new Set(['CreateNamespace', 'QueryTable', 'GetTableStats']);
    const doc = documentFor(catalogRoutes(own));
    expect(missingFrom(doc, ALL_OPERATIONS)).toEqual([]);
    for (const op of ALL_OPERATIONS) {
      for (const m of op.methods) {
        const target = own.has(op.operationId) ? op.operationId : op.bundle;
        expect(doc.paths[op.path][m.toLowerCase()]['x-amazon-apigateway-integration'].uri, `${m} ${op.operationId}`).toBe(`${PREFIX}${arn(target)}/invocations`);
      }
    }
  });

  it('guards every route with the REQUEST authorizer but the console, and declares every path parameter', () => {
    for (const [p, item] of Object.entries(grouped.paths)) {
      for (const op of Object.values(item)) {
        const isConsole = (CONSOLE_OPERATIONS as readonly string[]).includes(op.operationId);
        expect(op.security, op.operationId).toEqual(isConsole ? [] : [{ [AUTHORIZER_NAME]: [] }]);
        expect((op.parameters ?? []).map((x: { name: string }) => x.name)).toEqual(pathParameters(p));
      }
    }
    expect(pathParameters('/projects/{project}/{proxy+}')).toEqual(['project', 'proxy']);
    const authorizer = grouped.components.securitySchemes[AUTHORIZER_NAME]['x-amazon-apigateway-authorizer'];
    expect(authorizer).toEqual({ type: 'request', authorizerUri: `${PREFIX}${arn('authorizer')}/invocations`, authorizerResultTtlInSeconds: 0 });
    const cached = documentFor(catalogRoutes(new Set()), 300).components.securitySchemes[AUTHORIZER_NAME]['x-amazon-apigateway-authorizer'];
    expect(cached).toMatchObject({ identitySource: 'method.request.header.x-api-key', authorizerResultTtlInSeconds: 300 });
  });

  it('carries the binary media types and a JSON gateway response per mapped error', () => {
    expect(grouped['x-amazon-apigateway-binary-media-types']).toEqual(BINARY_MEDIA_TYPES);
    const responses = grouped['x-amazon-apigateway-gateway-responses'];
    expect(Object.keys(responses).sort()).toEqual(GATEWAY_ERRORS.map((m) => m.type.responseType).sort());
    expect(responses.UNAUTHORIZED).toMatchObject({ statusCode: '401', responseParameters: { 'gatewayresponse.header.Content-Type': "'application/json'" } });
    expect(responses.DEFAULT_4XX).not.toHaveProperty('statusCode');
  });
});
