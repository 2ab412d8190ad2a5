import type { ApiRoute } from './openapi.js';

/** The console's API methods, named apart from the operation table's (docs/console.md). */
export const CONSOLE_OPERATIONS = ['ConsolePage', 'ConsoleFile'] as const;

/**
 * The web console on the deployed API (docs/console.md): `GET /console` and
 * `GET /console/{file}`, served by the metadata function (its bundle carries the built files,
 * infra/bundling.ts) on the API's own origin, so the console needs no CORS and no CDN. These two
 * routes have no authorizer: the files are public and carry no secret, and every API call the
 * page makes is authorized as any client's.
 */
export function consoleRoutes(): ApiRoute[] {
  return [
    { path: '/console', method: 'GET', operationId: CONSOLE_OPERATIONS[0], target: 'meta', authorized: false },
    { path: '/console/{file}', method: 'GET', operationId: CONSOLE_OPERATIONS[1], target: 'meta', authorized: false },
  ];
}
