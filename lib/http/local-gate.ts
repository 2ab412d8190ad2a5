import { isIP } from 'node:net';
import { ErrorCode } from '../errors.js';
import { TransportError } from './transport-errors.js';

/**
 * The local server's door policy against drive-by requests, decided on the headers alone before
 * anything is routed or read (docs/governance.md, "Threat model of the local server"):
 *
 * - **Host** must be one of the server's own names with its port — `localhost` or any IP
 *   literal (a DNS-rebound page can only send its attacker's *name*), or RASK_HOST — or a name
 *   in RASK_ALLOWED_HOSTS (`name` matches any port, `name:port` that port: a reverse proxy).
 * - **Origin**, when a browser sends one, must be the server's own (same host as `Host`) or in
 *   RASK_ALLOWED_ORIGINS; `null` (sandboxed frames, file:// pages) never is. Without an Origin, a
 *   browser's `Sec-Fetch-Site: cross-site | same-site` is refused too.
 * - An allowed foreign origin gets CORS: its preflight is answered and its answers carry
 *   `Access-Control-Allow-Origin`, so a browser app the operator trusts can call the API.
 *
 * API Gateway has its own host and no CORS, so this is not the router's concern.
 */
export interface LocalGateOptions {
  /** The port the server listens on (the real one when RASK_PORT is 0). */
  readonly port: number;
  /** RASK_HOST. */
  readonly host: string;
  readonly allowedHosts?: readonly string[];
  readonly allowedOrigins?: readonly string[];
}

export type GateVerdict =
  | { readonly kind: 'pass'; readonly headers: Record<string, string> }
  | { readonly kind: 'preflight'; readonly headers: Record<string, string> }
  | { readonly kind: 'refuse'; readonly error: TransportError };

type Headers = Readonly<Record<string, string | string[] | undefined>>;

const refuse = (message: string): GateVerdict => ({ kind: 'refuse', error: new TransportError(ErrorCode.PermissionDenied, 403, message) });

/** `name[:port]` → lower-cased host and port ('' when absent), or undefined when it is not a host. */
function parseHost(value: string): { name: string; port: string } | undefined {
  if (!/^[A-Za-z0-9.\-:[\]]{1,300}$/.test(value)) return undefined;
  try {
    const url = new URL(`http://${value}`);
    return { name: url.hostname, port: url.port };
  } catch {
    return undefined;
  }
}

export function localGate(options: LocalGateOptions): (method: string, headers: Headers) => GateVerdict {
  const port = String(options.port);
  const own = new Set(['localhost', parseHost(options.host)?.name ?? options.host.toLowerCase()]);
  const allowedHosts = (options.allowedHosts ?? []).map(parseHost).filter((h) => h !== undefined);
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map((o) => new URL(o).origin));

  const hostAllowed = ({ name, port: given }: { name: string; port: string }) =>
    ((own.has(name) || isIP(name.replace(/^\[|\]$/g, '')) !== 0) && (given || '80') === port) ||
    allowedHosts.some((h) => h.name === name && (h.port === '' || h.port === (given || '80')));

  return (method, headers) => {
    const one = (name: string) => {
      const v = headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const hostHeader = one('host');
    const host = hostHeader === undefined ? undefined : parseHost(hostHeader);
    if (hostHeader !== undefined && (!host || !hostAllowed(host))) {
      return refuse(
        `Host ${JSON.stringify(hostHeader.slice(0, 100))} is not a name of this server (localhost, an IP address or RASK_HOST, with port ${port}): refused against DNS rebinding; list a reverse proxy's name in RASK_ALLOWED_HOSTS`,
      );
    }
    const origin = one('origin');
    if (origin === undefined) {
      const site = one('sec-fetch-site');
      if (site === 'cross-site' || site === 'same-site') return refuse(`a ${site} browser request is refused (it carries no Origin to check)`);
      return { kind: 'pass', headers: {} };
    }
    let parsed: URL | undefined;
    try {
      parsed = origin === 'null' ? undefined : new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed && host && parsed.host === (host.port ? `${host.name}:${host.port}` : host.name)) return { kind: 'pass', headers: {} };
    if (!parsed || !allowedOrigins.has(parsed.origin)) {
      return refuse(
        `requests from origin ${JSON.stringify(origin.slice(0, 100))} are refused: a web page may not drive this server; list a trusted browser app's origin in RASK_ALLOWED_ORIGINS`,
      );
    }
    const cors = { 'access-control-allow-origin': parsed.origin, vary: 'origin' };
    if (method.toUpperCase() === 'OPTIONS' && one('access-control-request-method') !== undefined) {
      return {
        kind: 'preflight',
        headers: {
          ...cors,
          'access-control-allow-methods': 'GET, POST',
          'access-control-allow-headers': one('access-control-request-headers') ?? 'content-type',
          'access-control-max-age': '600',
        },
      };
    }
    return { kind: 'pass', headers: cors };
  };
}
