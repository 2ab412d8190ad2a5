/**
 * The REST API as API Gateway imports it: the OpenAPI body of the template's
 * `AWS::ApiGateway::RestApi` (infra/constructs/openapi.ts), with its intrinsics resolved, read
 * into what the stand-in (./gateway.ts) and the world (./world.ts) need: each route with the
 * function its Lambda proxy integration names, the REQUEST authorizer, the binary media types and
 * the gateway responses. Nothing here knows the operation table: the routes are the template's.
 */
import type { Assembly, FunctionArtifact } from './assembly.js';

export interface SpecRoute {
  /** The path template (`/v1/table/{id}/create`). */
  readonly template: string;
  readonly segments: readonly string[];
  readonly method: string;
  readonly operationId: string;
  readonly fn: FunctionArtifact;
  /** Whether the route names the authorizer (the console's files do not). */
  readonly authorized: boolean;
}

export interface SpecGatewayResponse {
  readonly statusCode?: string;
  readonly template: string;
}

export interface SpecApi {
  readonly stack: string;
  readonly routes: readonly SpecRoute[];
  readonly authorizer?: { readonly fn: FunctionArtifact; readonly identitySource?: string; readonly name: string };
  readonly binaryMediaTypes: readonly string[];
  readonly gatewayResponses: Readonly<Record<string, SpecGatewayResponse>>;
}

interface Operation {
  operationId?: string;
  security?: Record<string, unknown>[];
  'x-amazon-apigateway-integration'?: { type?: string; uri?: string };
}

interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, { 'x-amazon-apigateway-authorizer'?: { authorizerUri?: string; identitySource?: string } }> };
  'x-amazon-apigateway-binary-media-types'?: string[];
  'x-amazon-apigateway-gateway-responses'?: Record<string, { statusCode?: string; responseTemplates?: Record<string, string> }>;
}

const VERBS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** The function a Lambda integration URI invokes, or an error naming the URI. */
function functionOf(uri: string | undefined, byArn: ReadonlyMap<string, FunctionArtifact>, where: string): FunctionArtifact {
  const arn = uri ? /functions\/(arn:[^/]+)\/invocations/.exec(uri)?.[1] : undefined;
  const fn = arn ? byArn.get(arn) : undefined;
  if (!fn) throw new Error(`${where}: integration ${uri} names no function of the assembly`);
  return fn;
}

/** Every spec-defined REST API of the assembly (rask deploys one). */
export function readSpecApis(assembly: Assembly, byArn: ReadonlyMap<string, FunctionArtifact>): SpecApi[] {
  const apis: SpecApi[] = [];
  for (const stack of assembly.stacks) {
    for (const [id, r] of Object.entries(stack.resources)) {
      if (r.Type !== 'AWS::ApiGateway::RestApi' || !r.Properties?.Body) continue;
      const doc = assembly.resolve(stack.stackName, r.Properties.Body) as Document;
      const routes: SpecRoute[] = [];
      for (const [template, item] of Object.entries(doc.paths ?? {})) {
        for (const [verb, op] of Object.entries(item)) {
          if (!VERBS.has(verb)) continue;
          const integration = op['x-amazon-apigateway-integration'];
          const where = `${id} ${verb.toUpperCase()} ${template}`;
          if (integration?.type !== 'aws_proxy') throw new Error(`${where}: not a Lambda proxy integration (${integration?.type})`);
          routes.push({
            template,
            segments: template.split('/').slice(1),
            method: verb.toUpperCase(),
            operationId: op.operationId ?? `${verb.toUpperCase()} ${template}`,
            fn: functionOf(integration.uri, byArn, where),
            authorized: (op.security ?? []).some((s) => Object.keys(s).length > 0),
          });
        }
      }
      const schemes = Object.entries(doc.components?.securitySchemes ?? {});
      const [name, scheme] = schemes.find(([, s]) => s['x-amazon-apigateway-authorizer']) ?? [];
      const authorizer = scheme?.['x-amazon-apigateway-authorizer'];
      apis.push({
        stack: stack.stackName,
        routes,
        authorizer:
          authorizer && name
            ? { name, fn: functionOf(authorizer.authorizerUri, byArn, `${id} authorizer ${name}`), identitySource: authorizer.identitySource }
            : undefined,
        binaryMediaTypes: doc['x-amazon-apigateway-binary-media-types'] ?? [],
        gatewayResponses: Object.fromEntries(
          Object.entries(doc['x-amazon-apigateway-gateway-responses'] ?? {}).map(([type, g]) => [
            type,
            { statusCode: g.statusCode, template: g.responseTemplates?.['application/json'] ?? '' },
          ]),
        ),
      });
    }
  }
  return apis;
}

/**
 * The route API Gateway picks for an encoded path: segments match literally or as a parameter
 * (`{id}`, one segment, still encoded) or greedily (`{proxy+}`, the rest); where several match, a
 * literal segment beats a parameter at the first place they differ, as API Gateway prefers the
 * most specific resource.
 */
export function matchRoute(routes: readonly SpecRoute[], method: string, parts: readonly string[]): SpecRoute | undefined {
  const matches = routes.filter((r) => {
    if (r.method !== method) return false;
    const greedy = r.segments.at(-1)?.endsWith('+}');
    if (greedy ? parts.length < r.segments.length : parts.length !== r.segments.length) return false;
    return r.segments.every((s, i) => s.startsWith('{') || s === parts[i]);
  });
  const rank = (r: SpecRoute) => r.segments.map((s) => (s.endsWith('+}') ? '2' : s.startsWith('{') ? '1' : '0')).join('');
  return matches.sort((a, b) => rank(a).localeCompare(rank(b)))[0];
}

/** Whether API Gateway hands this request body to Lambda base64-encoded (a missing type counts as JSON). */
export function isBinaryBody(contentType: string | undefined, binaryMediaTypes: readonly string[]): boolean {
  const type = (contentType?.split(';')[0]?.trim() || 'application/json').toLowerCase();
  return binaryMediaTypes.some((t) => t === '*/*' || t.toLowerCase() === type || (t.endsWith('/*') && type.startsWith(t.slice(0, -1).toLowerCase())));
}
