/**
 * The REST API as one OpenAPI 3 document, generated from the operation table
 * (lib/contract/operations.ts) with API Gateway's extensions: a Lambda proxy integration per
 * method, the REQUEST authorizer, binary media types and the gateway responses. Deployed as a
 * `SpecRestApi` body (./api.ts), the routes cost no CloudFormation resources: before, each path
 * segment was an `AWS::ApiGateway::Resource` and each (path, method) an `AWS::ApiGateway::Method`
 * (docs/deploy.md, "Resource counts").
 *
 * Pure data in, pure data out (CDK tokens stay tokens), so a test can read the document without
 * synthesizing a stack.
 */
import { ALL_OPERATIONS, type OperationDef } from '../../lib/contract/operations.js';
import { consoleRoutes } from './console-routes.js';

/** One method of the document: its path template, verb, name and the function that serves it. */
export interface ApiRoute {
  readonly path: string;
  readonly method: string;
  /** The method's `operationId` (the operation table's id, or a console / project-proxy name). */
  readonly operationId: string;
  /** Who serves it: a key of `OpenApiInput.functions`. */
  readonly target: string;
  /** False for the console's public files (no authorizer). */
  readonly authorized: boolean;
}

/** How an API Gateway-generated error is answered (the JSON error contract). */
export interface GatewayResponseSpec {
  readonly type: string;
  readonly statusCode?: string;
  readonly template: string;
}

export interface OpenApiInput {
  readonly title: string;
  readonly description: string;
  readonly routes: readonly ApiRoute[];
  /** Lambda ARN (a token is fine) of each route target. */
  readonly functions: Readonly<Record<string, string>>;
  readonly authorizer: { readonly functionArn: string; readonly cacheSeconds: number };
  readonly binaryMediaTypes: readonly string[];
  readonly gatewayResponses: readonly GatewayResponseSpec[];
  /** `arn:<partition>:apigateway:<region>:lambda:path/2015-03-31/functions/` (tokens allowed). */
  readonly lambdaUriPrefix: string;
}

/** The security scheme's name in the document (the REQUEST Lambda authorizer). */
export const AUTHORIZER_NAME = 'AdminKey';

/** The project base-path proxy's methods (docs/governance.md, "Project base URIs"). */
export const PROJECT_PROXY_OPERATIONS = ['ProjectBaseUriGET', 'ProjectBaseUriPOST'] as const;

/**
 * Every route of the API: one per (path, method) of the operation table, served by the
 * operation's own function when it has one (per-operation mode) or by its bundle's; the project
 * base-path proxy (`/projects/{project}/{proxy+}`, one route per verb instead of a copy of every
 * operation) to the data function, which serves every operation; and the web console's two
 * public routes to the metadata function (its bundle carries the built files).
 */
export function catalogRoutes(ownFunction: ReadonlySet<string>, operations: readonly OperationDef[] = ALL_OPERATIONS): ApiRoute[] {
  const routes: ApiRoute[] = [];
  for (const op of operations) {
    const target = ownFunction.has(op.operationId) ? op.operationId : op.bundle;
    for (const method of op.methods) routes.push({ path: op.path, method, operationId: op.operationId, target, authorized: true });
  }
  for (const [i, method] of (['GET', 'POST'] as const).entries()) {
    routes.push({ path: '/projects/{project}/{proxy+}', method, operationId: PROJECT_PROXY_OPERATIONS[i], target: 'data', authorized: true });
  }
  return [...routes, ...consoleRoutes()];
}

/** The path parameters of a template (`{proxy+}` is the parameter `proxy`). */
export function pathParameters(template: string): string[] {
  return [...template.matchAll(/\{([^}+]+)\+?\}/g)].map((m) => m[1]);
}

export function openApiDocument(input: OpenApiInput): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of input.routes) {
    const functionArn = input.functions[route.target];
    if (functionArn === undefined) throw new Error(`route ${route.method} ${route.path}: no function for target ${route.target}`);
    const item = (paths[route.path] ??= {});
    const verb = route.method.toLowerCase();
    if (item[verb]) throw new Error(`two routes for ${route.method} ${route.path}`);
    const parameters = pathParameters(route.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    item[verb] = {
      operationId: route.operationId,
      ...(parameters.length ? { parameters } : {}),
      // An empty list is OpenAPI's "no authorization" (the console's public files).
      security: route.authorized ? [{ [AUTHORIZER_NAME]: [] }] : [],
      responses: { default: { description: 'The catalog answer (Lambda proxy); errors follow the JSON error contract.' } },
      'x-amazon-apigateway-integration': {
        type: 'aws_proxy',
        // A Lambda proxy integration is always invoked with POST, whatever the client's verb.
        httpMethod: 'POST',
        uri: `${input.lambdaUriPrefix}${functionArn}/invocations`,
        passthroughBehavior: 'when_no_match',
      },
    };
  }
  const authorizer: Record<string, unknown> = {
    type: 'request',
    authorizerUri: `${input.lambdaUriPrefix}${input.authorizer.functionArn}/invocations`,
    authorizerResultTtlInSeconds: input.authorizer.cacheSeconds,
  };
  // API Gateway can only cache by identity sources that are ALL present, and a request lacking
  // one is refused without calling the authorizer: accepting x-api-key OR a Bearer token means no
  // identity source (and no cache), unless the deployment turns the cache on for x-api-key.
  if (input.authorizer.cacheSeconds > 0) authorizer.identitySource = 'method.request.header.x-api-key';
  return {
    openapi: '3.0.1',
    info: { title: input.title, description: input.description, version: '1' },
    paths,
    components: {
      securitySchemes: {
        [AUTHORIZER_NAME]: {
          type: 'apiKey',
          name: 'x-api-key',
          in: 'header',
          'x-amazon-apigateway-authtype': 'custom',
          'x-amazon-apigateway-authorizer': authorizer,
        },
      },
    },
    'x-amazon-apigateway-binary-media-types': [...input.binaryMediaTypes],
    'x-amazon-apigateway-gateway-responses': Object.fromEntries(
      input.gatewayResponses.map((r) => [
        r.type,
        {
          ...(r.statusCode ? { statusCode: r.statusCode } : {}),
          responseParameters: { 'gatewayresponse.header.Content-Type': "'application/json'" },
          responseTemplates: { 'application/json': r.template },
        },
      ]),
    ),
  };
}
