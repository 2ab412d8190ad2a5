import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { HttpRequest, HttpResponse } from '../contract/http.js';
import type { Router } from './router.js';

/** One file of the console's static bundle (docs/console.md). */
export interface ConsoleAsset {
  readonly type: string;
  readonly body: Buffer;
}

/** The bundle by file name (`index.html`, `app.js`, `app.css`); built once, on first use. */
export type ConsoleAssets = () => Promise<ReadonlyMap<string, ConsoleAsset>>;

/**
 * The console's own headers: nothing but this origin's files may run or be fetched (no CDN, no
 * inline script), it may not be framed, and no Referer carries a deep link elsewhere
 * (docs/console.md, "Security").
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const CONSOLE_PATH = /^(.*)\/console(?:\/([A-Za-z0-9._-]*))?$/;

/**
 * Answers `GET /console/…` from the bundle and hands everything else to the API's router:
 * the console is served by rask itself, on the API's origin, so it needs no CORS and no CDN
 * (issue #31). `/console` and `/console/` both serve the page, whose file names are relative,
 * so it works under any base path (an API Gateway stage, a custom domain's base path). Deep links are the
 * URL's fragment, which never reaches a server; every other name is a 404 in the API's shape.
 */
export function withConsole(router: Router, assets: ConsoleAssets): Router {
  return async (request) => {
    const answer = await consoleAnswer(request, assets);
    return answer ?? router(request);
  };
}

/** The console's answer to a request, or undefined when the request is not the console's. */
export async function consoleAnswer(request: HttpRequest, assets: ConsoleAssets): Promise<HttpResponse | undefined> {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const m = CONSOLE_PATH.exec(request.rawPath);
  if (!m || m[1]!.includes('/v1')) return undefined;
  const files = await assets();
  const asset = files.get(m[2] === undefined || m[2] === '' ? 'index.html' : m[2]);
  if (!asset) return undefined;
  // At `/console` (no slash) the page's relative file names would resolve beside it, so they
  // are given the `console/` step; a redirect would need API Gateway to route `/console/`.
  const body = m[2] === undefined ? Buffer.from(asset.body.toString('utf8').replaceAll('="app.', '="console/app.')) : asset.body;
  return {
    status: 200,
    headers: { ...CONSOLE_HEADERS, 'content-type': asset.type, 'cache-control': 'no-cache' },
    body: method === 'HEAD' ? Buffer.alloc(0) : body,
  };
}

const TYPES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * The bundle as files in `dir`, read once on first use: what the metadata function serves on AWS,
 * where infra/bundling.ts writes the built console beside the function's code. A missing
 * directory serves nothing (every /console path falls through to the API's 404).
 */
export function consoleAssetsIn(dir: string): ConsoleAssets {
  let read: Promise<ReadonlyMap<string, ConsoleAsset>> | undefined;
  return () =>
    (read ??= Promise.all(
      Object.entries(TYPES).map(async ([name, type]) => [name, { type, body: await readFile(path.join(dir, name)) }] as const),
    ).then(
      (entries) => new Map(entries),
      () => new Map(),
    ));
}
