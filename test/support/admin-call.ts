import { randomUUID } from 'node:crypto';
import type { Router } from '../../lib/http/router.js';

export interface AdminAnswer {
  readonly status: number;
  readonly body: { code?: number; error?: string; [k: string]: unknown };
  readonly headers: Record<string, string>;
  /** The body as sent (a bare value or an empty answer included). */
  readonly text: string;
}

/**
 * One request straight into a router as API Gateway hands it to the function for the bootstrap
 * admin key (the authorizer's context), with a JSON body and the `$` delimiter: how the tests of
 * the AWS compositions call a door without an HTTP server.
 */
export async function callAsAdmin(router: Router, method: 'GET' | 'POST', path: string, body?: unknown, query = ''): Promise<AdminAnswer> {
  const res = await router({
    method,
    rawPath: path,
    rawQuery: `delimiter=%24${query}`,
    headers: { 'content-type': 'application/json' },
    authorizer: { principal: 'admin', platformAdmin: 'true', via: 'admin-key' },
    body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
    requestId: randomUUID(),
  });
  const text = res.body.toString();
  return { status: res.status, body: text ? JSON.parse(text) : {}, headers: (res.headers ?? {}) as Record<string, string>, text };
}
