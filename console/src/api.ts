/**
 * The console's one way to the API (docs/console.md): same origin, the project's base URI, the
 * credential from memory. The credential lives in this module's variable only — never in
 * localStorage, sessionStorage, a cookie or the URL — so closing or reloading the tab signs out.
 */

export type Credential = { readonly kind: 'key' | 'token'; readonly secret: string };

let credential: Credential | undefined;

export const signIn = (c: Credential) => {
  credential = c;
};
export const signOut = () => {
  credential = undefined;
};
export const signedIn = () => credential !== undefined;

/** Where the API is: the path before `/console/` (an API Gateway stage, a custom domain's base path). */
export const apiBase = (): string => {
  const at = location.pathname.lastIndexOf('/console');
  return at < 0 ? '' : location.pathname.slice(0, at);
};

export interface Answer<T = any> {
  readonly status: number;
  readonly ok: boolean;
  readonly body: T;
  /** The error body's message (`{code, error}`), for the page to show as the API said it. */
  readonly error?: string;
  readonly code?: number;
}

/** An object id in a path: parts URI-encoded, joined by a delimiter none of them contains. */
export function idPath(parts: readonly string[]): { path: string; delimiter: string } {
  let delimiter = '$';
  while (parts.some((p) => p.includes(delimiter))) delimiter += '$';
  if (parts.length === 0) return { path: encodeURIComponent(delimiter), delimiter };
  return { path: parts.map(encodeURIComponent).join(encodeURIComponent(delimiter)), delimiter };
}

/** `v1/…` of a project (its base URI, docs/governance.md); `query` is appended as given. */
export async function call<T = any>(
  project: string | undefined,
  method: 'GET' | 'POST',
  path: string,
  options: { query?: Record<string, string | undefined>; body?: unknown } = {},
): Promise<Answer<T>> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) q.set(k, v);
  const prefix = project === undefined ? '' : `/projects/${encodeURIComponent(project)}`;
  const url = `${apiBase()}${prefix}/v1/${path}${q.size ? `?${q}` : ''}`;
  const headers: Record<string, string> = {};
  if (credential?.kind === 'key') headers['x-api-key'] = credential.secret;
  if (credential?.kind === 'token') headers.authorization = `Bearer ${credential.secret}`;
  if (method === 'POST') headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: method === 'POST' ? JSON.stringify(options.body ?? {}) : undefined, credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    return { status: 0, ok: false, body: undefined as T, error: `the server could not be reached (${(err as Error).message})` };
  }
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = { error: text };
  }
  if (res.ok) return { status: res.status, ok: true, body };
  return { status: res.status, ok: false, body, error: typeof body?.error === 'string' ? body.error : `HTTP ${res.status}`, code: body?.code };
}

/** A table's or namespace's door: `table/<id>/<door>` with its delimiter. */
export function objectCall<T = any>(
  project: string,
  kind: 'table' | 'namespace',
  id: readonly string[],
  method: 'GET' | 'POST',
  door: string,
  options: { query?: Record<string, string | undefined>; body?: unknown } = {},
): Promise<Answer<T>> {
  const { path, delimiter } = idPath(id);
  return call<T>(project, method, `${kind}/${path}/${door}`, { ...options, query: { ...options.query, delimiter } });
}
