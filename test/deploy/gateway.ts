/**
 * API Gateway (REST, Lambda proxy) stand-in for the offline world: an HTTP server on loopback
 * that routes each request by the synthesized API's OpenAPI body (./spec-api.ts: its paths, the
 * authorizer its security scheme names, its binary media types and gateway responses), runs the
 * custom authorizer on the routes that name it, and invokes the integrated function with a proxy
 * event that keeps the encoded path. The official client can then drive the deployed artifacts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { World } from './world.js';
import { isBinaryBody, matchRoute, type SpecApi } from './spec-api.js';

export interface Gateway {
  readonly url: string;
  /** `METHOD encoded-path` of every request routed to a function, in arrival order. */
  readonly routed: readonly string[];
  close(): Promise<void>;
}

export async function startGateway(world: World): Promise<Gateway> {
  const api = world.api;
  if (!api) throw new Error('the assembly has no spec-defined REST API');
  const routed: string[] = [];
  const server: Server = createServer((req, res) => {
    const requestId = `gw-${Math.random().toString(36).slice(2)}`;
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://gateway');
      const encodedPath = url.pathname.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
      const parts = encodedPath.split('/').slice(1);
      const route = matchRoute(api.routes, req.method ?? 'GET', parts);
      const reply = (status: number, headers: Record<string, string>, payload: Buffer | string) => {
        res.writeHead(status, headers);
        res.end(payload);
      };
      const gatewayError = (type: string, fallbackStatus: number, message: string) => {
        const [status, payload] = gatewayResponse(api, type, fallbackStatus, message, requestId);
        reply(status, { 'content-type': 'application/json' }, payload);
      };
      if (!route) return gatewayError('MISSING_AUTHENTICATION_TOKEN', 403, 'Missing Authentication Token');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
      const query = Object.fromEntries(url.searchParams);
      let authorizerContext: Record<string, string> = {};
      if (route.authorized && api.authorizer) {
        // A REQUEST authorizer with identity sources refuses a request lacking one without calling it.
        const sources = (api.authorizer.identitySource ?? '').split(',').map((s) => s.trim()).filter(Boolean);
        const missing = sources.some((s) => s.startsWith('method.request.header.') && !headers[s.slice('method.request.header.'.length).toLowerCase()]);
        if (missing) return gatewayError('UNAUTHORIZED', 401, 'Unauthorized');
        const verdict = await world.invoke(api.authorizer.fn, {
          type: 'REQUEST',
          methodArn: `arn:aws:execute-api:us-east-1:123456789012:abc123/prod/${req.method}${encodedPath}`,
          headers,
          requestContext: { requestId },
        });
        // An authorizer that fails is a 500 (it fails closed), unless it failed with "Unauthorized", API Gateway's 401.
        if (!verdict.ok) {
          return /\bUnauthorized\b/.test(verdict.error) ? gatewayError('UNAUTHORIZED', 401, 'Unauthorized') : gatewayError('AUTHORIZER_FAILURE', 500, 'Authorizer error');
        }
        const policy = verdict.value as { policyDocument?: { Statement?: { Effect: string }[] }; context?: Record<string, string> } | null;
        if (policy?.policyDocument?.Statement?.[0]?.Effect !== 'Allow') {
          return gatewayError('ACCESS_DENIED', 403, 'User is not authorized to access this resource');
        }
        authorizerContext = policy.context ?? {};
      }
      const binary = isBinaryBody(headers['content-type'], api.binaryMediaTypes);
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
        pathParameters: pathParametersOf(route.segments, parts),
        stageVariables: null,
        body: body.length === 0 ? null : binary ? body.toString('base64') : body.toString('utf8'),
        isBase64Encoded: body.length > 0 && binary,
        requestContext: { resourcePath: route.template, httpMethod: req.method, path: `/prod${encodedPath}`, stage: 'prod', requestId, authorizer: authorizerContext },
      };
      routed.push(`${req.method} ${encodedPath}`);
      const result = await world.invoke(route.fn, event);
      // A function error (or a malformed proxy answer) is API Gateway's 502.
      if (!result.ok) return gatewayError('DEFAULT_5XX', 502, 'Internal server error');
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
    routed,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** What API Gateway sends for an error of its own: the document's gateway response for the type, else its DEFAULT_4XX/5XX. */
function gatewayResponse(api: SpecApi, type: string, status: number, message: string, requestId: string): [number, string] {
  const fallback = status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
  const spec = api.gatewayResponses[type] ?? api.gatewayResponses[fallback];
  if (!spec) return [status, JSON.stringify({ message })];
  const body = spec.template.replaceAll('$context.requestId', requestId).replaceAll('$context.error.messageString', JSON.stringify(message));
  return [Number(spec.statusCode ?? status), body];
}

/** Decoded path parameters, as API Gateway passes them (`proxy` for the greedy `{proxy+}`). */
function pathParametersOf(segments: readonly string[], parts: readonly string[]): Record<string, string> | null {
  const out: Record<string, string> = {};
  segments.forEach((s, i) => {
    if (!s.startsWith('{')) return;
    const greedy = s.endsWith('+}');
    const name = s.slice(1, greedy ? -2 : -1);
    out[name] = decodeURIComponent(greedy ? parts.slice(i).join('/') : parts[i]);
  });
  return Object.keys(out).length ? out : null;
}
