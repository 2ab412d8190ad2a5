/**
 * API Gateway (REST, Lambda proxy) stand-in for the offline world: an HTTP server on loopback
 * that matches each request against the synthesized API's resource paths, runs the custom
 * authorizer the template names (its Deny becomes 401 with the catalog's error body, as the
 * stack's gateway responses do), and invokes the integrated function with a proxy event that
 * keeps the encoded path. The official client can then drive the deployed artifacts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { World } from './world.js';
import type { FunctionArtifact } from './assembly.js';

interface Route {
  readonly segments: readonly string[];
  readonly method: string;
  readonly fn: FunctionArtifact;
  readonly template: string;
}

export interface Gateway {
  readonly url: string;
  close(): Promise<void>;
}

export async function startGateway(world: World): Promise<Gateway> {
  const routes = apiRoutes(world);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://gateway');
      const encodedPath = url.pathname.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
      const parts = encodedPath.split('/').slice(1);
      const route = routes.find(
        (r) => r.method === req.method && r.segments.length === parts.length && r.segments.every((s, i) => s.startsWith('{') || s === parts[i]),
      );
      const reply = (status: number, headers: Record<string, string>, payload: Buffer | string) => {
        res.writeHead(status, headers);
        res.end(payload);
      };
      if (!route) return reply(404, { 'content-type': 'application/json' }, JSON.stringify({ error: `no route ${req.method} ${encodedPath}`, code: 0 }));
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
      const query = Object.fromEntries(url.searchParams);
      const requestId = `gw-${Math.random().toString(36).slice(2)}`;
      let authorizerContext: Record<string, string> = {};
      if (world.authorizer) {
        const verdict = await world.invoke(world.authorizer, {
          type: 'REQUEST',
          methodArn: `arn:aws:execute-api:us-east-1:123456789012:abc123/prod/${req.method}${encodedPath}`,
          headers,
          requestContext: { requestId },
        });
        const policy = verdict.ok ? (verdict.value as { policyDocument: { Statement: { Effect: string }[] }; context?: Record<string, string> }) : undefined;
        if (policy?.policyDocument.Statement[0]?.Effect !== 'Allow') {
          return reply(401, { 'content-type': 'application/json' }, JSON.stringify({ error: 'unauthenticated', code: 16 }));
        }
        authorizerContext = policy.context ?? {};
      }
      const textual = (headers['content-type'] ?? '').includes('json');
      const event = {
        resource: route.template,
        path: encodedPath,
        httpMethod: req.method,
        headers,
        multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
        queryStringParameters: Object.keys(query).length ? query : null,
        multiValueQueryStringParameters: Object.keys(query).length
          ? Object.fromEntries([...new Set(url.searchParams.keys())].map((k) => [k, url.searchParams.getAll(k)]))
          : null,
        pathParameters: null,
        stageVariables: null,
        body: body.length === 0 ? null : textual ? body.toString('utf8') : body.toString('base64'),
        isBase64Encoded: body.length > 0 && !textual,
        requestContext: { resourcePath: route.template, httpMethod: req.method, path: `/prod${encodedPath}`, stage: 'prod', requestId, authorizer: authorizerContext },
      };
      const result = await world.invoke(route.fn, event);
      if (!result.ok) return reply(502, { 'content-type': 'application/json' }, JSON.stringify({ error: 'Internal server error', code: 18 }));
      const answer = result.value as { statusCode: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean };
      reply(answer.statusCode, answer.headers ?? {}, Buffer.from(answer.body ?? '', answer.isBase64Encoded ? 'base64' : 'utf8'));
    })().catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error), code: 18 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Every API method of the template with its full resource path (`/v1/table/{id}/create`). */
function apiRoutes(world: World): Route[] {
  const routes: Route[] = [];
  for (const stack of world.assembly.stacks) {
    const resources = stack.resources;
    const pathOf = (resourceRef: unknown): string => {
      const id = (resourceRef as { Ref?: string }).Ref;
      if (!id) return ''; // the API's root resource
      const r = resources[id]?.Properties as { ParentId: unknown; PathPart: string } | undefined;
      if (!r) throw new Error(`API resource ${id} not in ${stack.stackName}`);
      return `${pathOf(r.ParentId)}/${r.PathPart}`;
    };
    for (const [, r] of Object.entries(resources)) {
      if (r.Type !== 'AWS::ApiGateway::Method') continue;
      const props = r.Properties as { HttpMethod: string; ResourceId: unknown; OperationName?: string };
      const route = props.OperationName ? world.routes.get(props.OperationName) : undefined;
      if (!route) continue;
      const template = pathOf(props.ResourceId);
      routes.push({ segments: template.split('/').slice(1), method: props.HttpMethod, fn: route.fn, template });
    }
  }
  return routes;
}
